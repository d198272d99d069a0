//! The calls real programs make first, by their behaviour: the context stack, plain
//! memory and the allocation around an address, the synchronous and unified copies, 16-
//! and 32-bit memsets, pointer attributes, stream getters and callbacks, the per-thread
//! twins, and `cuGetProcAddress` handing out functions that work.

mod common;

use common::{check, init_and_use};
use cuda::exports::*;
use cuda::types::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const MIB: usize = 1 << 20;

#[test]
fn the_context_stack_pushes_pops_and_destroys() {
    std::thread::spawn(|| {
        let primary = init_and_use(0);
        let mut created: CUcontext = null_mut();
        // SAFETY: throughout this block, valid out-pointers and handles the library returned.
        unsafe {
            check(cuCtxCreate_v4(&mut created, null_mut(), CU_CTX_SCHED_MASK & 4, 0), "cuCtxCreate_v4");
            let mut cur: CUcontext = null_mut();
            check(cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent");
            assert_eq!(cur, created, "a created context is made current");
            let mut flags = 0;
            check(cuCtxGetFlags(&mut flags), "cuCtxGetFlags");
            assert_eq!(flags, 4);
            let (mut a, mut b) = (0u64, 0u64);
            check(cuCtxGetId(created, &mut a), "cuCtxGetId");
            check(cuCtxGetId(primary, &mut b), "cuCtxGetId");
            assert_ne!(a, b);
            let mut popped: CUcontext = null_mut();
            check(cuCtxPopCurrent_v2(&mut popped), "cuCtxPopCurrent_v2");
            assert_eq!(popped, created);
            check(cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent");
            assert_eq!(cur, primary, "the context below is current again");
            check(cuCtxPushCurrent_v2(created), "cuCtxPushCurrent_v2");
            let mut dev = -1;
            check(cuCtxGetDevice(&mut dev), "cuCtxGetDevice");
            assert_eq!(dev, 0);
            let mut version = 0;
            check(cuCtxGetApiVersion(null_mut(), &mut version), "cuCtxGetApiVersion");
            assert_eq!(version, 13050);
            check(cuCtxDestroy_v2(created), "cuCtxDestroy_v2");
            check(cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent");
            assert_eq!(cur, primary, "destroying the current context pops it");
            assert_eq!(cuCtxSetCurrent(created), CUDA_ERROR_INVALID_CONTEXT, "a destroyed context");
            let (mut state_flags, mut active) = (9, 9);
            check(cuDevicePrimaryCtxGetState(0, &mut state_flags, &mut active), "cuDevicePrimaryCtxGetState");
            assert_eq!(active, 1);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn plain_memory_copies_and_memsets_round_trip() {
    std::thread::spawn(|| {
        init_and_use(0);
        // SAFETY: throughout this block, valid out-pointers, buffers of the lengths given, and
        // memory the library handed out.
        unsafe {
            let mut d: CUdeviceptr = 0;
            check(cuMemAlloc_v2(&mut d, 3 * MIB), "cuMemAlloc_v2");
            let (mut base, mut size) = (0, 0);
            check(cuMemGetAddressRange_v2(&mut base, &mut size, d + 12345), "cuMemGetAddressRange_v2");
            assert_eq!(base, d);
            assert!(size >= 3 * MIB);
            let src: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8).collect();
            check(cuMemcpyHtoD_v2(d, src.as_ptr().cast(), MIB), "cuMemcpyHtoD_v2");
            check(cuMemcpyDtoD_v2(d + MIB as u64, d, MIB), "cuMemcpyDtoD_v2");
            let mut back = vec![0u8; MIB];
            check(cuMemcpy(back.as_mut_ptr() as u64, d + MIB as u64, MIB), "cuMemcpy (unified)");
            assert_eq!(back, src, "a synchronous copy to host memory is complete when it returns");
            check(cuMemsetD16_v2(d, 0xBEEF, 8), "cuMemsetD16_v2");
            check(cuMemsetD32_v2(d + 16, 0x0102_0304, 4), "cuMemsetD32_v2");
            let mut out = [0u8; 32];
            check(cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), d, 32), "cuMemcpyDtoH_v2");
            let halves: Vec<u16> = out[..16].chunks(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect();
            assert_eq!(halves, vec![0xBEEF; 8]);
            let words: Vec<u32> = out[16..].chunks(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
            assert_eq!(words, vec![0x0102_0304; 4]);

            // Pointer attributes of cuMemAlloc memory and of pool memory.
            let mut mem_type = 0u32;
            check(cuPointerGetAttribute((&raw mut mem_type).cast(), CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), "type");
            assert_eq!(mem_type, CU_MEMORYTYPE_DEVICE);
            let mut pool_of: CUmemoryPool = SENTINEL_POOL;
            check(cuPointerGetAttribute((&raw mut pool_of).cast(), CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d), "pool");
            assert!(pool_of.is_null(), "cuMemAlloc memory has no pool");
            let mut p: CUdeviceptr = 0;
            check(cuMemAllocAsync(&mut p, 4096, null_mut()), "cuMemAllocAsync");
            let mut default_pool: CUmemoryPool = null_mut();
            check(cuDeviceGetDefaultMemPool(&mut default_pool, 0), "the default pool");
            let attrs = [
                CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            ];
            let (mut pool, mut ordinal, mut start) = (null_mut::<c_void>(), -1i32, 0u64);
            let mut data = [(&raw mut pool).cast::<c_void>(), (&raw mut ordinal).cast(), (&raw mut start).cast()];
            check(cuPointerGetAttributes(3, attrs.as_ptr(), data.as_mut_ptr(), p + 100), "cuPointerGetAttributes");
            assert_eq!((pool, ordinal, start), (default_pool.cast(), 0, p));
            check(cuMemFreeAsync(p, null_mut()), "cuMemFreeAsync");
            check(cuMemFree_v2(d), "cuMemFree_v2");
            assert_eq!(cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE, "freed twice");
            assert_eq!(cuMemGetAddressRange_v2(&mut base, &mut size, d), CUDA_ERROR_NOT_FOUND);
        }
    })
    .join()
    .unwrap();
}

const SENTINEL_POOL: CUmemoryPool = 0x5e47 as CUmemoryPool;

extern "C" fn count_callback(_: CUstream, status: CUresult, data: *mut c_void) {
    assert_eq!(status, CUDA_SUCCESS);
    // SAFETY: the test passes a live `AtomicU32`.
    unsafe { &*data.cast::<std::sync::atomic::AtomicU32>() }.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn stream_getters_callbacks_and_per_thread_twins() {
    std::thread::spawn(|| {
        let ctx = init_and_use(0);
        // SAFETY: throughout this block, valid out-pointers and handles the library returned.
        unsafe {
            let mut s: CUstream = null_mut();
            check(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            let (mut flags, mut prio, mut id, mut dev) = (9, 9, 0, -1);
            check(cuStreamGetFlags(s, &mut flags), "cuStreamGetFlags");
            check(cuStreamGetPriority(s, &mut prio), "cuStreamGetPriority");
            check(cuStreamGetId(s, &mut id), "cuStreamGetId");
            check(cuStreamGetDevice(s, &mut dev), "cuStreamGetDevice");
            assert_eq!((flags, prio, dev), (CU_STREAM_NON_BLOCKING, 0, 0));
            assert!(id > 2);
            let mut c: CUcontext = null_mut();
            check(cuStreamGetCtx(s, &mut c), "cuStreamGetCtx");
            assert_eq!(c, ctx);
            let mut capturing = 9;
            check(cuStreamIsCapturing(s, &mut capturing), "cuStreamIsCapturing");
            assert_eq!(capturing, CU_STREAM_CAPTURE_STATUS_NONE);
            let hits = std::sync::atomic::AtomicU32::new(0);
            let data = (&raw const hits).cast_mut().cast();
            check(cuStreamAddCallback(s, Some(count_callback), data, 0), "cuStreamAddCallback");
            check(cuStreamAddCallback_ptsz(null_mut(), Some(count_callback), data, 0), "on the per-thread stream");
            check(cuStreamSynchronize(s), "cuStreamSynchronize");
            check(cuStreamSynchronize_ptsz(null_mut()), "the per-thread stream");
            assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 2);
            // NULL in a _ptsz twin is the per-thread stream (id 2), in the plain call the
            // legacy one.
            check(cuStreamGetId_ptsz(null_mut(), &mut id), "cuStreamGetId_ptsz");
            assert_eq!(id, 2);
            check(cuStreamGetId(null_mut(), &mut id), "cuStreamGetId");
            assert_eq!(id, 0);
            check(cuStreamDestroy(s), "cuStreamDestroy");
        }
    })
    .join()
    .unwrap();
}

#[test]
fn cu_get_proc_address_hands_out_working_functions() {
    type Version = unsafe extern "C" fn(*mut i32) -> CUresult;
    let mut pfn: *mut c_void = null_mut();
    let mut status = -1;
    // SAFETY: a NUL-terminated name and writable out-values; the function handed out for
    // "cuDriverGetVersion" has its C signature.
    unsafe {
        check(
            cuGetProcAddress_v2(c"cuDriverGetVersion".as_ptr(), &mut pfn, 13000, 0, &mut status),
            "cuGetProcAddress_v2",
        );
        assert_eq!(status, CU_GET_PROC_ADDRESS_SUCCESS);
        let f: Version = std::mem::transmute(pfn);
        let mut v = 0;
        check(f(&mut v), "the function handed out");
        assert_eq!(v, 13050);
        // A function that is only a stub answers not supported, naming itself.
        check(cuGetProcAddress_v2(c"cuModuleLoad".as_ptr(), &mut pfn, 13000, 0, null_mut()), "cuModuleLoad");
        let stub: unsafe extern "C" fn() -> CUresult = std::mem::transmute(pfn);
        assert_eq!(stub(), CUDA_ERROR_NOT_SUPPORTED);
        assert!(cuda::last_error_message().unwrap_or_default().starts_with("cuModuleLoad: "));
    }
}
