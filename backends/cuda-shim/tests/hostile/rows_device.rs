//! Rows for `cuInit`, the driver version, devices and their attributes, primary contexts
//! and the current context.

use super::*;

pub(super) fn init_device_context_rows(t: &mut Table) {
    t.add("cuInit", "flags 1", VALUE, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuInit(1) }
    });
    t.add("cuInit", "again, flags 0", OK, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuInit(0) }
    });
    t.add("cuDriverGetVersion", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDriverGetVersion(null_mut()) }
    });
    t.add("cuDeviceGetCount", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGetCount(null_mut()) }
    });
    t.add("cuDeviceGet", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGet(null_mut(), 0) }
    });
    for ordinal in [-1, 3, i32::MAX, i32::MIN] {
        t.add("cuDeviceGet", format!("ordinal {ordinal}"), DEVICE, move |_| {
            let mut d = SENTINEL as CUdevice;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuDeviceGet(&mut d, ordinal) }, d as usize)
        });
    }
    let get_attr = |attrib: i32, dev: CUdevice| {
        let mut v = SENTINEL as i32;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuDeviceGetAttribute(&mut v, attrib, dev) }, v as usize)
    };
    t.add("cuDeviceGetAttribute", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceGetAttribute(null_mut(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0) }
    });
    for attrib in [0, -5, 1, 16, 75, 100_000] {
        t.add("cuDeviceGetAttribute", format!("attribute {attrib}"), VALUE, move |_| get_attr(attrib, 0));
    }
    for dev in [-1, 3] {
        t.add("cuDeviceGetAttribute", format!("device {dev}"), DEVICE, move |_| get_attr(115, dev));
    }
    t.add("cuDeviceGetAttribute", "115 on device 2", OK, move |_| get_attr(115, 2));
    t.add("cuDevicePrimaryCtxRetain", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDevicePrimaryCtxRetain(null_mut(), 0) }
    });
    for dev in [-1, 3] {
        t.add("cuDevicePrimaryCtxRetain", format!("device {dev}"), DEVICE, move |_| {
            let mut c = SENTINEL as CUcontext;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuDevicePrimaryCtxRetain(&mut c, dev) }, c as usize)
        });
    }
    for dev in [-1, 3] {
        t.add("cuDevicePrimaryCtxRelease_v2", format!("device {dev}"), DEVICE, move |_| {
            // SAFETY: takes an integer only.
            unsafe { cuDevicePrimaryCtxRelease_v2(dev) }
        });
    }
    t.add("cuDevicePrimaryCtxRelease_v2", "device 2, every retain released", CONTEXT, |_| {
        // SAFETY: takes an integer only.
        unsafe { cuDevicePrimaryCtxRelease_v2(2) }
    });
    for (input, h) in bad_handles(Kind::Stream).into_iter().filter(|(n, _)| !n.contains("context")) {
        let input = if input == "a destroyed handle" { "a destroyed stream".to_string() } else { input };
        t.add("cuCtxSetCurrent", input, CONTEXT, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuCtxSetCurrent(f.h(h) as CUcontext) }
        });
    }
    t.add("cuCtxSetCurrent", "device 2's released primary context", CONTEXT, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { cuCtxSetCurrent(f.released_ctx as CUcontext) }
    });
    t.fresh("cuCtxSetCurrent", "NULL (clears)", OK, |_| {
        // SAFETY: null clears the current context.
        unsafe { cuCtxSetCurrent(null_mut()) }
    });
    t.add("cuCtxGetCurrent", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuCtxGetCurrent(null_mut()) }
    });
    t.fresh("cuCtxGetCurrent", "no current context: NULL", OK, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuCtxGetCurrent(&mut c) };
        assert!(c.is_null(), "no current context reads as NULL, got {c:p}");
        rc
    });
    t.fresh("cuCtxSynchronize", "without a current context", CONTEXT, |_| {
        // SAFETY: takes nothing.
        unsafe { cuCtxSynchronize() }
    });
}
