//! Rows for the calls real programs make first (contexts, plain memory, the synchronous
//! and unified copies, the 16- and 32-bit memsets, pointer attributes, stream getters,
//! callbacks, `cuGetProcAddress`) and for every `_ptsz`/`_ptds` twin.

use super::*;
use std::ffi::{c_int, c_uint};

const NOT_FOUND: CUresult = CUDA_ERROR_NOT_FOUND;
const AFFINITY: CUresult = CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;

/// A garbage context handle.
const BAD_CTX: usize = 0xdead_beef;

extern "C" fn no_callback(_: CUstream, _: CUresult, _: *mut c_void) {}
extern "C" fn no_host_fn(_: *mut c_void) {}

/// Peer access: null and out-of-range devices, flags, garbage and same-device contexts,
/// enabling twice and disabling what is not enabled (the driver's 704 and 705).
pub(super) fn peer_rows(t: &mut Table) {
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuDeviceCanAccessPeer", "null", VALUE, |_| unsafe { cuDeviceCanAccessPeer(null_mut(), 0, 1) });
    for (dev, peer) in [(99, 0), (0, 99), (-1, 0), (0, c_int::MIN)] {
        t.add("cuDeviceCanAccessPeer", format!("devices {dev} and {peer}"), DEVICE, move |_| {
            let mut can = SENTINEL as c_int;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuDeviceCanAccessPeer(&mut can, dev, peer) }, can as usize)
        });
    }
    t.add("cuDeviceCanAccessPeer", "a device and itself (0, as the driver answers)", OK, |_| {
        let mut can = 5;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuDeviceCanAccessPeer(&mut can, 0, 0) };
        if can == 0 { rc } else { VALUE }
    });
    for (entry, enable) in [("cuCtxEnablePeerAccess", true), ("cuCtxDisablePeerAccess", false)] {
        let call = move |ctx: usize| {
            // SAFETY: the context is looked up, never dereferenced.
            unsafe {
                if enable {
                    cuCtxEnablePeerAccess(ctx as CUcontext, 0)
                } else {
                    cuCtxDisablePeerAccess(ctx as CUcontext)
                }
            }
        };
        t.add(entry, "garbage peer context", CONTEXT, move |_| call(BAD_CTX));
        t.add(entry, "null peer context", CONTEXT, move |_| call(0));
        t.add(entry, "the current device's own context", DEVICE, move |fx| call(fx.ctx));
        t.fresh(entry, "without a current context", CONTEXT, move |fx| call(fx.released_ctx));
    }
    // SAFETY: the context is looked up, never dereferenced.
    t.add("cuCtxEnablePeerAccess", "flags 1", VALUE, |fx| unsafe {
        cuCtxEnablePeerAccess(fx.released_ctx as CUcontext, 1)
    });
    t.add("cuCtxDisablePeerAccess", "access never enabled (705)", 705, |_| {
        let mut peer: CUcontext = null_mut();
        // SAFETY: valid out-pointers and handles the library made.
        unsafe {
            check(cuDevicePrimaryCtxRetain(&mut peer, 1), "cuDevicePrimaryCtxRetain(1)");
            let rc = cuCtxDisablePeerAccess(peer);
            check(cuDevicePrimaryCtxRelease_v2(1), "cuDevicePrimaryCtxRelease_v2(1)");
            rc
        }
    });
    t.add("cuCtxEnablePeerAccess", "enabled twice (704)", 704, |_| {
        let mut peer: CUcontext = null_mut();
        // SAFETY: valid out-pointers and handles the library made.
        unsafe {
            check(cuDevicePrimaryCtxRetain(&mut peer, 1), "cuDevicePrimaryCtxRetain(1)");
            check(cuCtxEnablePeerAccess(peer, 0), "cuCtxEnablePeerAccess");
            let rc = cuCtxEnablePeerAccess(peer, 0);
            check(cuCtxDisablePeerAccess(peer), "cuCtxDisablePeerAccess");
            check(cuDevicePrimaryCtxRelease_v2(1), "cuDevicePrimaryCtxRelease_v2(1)");
            rc
        }
    });
}

pub(super) fn context_rows(t: &mut Table) {
    // Every row below: null or garbage pointers and handles are refused before any use;
    // out-pointers are valid where given.
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxCreate", "null pctx", VALUE, |_| unsafe { cuCtxCreate(null_mut(), 0, 0) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxCreate_v2", "null pctx", VALUE, |_| unsafe { cuCtxCreate_v2(null_mut(), 0, 0) });
    t.add("cuCtxCreate_v2", "two scheduling flags", VALUE, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v2(&mut c, 3, 0) }, c as usize)
    });
    t.add("cuCtxCreate_v2", "flags 0x100", VALUE, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v2(&mut c, 0x100, 0) }, c as usize)
    });
    t.add("cuCtxCreate_v2", "device 99", DEVICE, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v2(&mut c, 0, 99) }, c as usize)
    });
    t.add("cuCtxCreate_v3", "one affinity parameter", AFFINITY, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v3(&mut c, null_mut(), 1, 0, 0) }, c as usize)
    });
    t.add("cuCtxCreate_v3", "numParams -1", VALUE, |_| {
        let mut c = SENTINEL as CUcontext;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v3(&mut c, null_mut(), -1, 0, 0) }, c as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxCreate_v4", "null pctx", VALUE, |_| unsafe { cuCtxCreate_v4(null_mut(), null_mut(), 0, 0) });
    t.add("cuCtxCreate_v4", "graphics parameters", SUPPORT, |_| {
        let mut c = SENTINEL as CUcontext;
        let mut p = CUctxCreateParams {
            execAffinityParams: null_mut(),
            numExecAffinityParams: 0,
            cigParams: SENTINEL as *mut c_void,
        };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxCreate_v4(&mut c, &mut p, 0, 0) }, c as usize)
    });
    for (name, f) in [
        ("cuCtxDestroy", cuCtxDestroy as unsafe extern "C" fn(CUcontext) -> CUresult),
        ("cuCtxDestroy_v2", cuCtxDestroy_v2),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "garbage", CONTEXT, move |_| unsafe { f(BAD_CTX as CUcontext) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "NULL", CONTEXT, move |_| unsafe { f(null_mut()) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a primary context", CONTEXT, move |fx| unsafe { f(fx.ctx as CUcontext) });
    }
    for (name, f) in [
        ("cuCtxPushCurrent", cuCtxPushCurrent as unsafe extern "C" fn(CUcontext) -> CUresult),
        ("cuCtxPushCurrent_v2", cuCtxPushCurrent_v2),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "NULL", VALUE, move |_| unsafe { f(null_mut()) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "garbage", CONTEXT, move |_| unsafe { f(BAD_CTX as CUcontext) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a released primary context", CONTEXT, move |fx| unsafe { f(fx.released_ctx as CUcontext) });
    }
    for (name, f) in [
        ("cuCtxPopCurrent", cuCtxPopCurrent as unsafe extern "C" fn(*mut CUcontext) -> CUresult),
        ("cuCtxPopCurrent_v2", cuCtxPopCurrent_v2),
    ] {
        t.fresh(name, "an empty stack", CONTEXT, move |_| {
            let mut c = SENTINEL as CUcontext;
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            untouched(unsafe { f(&mut c) }, c as usize)
        });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxGetDevice", "null", VALUE, |_| unsafe { cuCtxGetDevice(null_mut()) });
    t.fresh("cuCtxGetDevice", "without a current context", CONTEXT, |_| {
        let mut d = SENTINEL as CUdevice;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxGetDevice(&mut d) }, d as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxGetDevice_v2", "null", VALUE, |fx| unsafe { cuCtxGetDevice_v2(null_mut(), fx.ctx as CUcontext) });
    t.add("cuCtxGetDevice_v2", "garbage context", CONTEXT, |_| {
        let mut d = SENTINEL as CUdevice;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxGetDevice_v2(&mut d, BAD_CTX as CUcontext) }, d as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxGetApiVersion", "null", VALUE, |_| unsafe { cuCtxGetApiVersion(null_mut(), null_mut()) });
    t.add("cuCtxGetApiVersion", "garbage context", CONTEXT, |_| {
        let mut v = SENTINEL as c_uint;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxGetApiVersion(BAD_CTX as CUcontext, &mut v) }, v as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxGetFlags", "null", VALUE, |_| unsafe { cuCtxGetFlags(null_mut()) });
    t.fresh("cuCtxGetFlags", "without a current context", CONTEXT, |_| {
        let mut v = SENTINEL as c_uint;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxGetFlags(&mut v) }, v as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxSetFlags", "flags 0x100", VALUE, |_| unsafe { cuCtxSetFlags(0x100) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxSetFlags", "spin and yield", VALUE, |_| unsafe { cuCtxSetFlags(3) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.fresh("cuCtxSetFlags", "without a current context", CONTEXT, |_| unsafe { cuCtxSetFlags(0) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxGetId", "null", VALUE, |_| unsafe { cuCtxGetId(null_mut(), null_mut()) });
    t.add("cuCtxGetId", "garbage context", CONTEXT, |_| {
        let mut v = SENTINEL as u64;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuCtxGetId(BAD_CTX as CUcontext, &mut v) }, v as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxSynchronize_v2", "garbage context", CONTEXT, |_| unsafe { cuCtxSynchronize_v2(BAD_CTX as CUcontext) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuCtxSynchronize_v2", "a released primary context", CONTEXT, |fx| unsafe {
        cuCtxSynchronize_v2(fx.released_ctx as CUcontext)
    });
    t.add("cuDevicePrimaryCtxGetState", "null flags", VALUE, |_| {
        let mut a = 0;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuDevicePrimaryCtxGetState(0, null_mut(), &mut a) }
    });
    t.add("cuDevicePrimaryCtxGetState", "device 99", DEVICE, |_| {
        let (mut f, mut a) = (0, 0);
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuDevicePrimaryCtxGetState(99, &mut f, &mut a) }
    });
    for (name, f) in [
        (
            "cuDevicePrimaryCtxSetFlags",
            cuDevicePrimaryCtxSetFlags as unsafe extern "C" fn(CUdevice, c_uint) -> CUresult,
        ),
        ("cuDevicePrimaryCtxSetFlags_v2", cuDevicePrimaryCtxSetFlags_v2),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "flags 0x100", VALUE, move |_| unsafe { f(0, 0x100) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "device -1", DEVICE, move |_| unsafe { f(-1, 0) });
    }
    for (name, f) in [
        ("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset as unsafe extern "C" fn(CUdevice) -> CUresult),
        ("cuDevicePrimaryCtxReset_v2", cuDevicePrimaryCtxReset_v2),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "device 99", DEVICE, move |_| unsafe { f(99) });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuDevicePrimaryCtxRelease", "device 99", DEVICE, |_| unsafe { cuDevicePrimaryCtxRelease(99) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuDeviceGetPCIBusId", "null", VALUE, |_| unsafe { cuDeviceGetPCIBusId(null_mut(), 16, 0) });
    t.add("cuDeviceGetPCIBusId", "len 0", VALUE, |_| {
        let mut b = [0 as std::ffi::c_char; 4];
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuDeviceGetPCIBusId(b.as_mut_ptr(), 0, 0) }
    });
    t.add("cuDeviceGetPCIBusId", "device 99", DEVICE, |_| {
        let mut b = [0 as std::ffi::c_char; 16];
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuDeviceGetPCIBusId(b.as_mut_ptr(), 16, 99) }
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuDeviceGetByPCIBusId", "null", VALUE, |_| unsafe {
        cuDeviceGetByPCIBusId(null_mut(), c"0000:01:00.0".as_ptr())
    });
    t.add("cuDeviceGetByPCIBusId", "no such bus", DEVICE, |_| {
        let mut d = SENTINEL as CUdevice;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuDeviceGetByPCIBusId(&mut d, c"0000:7f:00.0".as_ptr()) }, d as usize)
    });
}

pub(super) fn proc_address_rows(t: &mut Table) {
    t.add("cuGetProcAddress_v2", "null symbol", VALUE, |_| {
        let mut p = null_mut();
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuGetProcAddress_v2(std::ptr::null(), &mut p, 13000, 0, null_mut()) }
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuGetProcAddress_v2", "null pfn", VALUE, |_| unsafe {
        cuGetProcAddress_v2(c"cuMemAlloc".as_ptr(), null_mut(), 13000, 0, null_mut())
    });
    t.add("cuGetProcAddress_v2", "flags 4", VALUE, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        let rc = unsafe { cuGetProcAddress_v2(c"cuMemAlloc".as_ptr(), &mut p, 13000, 4, null_mut()) };
        assert!(p.is_null(), "pfn is NULL after a failure");
        rc
    });
    t.add("cuGetProcAddress_v2", "version -1", VALUE, |_| {
        let mut p = null_mut();
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuGetProcAddress_v2(c"cuMemAlloc".as_ptr(), &mut p, -1, 0, null_mut()) }
    });
    t.add("cuGetProcAddress_v2", "an unknown name", NOT_FOUND, |_| {
        let (mut p, mut status) = (SENTINEL as *mut c_void, -1);
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        let rc = unsafe { cuGetProcAddress_v2(c"cuNoSuchCall".as_ptr(), &mut p, 13000, 0, &mut status) };
        assert_eq!((p, status), (null_mut(), CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND));
        rc
    });
    t.add("cuGetProcAddress_v2", "a version before the first variant", NOT_FOUND, |_| {
        let (mut p, mut status) = (SENTINEL as *mut c_void, -1);
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        let rc = unsafe { cuGetProcAddress_v2(c"cuMemAllocAsync".as_ptr(), &mut p, 11000, 0, &mut status) };
        assert_eq!((p, status), (null_mut(), CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT));
        rc
    });
    t.add("cuGetProcAddress_v2", "a symbol name, not a base name", NOT_FOUND, |_| {
        let mut p = null_mut();
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuGetProcAddress_v2(c"cuMemAlloc_v2".as_ptr(), &mut p, 13000, 0, null_mut()) }
    });
    t.add("cuGetProcAddress", "null symbol", VALUE, |_| {
        let mut p = null_mut();
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuGetProcAddress(std::ptr::null(), &mut p, 13000, 0) }
    });
    t.add("cuGetProcAddress", "an unknown name", NOT_FOUND, |_| {
        let mut p = null_mut();
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuGetProcAddress(c"cuNoSuchCall".as_ptr(), &mut p, 13000, 0) }
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuGetExportTable", "null", VALUE, |_| unsafe { cuGetExportTable(null_mut(), std::ptr::null()) });
    t.add("cuGetExportTable", "any id", SUPPORT, |_| {
        let mut p = SENTINEL as *const c_void;
        let id = CUuuid { bytes: [0; 16] };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        let rc = unsafe { cuGetExportTable(&mut p, &id) };
        assert!(p.is_null());
        rc
    });
}

pub(super) fn stream_getter_rows(t: &mut Table) {
    type G<T> = unsafe extern "C" fn(CUstream, *mut T) -> CUresult;
    fn getter<T: Default + 'static>(t: &mut Table, name: &'static str, f: G<T>) {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null", VALUE, move |fx| unsafe { f(st(fx.s), null_mut()) });
        t.add(name, "a destroyed stream", HANDLE, move |fx| {
            let mut v = T::default();
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            unsafe { f(st(fx.dead_stream), &mut v) }
        });
        t.add(name, "garbage", HANDLE, move |_| {
            let mut v = T::default();
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            unsafe { f(st(0xdead_beef), &mut v) }
        });
    }
    getter::<c_int>(t, "cuStreamGetPriority", cuStreamGetPriority);
    getter::<c_int>(t, "cuStreamGetPriority_ptsz", cuStreamGetPriority_ptsz);
    getter::<c_uint>(t, "cuStreamGetFlags", cuStreamGetFlags);
    getter::<c_uint>(t, "cuStreamGetFlags_ptsz", cuStreamGetFlags_ptsz);
    getter::<u64>(t, "cuStreamGetId", cuStreamGetId);
    getter::<u64>(t, "cuStreamGetId_ptsz", cuStreamGetId_ptsz);
    getter::<CUdevice>(t, "cuStreamGetDevice", cuStreamGetDevice);
    getter::<CUdevice>(t, "cuStreamGetDevice_ptsz", cuStreamGetDevice_ptsz);
    getter::<c_int>(t, "cuStreamIsCapturing", cuStreamIsCapturing);
    getter::<c_int>(t, "cuStreamIsCapturing_ptsz", cuStreamIsCapturing_ptsz);
    for (name, f) in [("cuStreamGetCtx", cuStreamGetCtx as G<CUcontext>), ("cuStreamGetCtx_ptsz", cuStreamGetCtx_ptsz)]
    {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null", VALUE, move |fx| unsafe { f(st(fx.s), null_mut()) });
        t.add(name, "a destroyed stream", HANDLE, move |fx| {
            let mut c = null_mut();
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            unsafe { f(st(fx.dead_stream), &mut c) }
        });
    }
    type G2 = unsafe extern "C" fn(CUstream, *mut CUcontext, *mut *mut c_void) -> CUresult;
    for (name, f) in
        [("cuStreamGetCtx_v2", cuStreamGetCtx_v2 as G2), ("cuStreamGetCtx_v2_ptsz", cuStreamGetCtx_v2_ptsz)]
    {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null", VALUE, move |fx| unsafe { f(st(fx.s), null_mut(), null_mut()) });
        t.add(name, "a destroyed stream", HANDLE, move |fx| {
            let mut c = null_mut();
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            unsafe { f(st(fx.dead_stream), &mut c, null_mut()) }
        });
    }
    type Cb = unsafe extern "C" fn(CUstream, CUstreamCallback, *mut c_void, c_uint) -> CUresult;
    for (name, f) in
        [("cuStreamAddCallback", cuStreamAddCallback as Cb), ("cuStreamAddCallback_ptsz", cuStreamAddCallback_ptsz)]
    {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null callback", VALUE, move |fx| unsafe { f(st(fx.s), None, null_mut(), 0) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "flags 1", VALUE, move |fx| unsafe { f(st(fx.s), Some(no_callback), null_mut(), 1) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed stream", HANDLE, move |fx| unsafe {
            f(st(fx.dead_stream), Some(no_callback), null_mut(), 0)
        });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamDestroy", "a destroyed stream", HANDLE, |fx| unsafe { cuStreamDestroy(st(fx.dead_stream)) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamDestroy", "NULL (the default stream)", HANDLE, |_| unsafe { cuStreamDestroy(null_mut()) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamSynchronize_ptsz", "a destroyed stream", HANDLE, |fx| unsafe {
        cuStreamSynchronize_ptsz(st(fx.dead_stream))
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamSynchronize_ptsz", "NULL (the per-thread stream)", OK, |_| unsafe {
        cuStreamSynchronize_ptsz(null_mut())
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamQuery_ptsz", "a destroyed stream", HANDLE, |fx| unsafe { cuStreamQuery_ptsz(st(fx.dead_stream)) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamWaitEvent_ptsz", "a destroyed event", HANDLE, |fx| unsafe {
        cuStreamWaitEvent_ptsz(st(fx.s), ev(fx.dead_event), 0)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuStreamWaitEvent_ptsz", "flags 4", VALUE, |fx| unsafe { cuStreamWaitEvent_ptsz(st(fx.s), ev(fx.e), 4) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuEventRecord_ptsz", "a destroyed event", HANDLE, |fx| unsafe {
        cuEventRecord_ptsz(ev(fx.dead_event), st(fx.s))
    });
    type Rf = unsafe extern "C" fn(CUevent, CUstream, c_uint) -> CUresult;
    for (name, f) in [
        ("cuEventRecordWithFlags", cuEventRecordWithFlags as Rf),
        ("cuEventRecordWithFlags_ptsz", cuEventRecordWithFlags_ptsz),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "flags 2", VALUE, move |fx| unsafe { f(ev(fx.e), st(fx.s), 2) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed event", HANDLE, move |fx| unsafe { f(ev(fx.dead_event), st(fx.s), 0) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed stream", HANDLE, move |fx| unsafe { f(ev(fx.e), st(fx.dead_stream), 0) });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuEventDestroy", "a destroyed event", HANDLE, |fx| unsafe { cuEventDestroy(ev(fx.dead_event)) });
    type Hf = unsafe extern "C" fn(CUstream, CUhostFn, *mut c_void) -> CUresult;
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuLaunchHostFunc_ptsz", "null fn", VALUE, |fx| unsafe {
        (cuLaunchHostFunc_ptsz as Hf)(st(fx.s), None, null_mut())
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuLaunchHostFunc_ptsz", "a destroyed stream", HANDLE, |fx| unsafe {
        cuLaunchHostFunc_ptsz(st(fx.dead_stream), Some(no_host_fn), null_mut())
    });
    type Hf2 = unsafe extern "C" fn(CUstream, CUhostFn, *mut c_void, c_uint) -> CUresult;
    for (name, f) in
        [("cuLaunchHostFunc_v2", cuLaunchHostFunc_v2 as Hf2), ("cuLaunchHostFunc_v2_ptsz", cuLaunchHostFunc_v2_ptsz)]
    {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null fn", VALUE, move |fx| unsafe { f(st(fx.s), None, null_mut(), 0) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "syncMode 2", VALUE, move |fx| unsafe { f(st(fx.s), Some(no_host_fn), null_mut(), 2) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed stream", HANDLE, move |fx| unsafe {
            f(st(fx.dead_stream), Some(no_host_fn), null_mut(), 0)
        });
    }
}

pub(super) fn plain_memory_rows(t: &mut Table) {
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemAlloc_v2", "null", VALUE, |_| unsafe { cuMemAlloc_v2(null_mut(), 16) });
    t.add("cuMemAlloc_v2", "size 0", VALUE, |_| {
        let mut p = SENTINEL as CUdeviceptr;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemAlloc_v2(&mut p, 0) }, p as usize)
    });
    for size in [DEVICE_MEMORY + 1, usize::MAX] {
        t.add("cuMemAlloc_v2", format!("{size} bytes (more than the device)"), OOM, move |_| {
            let mut p = SENTINEL as CUdeviceptr;
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            untouched(unsafe { cuMemAlloc_v2(&mut p, size) }, p as usize)
        });
    }
    t.fresh("cuMemAlloc_v2", "without a current context", CONTEXT, |_| {
        let mut p = SENTINEL as CUdeviceptr;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemAlloc_v2(&mut p, 16) }, p as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemFree_v2", "0", VALUE, |_| unsafe { cuMemFree_v2(0) });
    for (what, addr) in bad_device_pointers(true) {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add("cuMemFree_v2", what, VALUE, move |fx| unsafe { cuMemFree_v2(addr(fx)) });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemFree_v2", "a live pool allocation", VALUE, |fx| unsafe { cuMemFree_v2(fx.a) });
    for (what, addr) in bad_device_pointers(false) {
        t.add("cuMemGetAddressRange_v2", what, NOT_FOUND, move |fx| {
            let (mut b, mut n) = (SENTINEL as CUdeviceptr, SENTINEL);
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            let rc = unsafe { cuMemGetAddressRange_v2(&mut b, &mut n, addr(fx)) };
            assert_eq!((b as usize, n), (SENTINEL, SENTINEL), "written after a failure");
            rc
        });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemHostAlloc", "null", VALUE, |_| unsafe { cuMemHostAlloc(null_mut(), 16, 0) });
    t.add("cuMemHostAlloc", "flags 8", VALUE, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemHostAlloc(&mut p, 16, 8) }, p as usize)
    });
    t.add("cuMemHostAlloc", "size 0", VALUE, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemHostAlloc(&mut p, 0, 0) }, p as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuPointerGetAttribute", "null data", VALUE, |fx| unsafe { cuPointerGetAttribute(null_mut(), 2, fx.a) });
    t.add("cuPointerGetAttribute", "a host heap address", VALUE, |fx| {
        let mut v = 0u32;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuPointerGetAttribute((&raw mut v).cast(), 2, fx.buf as u64) }
    });
    for attr in [0, 23, -1, i32::MAX] {
        t.add("cuPointerGetAttribute", format!("attribute {attr}"), VALUE, move |fx| {
            let mut v = 0u64;
            // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
            unsafe { cuPointerGetAttribute((&raw mut v).cast(), attr, fx.a) }
        });
    }
    t.add("cuPointerGetAttribute", "the host pointer of device memory", VALUE, |fx| {
        let mut v = 0u64;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuPointerGetAttribute((&raw mut v).cast(), 4, fx.a) }
    });
    t.add("cuPointerGetAttribute", "P2P tokens", SUPPORT, |fx| {
        let mut v = [0u64; 2];
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuPointerGetAttribute(v.as_mut_ptr().cast(), 5, fx.a) }
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuPointerGetAttributes", "null arrays with a count", VALUE, |fx| unsafe {
        cuPointerGetAttributes(1, std::ptr::null(), null_mut(), fx.a)
    });
    t.add("cuPointerGetAttributes", "attribute 99", VALUE, |fx| {
        let attrs = [2, 99];
        let mut v = [0u64; 2];
        let mut data = [(&raw mut v[0]).cast::<c_void>(), (&raw mut v[1]).cast()];
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuPointerGetAttributes(2, attrs.as_ptr(), data.as_mut_ptr(), fx.a) }
    });
    t.add("cuPointerGetAttributes", "an unknown address (defaults)", OK, |fx| {
        let attrs = [2, 9];
        let (mut ty, mut ord) = (7u32, 7i32);
        let mut data = [(&raw mut ty).cast::<c_void>(), (&raw mut ord).cast()];
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        let rc = unsafe { cuPointerGetAttributes(2, attrs.as_ptr(), data.as_mut_ptr(), fx.buf as u64) };
        assert_eq!((ty, ord), (0, -2));
        rc
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemPoolSetAccess", "a destroyed pool", HANDLE, |fx| unsafe {
        cuMemPoolSetAccess(pl(fx.dead_pool), std::ptr::null(), 0)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemPoolSetAccess", "null map with a count", VALUE, |fx| unsafe {
        cuMemPoolSetAccess(pl(fx.p), std::ptr::null(), 1)
    });
    t.add("cuMemPoolSetAccess", "no access for its own device", VALUE, |fx| {
        let d = CUmemAccessDesc { location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 }, flags: 0 };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolSetAccess(pl(fx.p), &d, 1) }
    });
    t.add("cuMemPoolSetAccess", "read-write for another device", SUPPORT, |fx| {
        let d = CUmemAccessDesc { location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 1 }, flags: 3 };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolSetAccess(pl(fx.p), &d, 1) }
    });
    t.add("cuMemPoolSetAccess", "device 99", DEVICE, |fx| {
        let d = CUmemAccessDesc { location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 99 }, flags: 0 };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolSetAccess(pl(fx.p), &d, 1) }
    });
    t.add("cuMemPoolGetAccess", "null", VALUE, |fx| {
        let mut loc = CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 };
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolGetAccess(null_mut(), pl(fx.p), &mut loc) }
    });
    t.add("cuMemPoolGetAccess", "location type 7", VALUE, |fx| {
        let (mut f, mut loc) = (0, CUmemLocation { type_: 7, id: 0 });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolGetAccess(&mut f, pl(fx.p), &mut loc) }
    });
    t.add("cuMemPoolGetAccess", "a destroyed pool", HANDLE, |fx| {
        let (mut f, mut loc) = (0, CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        unsafe { cuMemPoolGetAccess(&mut f, pl(fx.dead_pool), &mut loc) }
    });
    t.add("cuMemAllocAsync_ptsz", "a destroyed stream", HANDLE, |fx| {
        let mut p = SENTINEL as CUdeviceptr;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemAllocAsync_ptsz(&mut p, 16, st(fx.dead_stream)) }, p as usize)
    });
    t.add("cuMemAllocFromPoolAsync_ptsz", "a destroyed pool", HANDLE, |fx| {
        let mut p = SENTINEL as CUdeviceptr;
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        untouched(unsafe { cuMemAllocFromPoolAsync_ptsz(&mut p, 16, pl(fx.dead_pool), st(fx.s)) }, p as usize)
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemFreeAsync_ptsz", "0", VALUE, |fx| unsafe { cuMemFreeAsync_ptsz(0, st(fx.s)) });
}

pub(super) fn copy_twin_rows(t: &mut Table) {
    type HtoD = unsafe extern "C" fn(CUdeviceptr, *const c_void, usize) -> CUresult;
    type DtoH = unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize) -> CUresult;
    type DtoD = unsafe extern "C" fn(CUdeviceptr, CUdeviceptr, usize) -> CUresult;
    for (name, f) in [("cuMemcpyHtoD_v2", cuMemcpyHtoD_v2 as HtoD), ("cuMemcpyHtoD_v2_ptds", cuMemcpyHtoD_v2_ptds)] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null host", VALUE, move |fx| unsafe { f(fx.a, std::ptr::null(), 16) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "0 device", VALUE, move |fx| unsafe { f(0, fx.buf as *const c_void, 16) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a freed pointer", VALUE, move |fx| unsafe { f(fx.freed, fx.buf as *const c_void, 16) });
    }
    for (name, f) in [("cuMemcpyDtoH_v2", cuMemcpyDtoH_v2 as DtoH), ("cuMemcpyDtoH_v2_ptds", cuMemcpyDtoH_v2_ptds)] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "null host", VALUE, move |fx| unsafe { f(null_mut(), fx.a, 16) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "past the allocation", VALUE, move |fx| unsafe { f(fx.buf as *mut c_void, fx.a, GRAN + 1) });
    }
    for (name, f) in [
        ("cuMemcpyDtoD_v2", cuMemcpyDtoD_v2 as DtoD),
        ("cuMemcpyDtoD_v2_ptds", cuMemcpyDtoD_v2_ptds),
        ("cuMemcpy", cuMemcpy),
        ("cuMemcpy_ptds", cuMemcpy_ptds),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "0 destination", VALUE, move |fx| unsafe { f(0, fx.a, 16) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a freed source", VALUE, move |fx| unsafe { f(fx.a, fx.freed, 16) });
    }
    type Async4 = unsafe extern "C" fn(CUdeviceptr, CUdeviceptr, usize, CUstream) -> CUresult;
    for (name, f) in [
        ("cuMemcpyAsync", cuMemcpyAsync as Async4),
        ("cuMemcpyAsync_ptsz", cuMemcpyAsync_ptsz),
        ("cuMemcpyDtoDAsync_v2_ptsz", cuMemcpyDtoDAsync_v2_ptsz),
    ] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed stream", HANDLE, move |fx| unsafe { f(fx.a, fx.a + 64, 16, st(fx.dead_stream)) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "0 destination", VALUE, move |fx| unsafe { f(0, fx.a, 16, st(fx.s)) });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemcpyHtoDAsync_v2_ptsz", "a destroyed stream", HANDLE, |fx| unsafe {
        cuMemcpyHtoDAsync_v2_ptsz(fx.a, fx.buf as *const c_void, 16, st(fx.dead_stream))
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemcpyDtoHAsync_v2_ptsz", "a destroyed stream", HANDLE, |fx| unsafe {
        cuMemcpyDtoHAsync_v2_ptsz(fx.buf as *mut c_void, fx.a, 16, st(fx.dead_stream))
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD8Async_ptsz", "a destroyed stream", HANDLE, |fx| unsafe {
        cuMemsetD8Async_ptsz(fx.a, 1, 16, st(fx.dead_stream))
    });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD8_v2", "0", VALUE, |_| unsafe { cuMemsetD8_v2(0, 1, 16) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD8_v2", "a freed pointer", VALUE, |fx| unsafe { cuMemsetD8_v2(fx.freed, 1, 16) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD8_v2_ptds", "past the allocation", VALUE, |fx| unsafe { cuMemsetD8_v2_ptds(fx.a, 1, GRAN + 1) });
    type M16 = unsafe extern "C" fn(CUdeviceptr, u16, usize, CUstream) -> CUresult;
    for (name, f) in [("cuMemsetD16Async", cuMemsetD16Async as M16), ("cuMemsetD16Async_ptsz", cuMemsetD16Async_ptsz)] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "an odd address", VALUE, move |fx| unsafe { f(fx.a + 1, 1, 4, st(fx.s)) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a count that overflows", VALUE, move |fx| unsafe { f(fx.a, 1, usize::MAX, st(fx.s)) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "a destroyed stream", HANDLE, move |fx| unsafe { f(fx.a, 1, 4, st(fx.dead_stream)) });
    }
    type M32 = unsafe extern "C" fn(CUdeviceptr, c_uint, usize, CUstream) -> CUresult;
    for (name, f) in [("cuMemsetD32Async", cuMemsetD32Async as M32), ("cuMemsetD32Async_ptsz", cuMemsetD32Async_ptsz)] {
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "an address not 4-byte aligned", VALUE, move |fx| unsafe { f(fx.a + 2, 1, 4, st(fx.s)) });
        // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
        t.add(name, "past the allocation", VALUE, move |fx| unsafe { f(fx.a, 1, GRAN / 4 + 1, st(fx.s)) });
    }
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD16_v2", "an odd address", VALUE, |fx| unsafe { cuMemsetD16_v2(fx.a + 1, 1, 4) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD16_v2_ptds", "0", VALUE, |_| unsafe { cuMemsetD16_v2_ptds(0, 1, 4) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD32_v2", "a count that overflows", VALUE, |fx| unsafe { cuMemsetD32_v2(fx.a, 1, usize::MAX / 2) });
    // SAFETY: null or garbage arguments are refused before any use; out-pointers are valid.
    t.add("cuMemsetD32_v2_ptds", "a host heap address", VALUE, |fx| unsafe {
        cuMemsetD32_v2_ptds(fx.buf as u64, 1, 4)
    });
}
