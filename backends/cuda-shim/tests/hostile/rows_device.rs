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
    for attrib in [0, -5, 162, 100_000, i32::MIN] {
        t.add("cuDeviceGetAttribute", format!("attribute {attrib}"), VALUE, move |_| get_attr(attrib, 0));
    }
    for attrib in [1, 11, 17, 74, 77, 139, 161] {
        t.add("cuDeviceGetAttribute", format!("attribute {attrib} (in the profile)"), OK, move |_| get_attr(attrib, 0));
    }
    for dev in [-1, 3] {
        t.add("cuDeviceGetAttribute", format!("device {dev}"), DEVICE, move |_| get_attr(115, dev));
    }
    t.add("cuDeviceGetAttribute", "115 on device 2", OK, move |_| get_attr(115, 2));
    t.add("cuDeviceGetAttribute", "75 (compute capability major) is 9", OK, move |_| {
        let mut v = 0;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuDeviceGetAttribute(&mut v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) };
        assert_eq!(v, 9);
        rc
    });
    device_query_rows(t);
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
    t.fresh("cuCtxGetStreamPriorityRange", "without a current context", CONTEXT, |_| {
        let (mut least, mut greatest) = (SENTINEL as i32, SENTINEL as i32);
        // SAFETY: valid out-pointers.
        let rc = unsafe { cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
        assert_eq!((least, greatest), (SENTINEL as i32, SENTINEL as i32), "written without a context");
        rc
    });
    t.add("cuCtxGetStreamPriorityRange", "both null", OK, |_| {
        // SAFETY: null pointers are allowed and not written.
        unsafe { cuCtxGetStreamPriorityRange(null_mut(), null_mut()) }
    });
    t.add("cuCtxGetStreamPriorityRange", "one priority: 0 to 0", OK, |_| {
        let (mut least, mut greatest) = (7, 7);
        // SAFETY: valid out-pointers.
        let rc = unsafe { cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
        assert_eq!((least, greatest), (0, 0));
        rc
    });
}

/// Rows for the device's name, total memory and UUID.
fn device_query_rows(t: &mut Table) {
    t.add("cuDeviceGetName", "null name", VALUE, |_| {
        // SAFETY: a null buffer, refused before any write.
        unsafe { cuDeviceGetName(null_mut(), 64, 0) }
    });
    for len in [0, -1, i32::MIN] {
        t.add("cuDeviceGetName", format!("len {len}"), VALUE, move |_| {
            let mut buf = [b'x' as std::ffi::c_char; 8];
            // SAFETY: a valid buffer; the length is refused before any write.
            let rc = unsafe { cuDeviceGetName(buf.as_mut_ptr(), len, 0) };
            assert!(buf.iter().all(|&c| c == b'x' as std::ffi::c_char), "the buffer was written");
            rc
        });
    }
    for dev in [-1, 3] {
        t.add("cuDeviceGetName", format!("device {dev}"), DEVICE, move |_| {
            let mut buf = [0 as std::ffi::c_char; 64];
            // SAFETY: a valid buffer of 64 bytes.
            unsafe { cuDeviceGetName(buf.as_mut_ptr(), 64, dev) }
        });
    }
    t.add("cuDeviceGetName", "len 5 cuts the name and ends it", OK, |_| {
        let mut buf = [b'x' as std::ffi::c_char; 8];
        // SAFETY: a valid buffer of 8 bytes, 5 of them given.
        let rc = unsafe { cuDeviceGetName(buf.as_mut_ptr(), 5, 0) };
        // SAFETY: the call wrote a NUL within the first 5 bytes.
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes(), b"memp");
        assert_eq!(buf[5], b'x' as std::ffi::c_char, "nothing written past len");
        rc
    });
    t.add("cuDeviceTotalMem_v2", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuDeviceTotalMem_v2(null_mut(), 0) }
    });
    t.add("cuDeviceTotalMem_v2", "device 3", DEVICE, |_| {
        let mut v = SENTINEL;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuDeviceTotalMem_v2(&mut v, 3) }, v)
    });
    t.add("cuDeviceTotalMem_v2", "the device's memory", OK, |_| {
        let mut v = 0;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuDeviceTotalMem_v2(&mut v, 0) };
        assert_eq!(v, DEVICE_MEMORY);
        rc
    });
    type UuidFn = unsafe extern "C" fn(*mut CUuuid, CUdevice) -> CUresult;
    for (name, f) in [("cuDeviceGetUuid", cuDeviceGetUuid as UuidFn), ("cuDeviceGetUuid_v2", cuDeviceGetUuid_v2)] {
        t.add(name, "null", VALUE, move |_| {
            // SAFETY: a null out-pointer, refused before any write.
            unsafe { f(null_mut(), 0) }
        });
        t.add(name, "device -1", DEVICE, move |_| {
            let mut u = CUuuid { bytes: [7; 16] };
            // SAFETY: a valid out-pointer.
            let rc = unsafe { f(&mut u, -1) };
            assert_eq!(u.bytes, [7; 16], "the out-pointer was written");
            rc
        });
        t.add(name, "devices 0 and 2 differ", OK, move |_| {
            let (mut a, mut b) = (CUuuid { bytes: [0; 16] }, CUuuid { bytes: [0; 16] });
            // SAFETY: valid out-pointers.
            let rc = unsafe { f(&mut a, 0) }.max(unsafe { f(&mut b, 2) });
            assert_ne!(a, b);
            rc
        });
    }
}
