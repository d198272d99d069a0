//! What the calls do, through the C entry points: the driver's pool defaults and rules
//! (reuse on, any threshold, trim below USED, default and current pools), events and
//! streams (never-recorded events, queries while work is pending, ordering through
//! events, destroy with queued work), host memory (kept alive for queued copies, pageable
//! copies done at once), the result code names, and the calling thread's last message
//! (`mempool_cuda_shim_last_error`).
//!
//! Every test uses device 0's primary context, retained by each (so no test's release
//! deactivates another's), on the platform the environment sets (one device by default).

mod common;

use common::{check, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn pool(max_size: usize) -> CUmemoryPool {
    let props = CUmemPoolProps::device(0, max_size);
    let mut p: CUmemoryPool = null_mut();
    // SAFETY: valid out-pointer and props.
    check(unsafe { cuMemPoolCreate(&mut p, &props) }, "cuMemPoolCreate");
    p
}

fn stream() -> CUstream {
    let mut s: CUstream = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING) }, "cuStreamCreate");
    s
}

fn event(flags: u32) -> CUevent {
    let mut e: CUevent = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuEventCreate(&mut e, flags) }, "cuEventCreate");
    e
}

fn get64(p: CUmemoryPool, attr: i32) -> u64 {
    let mut v = 0u64;
    // SAFETY: a live pool and a writable `cuuint64_t`.
    check(unsafe { cuMemPoolGetAttribute(p, attr, (&raw mut v).cast()) }, "cuMemPoolGetAttribute");
    v
}

fn set64(p: CUmemoryPool, attr: i32, v: u64) -> CUresult {
    // SAFETY: a live pool and a readable `cuuint64_t`.
    unsafe { cuMemPoolSetAttribute(p, attr, (&raw const v).cast_mut().cast()) }
}

fn alloc(p: CUmemoryPool, size: usize, s: CUstream) -> CUdeviceptr {
    let mut d: CUdeviceptr = 0;
    // SAFETY: a valid out-pointer and live handles.
    check(unsafe { cuMemAllocFromPoolAsync(&mut d, size, p, s) }, "cuMemAllocFromPoolAsync");
    d
}

fn free(d: CUdeviceptr, s: CUstream) {
    // SAFETY: a live allocation and stream.
    check(unsafe { cuMemFreeAsync(d, s) }, "cuMemFreeAsync");
}

fn sync(s: CUstream) {
    // SAFETY: a live stream.
    check(unsafe { cuStreamSynchronize(s) }, "cuStreamSynchronize");
}

/// A gate a host function waits on until the test opens it.
struct Gate(Mutex<bool>, std::sync::Condvar);

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate(Mutex::new(false), std::sync::Condvar::new()))
    }
    fn open(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }
}

extern "C" fn wait_gate(data: *mut c_void) {
    // SAFETY: `data` is an `Arc<Gate>` turned into a raw pointer by `block`, taken back
    // once here.
    let gate = unsafe { Arc::from_raw(data.cast::<Gate>()) };
    let mut open = gate.0.lock().unwrap();
    while !*open {
        open = gate.1.wait(open).unwrap();
    }
}

/// Queues a host function on `s` that holds the stream until `gate` opens.
fn block(s: CUstream, gate: &Arc<Gate>) {
    let data = Arc::into_raw(Arc::clone(gate)).cast_mut().cast();
    // SAFETY: a live stream; `wait_gate` takes the `Arc` back.
    check(unsafe { cuLaunchHostFunc(s, Some(wait_gate), data) }, "cuLaunchHostFunc");
}

#[test]
fn pools_start_with_reuse_on_and_keep_any_threshold_they_are_given() {
    init_and_use(0);
    let p = pool(64 << 20);
    for attr in 1..=3 {
        let mut on: i32 = 7;
        // SAFETY: a live pool and a writable `int`.
        check(unsafe { cuMemPoolGetAttribute(p, attr, (&raw mut on).cast()) }, "a reuse attribute");
        assert_eq!(on, 1, "attribute {attr} is on at creation");
    }
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0);
    let s = stream();
    // UINT64_MAX keeps everything at synchronization.
    check(set64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX), "threshold UINT64_MAX");
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), u64::MAX);
    let d = alloc(p, 4 << 20, s);
    free(d, s);
    sync(s);
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 4 * MIB, "kept at synchronization");
    // The same stream reuses it.
    assert_eq!(alloc(p, 4 << 20, s), d, "same-stream reuse");
    free(d, s);
    // Threshold 0: the next synchronization releases everything.
    check(set64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0), "threshold 0");
    sync(s);
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0, "released at synchronization");
    // An int write of 0 turns a reuse attribute off.
    let off: i32 = 0;
    // SAFETY: a live pool and a readable `int`.
    check(unsafe { cuMemPoolSetAttribute(p, 2, (&raw const off).cast_mut().cast()) }, "attribute 2 off");
    let mut on: i32 = 7;
    // SAFETY: a live pool and a writable `int`.
    check(unsafe { cuMemPoolGetAttribute(p, 2, (&raw mut on).cast()) }, "attribute 2");
    assert_eq!(on, 0);
    // SAFETY: live handles.
    unsafe {
        check(cuMemPoolDestroy(p), "cuMemPoolDestroy");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

#[test]
fn a_trim_below_used_releases_what_it_can() {
    init_and_use(0);
    let p = pool(64 << 20);
    let s = stream();
    check(set64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX), "threshold");
    let live = alloc(p, 2 << 20, s);
    let cached = [alloc(p, 2 << 20, s), alloc(p, 4 << 20, s)];
    for d in cached {
        free(d, s);
    }
    sync(s);
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 8 * MIB);
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 2 * MIB);
    // SAFETY: a live pool.
    check(unsafe { cuMemPoolTrimTo(p, 0) }, "trim to 0, below USED");
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 2 * MIB, "down to USED");
    // High-water marks: reset with 0, never set to anything else.
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 8 * MIB);
    assert_eq!(set64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 5), CUDA_ERROR_INVALID_VALUE);
    check(set64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0), "reset");
    assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 2 * MIB, "reset to the current value");
    free(live, s);
    sync(s);
    // SAFETY: live handles.
    unsafe {
        check(cuMemPoolTrimTo(p, 0), "trim to 0");
        assert_eq!(get64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
        check(cuMemPoolDestroy(p), "cuMemPoolDestroy");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

#[test]
fn the_current_pool_serves_cu_mem_alloc_async_until_it_is_destroyed() {
    init_and_use(0);
    let (mut def, mut cur): (CUmemoryPool, CUmemoryPool) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        check(cuDeviceGetDefaultMemPool(&mut def, 0), "the default pool");
        check(cuDeviceGetMemPool(&mut cur, 0), "the current pool");
    }
    assert_eq!(def, cur);
    for attr in 1..=3 {
        let mut on: i32 = 0;
        // SAFETY: a live pool and a writable `int`.
        check(unsafe { cuMemPoolGetAttribute(def, attr, (&raw mut on).cast()) }, "a reuse attribute");
        assert_eq!(on, 1, "the default pool's attribute {attr}");
    }
    // This test alone changes the device's current pool: another test's cuMemAllocAsync
    // may take memory from `p` meanwhile, which it frees again.
    let p = pool(32 << 20);
    let s = stream();
    // SAFETY: live handles.
    check(unsafe { cuDeviceSetMemPool(0, p) }, "cuDeviceSetMemPool");
    let mut d: CUdeviceptr = 0;
    // SAFETY: a valid out-pointer and a live stream.
    check(unsafe { cuMemAllocAsync(&mut d, 1 << 20, s) }, "cuMemAllocAsync");
    assert!(get64(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= 2 * MIB, "served by the current pool");
    free(d, s);
    sync(s);
    // SAFETY: live handles and valid out-pointers.
    unsafe {
        check(cuMemPoolDestroy(p), "destroying the current pool");
        check(cuDeviceGetMemPool(&mut cur, 0), "the current pool");
        assert_eq!(cur, def, "the default pool is current again");
        assert_eq!(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE, "the default pool stays");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

#[test]
fn events_never_recorded_are_complete_and_queries_see_pending_work() {
    init_and_use(0);
    let (a, b) = (stream(), stream());
    let (start, end, untimed) =
        (event(CU_EVENT_DEFAULT), event(CU_EVENT_BLOCKING_SYNC), event(CU_EVENT_DISABLE_TIMING));
    let mut ms = 0.0f32;
    // SAFETY: live handles and valid out-pointers.
    unsafe {
        assert_eq!(cuEventQuery(start), CUDA_SUCCESS, "never recorded: complete");
        check(cuEventSynchronize(start), "never recorded: at once");
        assert_eq!(cuEventElapsedTime(&mut ms, start, end), CUDA_ERROR_INVALID_HANDLE, "never recorded");
        assert_eq!(cuStreamWaitEvent(b, start, 0), CUDA_SUCCESS, "nothing to wait for");
    }
    let gate = Gate::new();
    let order: Arc<Mutex<Vec<u32>>> = Arc::new(Mutex::new(Vec::new()));
    extern "C" fn note(data: *mut c_void) {
        // SAFETY: `data` is a `(Arc<Mutex<Vec<u32>>>, u32)` boxed by `noting`, taken once.
        let (order, tag) = *unsafe { Box::from_raw(data.cast::<(Arc<Mutex<Vec<u32>>>, u32)>()) };
        order.lock().unwrap().push(tag);
    }
    let noting = |s: CUstream, tag: u32| {
        let data = Box::into_raw(Box::new((Arc::clone(&order), tag))).cast();
        // SAFETY: a live stream; `note` takes the box back.
        check(unsafe { cuLaunchHostFunc(s, Some(note), data) }, "cuLaunchHostFunc");
    };
    // SAFETY: live handles.
    unsafe {
        check(cuEventRecord(start, a), "record start");
        block(a, &gate);
        noting(a, 1);
        check(cuEventRecord(end, a), "record end");
        check(cuEventRecord(untimed, a), "record untimed");
        check(cuStreamWaitEvent(b, end, 0), "b waits for a");
        noting(b, 2);
        assert_eq!(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
        assert_eq!(cuEventQuery(end), CUDA_ERROR_NOT_READY);
        assert_eq!(cuStreamQuery(b), CUDA_ERROR_NOT_READY, "b waits for a");
        assert_eq!(cuEventElapsedTime(&mut ms, start, end), CUDA_ERROR_NOT_READY);
        std::thread::sleep(Duration::from_millis(20));
        gate.open();
        sync(b);
        assert_eq!(*order.lock().unwrap(), [1, 2], "b's host function ran after a's");
        assert_eq!(cuEventQuery(end), CUDA_SUCCESS);
        assert_eq!(cuStreamQuery(a), CUDA_SUCCESS);
        check(cuEventElapsedTime(&mut ms, start, end), "cuEventElapsedTime");
        assert!(ms >= 10.0, "the host function held the stream for 20 ms: {ms}");
        assert_eq!(cuEventElapsedTime(&mut ms, start, untimed), CUDA_ERROR_INVALID_HANDLE, "no timing");
        for e in [start, end, untimed] {
            check(cuEventDestroy_v2(e), "cuEventDestroy");
        }
        for s in [a, b] {
            check(cuStreamDestroy_v2(s), "cuStreamDestroy");
        }
    }
}

#[test]
fn a_destroyed_stream_still_runs_its_queued_work() {
    init_and_use(0);
    let s = stream();
    let gate = Gate::new();
    let ran = Arc::new(AtomicU32::new(0));
    extern "C" fn count(data: *mut c_void) {
        // SAFETY: `data` is an `Arc<AtomicU32>` turned into a raw pointer below, taken once.
        let ran = unsafe { Arc::from_raw(data.cast::<AtomicU32>()) };
        ran.fetch_add(1, Ordering::AcqRel);
    }
    block(s, &gate);
    let data = Arc::into_raw(Arc::clone(&ran)).cast_mut().cast();
    // SAFETY: live handles; `count` takes the `Arc` back.
    unsafe {
        check(cuLaunchHostFunc(s, Some(count), data), "cuLaunchHostFunc");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy returns at once");
        assert_eq!(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE, "the handle is gone");
    }
    assert_eq!(ran.load(Ordering::Acquire), 0);
    gate.open();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ran.load(Ordering::Acquire) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(ran.load(Ordering::Acquire), 1, "the queued host function ran");
}

#[test]
fn page_locked_memory_outlives_its_free_until_queued_copies_ran_and_pageable_copies_are_done_at_once() {
    init_and_use(0);
    let p = pool(16 << 20);
    let s = stream();
    let d = alloc(p, 4096, s);
    let mut pinned: *mut c_void = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { cuMemAllocHost_v2(&mut pinned, 4096) }, "cuMemAllocHost");
    assert_eq!(pinned as usize % 4096, 0, "page-aligned");
    // SAFETY: 4096 writable bytes just allocated.
    unsafe { std::ptr::write_bytes(pinned.cast::<u8>(), 0x5a, 4096) };
    let gate = Gate::new();
    block(s, &gate);
    // SAFETY: live handles; the pinned buffer is kept until the copy has run.
    unsafe {
        check(cuMemcpyHtoDAsync_v2(d, pinned, 4096, s), "H2D from page-locked memory, queued");
        check(cuMemFreeHost(pinned), "freed before the copy ran");
        assert_eq!(cuMemFreeHost(pinned), CUDA_ERROR_INVALID_VALUE, "freed already");
    }
    gate.open();
    // A pageable copy waits for the stream's earlier work, and is done on return.
    let mut out = vec![0u8; 4096];
    // SAFETY: `out` holds 4096 writable bytes; `d` is live.
    check(unsafe { cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), d, 4096, s) }, "D2H into pageable memory");
    assert!(out.iter().all(|&b| b == 0x5a), "the copy from the freed page-locked buffer read its data");
    // SAFETY: `d` is live; the memset and copy run in stream order.
    unsafe {
        check(cuMemsetD8Async(d, 0x11, 100, s), "cuMemsetD8Async");
        check(cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), d, 4096, s), "D2H");
    }
    assert!(out[..100].iter().all(|&b| b == 0x11) && out[100..].iter().all(|&b| b == 0x5a));
    free(d, s);
    sync(s);
    // SAFETY: live handles.
    unsafe {
        check(cuMemPoolDestroy(p), "cuMemPoolDestroy");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

#[test]
fn a_use_the_stream_is_not_ordered_after_is_refused() {
    init_and_use(0);
    let p = pool(16 << 20);
    let (a, b) = (stream(), stream());
    let gate = Gate::new();
    block(a, &gate);
    let d = alloc(p, 4096, a);
    // `b` is not ordered after the allocation on `a`: the checker refuses the memset.
    // SAFETY: `d` is a live allocation; nothing is enqueued.
    let rc = unsafe { cuMemsetD8Async(d, 0, 16, b) };
    assert_eq!(rc, CUDA_ERROR_INVALID_VALUE, "{}", message());
    assert!(message().starts_with("cuMemsetD8Async: "), "{}", message());
    gate.open();
    free(d, a);
    sync(a);
    // SAFETY: live handles.
    unsafe {
        check(cuMemPoolDestroy(p), "cuMemPoolDestroy");
        check(cuStreamDestroy_v2(a), "cuStreamDestroy");
        check(cuStreamDestroy_v2(b), "cuStreamDestroy");
    }
}

#[test]
fn every_code_has_a_name_and_a_description() {
    init_and_use(0);
    for (code, want) in [
        (CUDA_SUCCESS, "CUDA_SUCCESS"),
        (CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"),
        (CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"),
        (CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"),
        (CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"),
        (CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"),
        (CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"),
        (CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"),
        (CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"),
        (CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"),
    ] {
        let (mut name, mut text) = (std::ptr::null(), std::ptr::null());
        // SAFETY: valid out-pointers; the answers are static strings.
        unsafe {
            check(cuGetErrorName(code, &mut name), "cuGetErrorName");
            check(cuGetErrorString(code, &mut text), "cuGetErrorString");
            assert_eq!(CStr::from_ptr(name).to_str(), Ok(want));
            assert!(CStr::from_ptr(text).to_bytes().len() > 5);
        }
    }
}

#[test]
fn the_device_answers_its_pool_attributes_and_memory() {
    init_and_use(0);
    let mut v = -1;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    unsafe {
        check(cuDeviceGetAttribute(&mut v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0), "115");
        assert_eq!(v, 1);
        check(cuDeviceGetAttribute(&mut v, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0), "119");
        assert_eq!(v, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        check(cuDeviceGetAttribute(&mut v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0), "41");
        assert_eq!(v, 1);
        check(cuMemGetInfo_v2(&mut free, &mut total), "cuMemGetInfo");
    }
    assert!(total > 0 && free <= total);
}

#[test]
fn a_host_function_may_use_device_memory_directly() {
    init_and_use(0);
    let p = pool(16 << 20);
    let s = stream();
    let d = alloc(p, 64, s);
    extern "C" fn fill(data: *mut c_void) {
        // SAFETY: `data` is the device address of 64 live bytes (host memory here).
        unsafe { std::ptr::write_bytes(data.cast::<u8>(), 0x42, 64) };
    }
    let mut out = [0u8; 64];
    // SAFETY: a live stream; `d` is live while the function runs (freed after it).
    unsafe {
        check(cuLaunchHostFunc(s, Some(fill), d as *mut c_void), "cuLaunchHostFunc");
        check(cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), d, 64, s), "D2H");
    }
    assert_eq!(out, [0x42; 64]);
    free(d, s);
    sync(s);
    // SAFETY: live handles.
    unsafe {
        check(cuMemPoolDestroy(p), "cuMemPoolDestroy");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

/// This thread's last message through the C call, copied.
fn last_error() -> Option<String> {
    // SAFETY: takes nothing; the answer is copied before the next call into the library.
    let p = unsafe { mempool_cuda_shim_last_error() };
    // SAFETY: a non-null answer is NUL-terminated and valid until the next call.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

#[test]
fn the_last_message_is_each_threads_own_and_kept_by_a_success() {
    init_and_use(0);
    // SAFETY: a null out-pointer, refused.
    assert_eq!(unsafe { cuStreamCreate(null_mut(), 0) }, CUDA_ERROR_INVALID_VALUE);
    let mine = last_error().expect("the refusal left a message");
    assert!(mine.starts_with("cuStreamCreate: "), "{mine}");
    assert_eq!(mine, message(), "the C call and the Rust side agree");
    std::thread::spawn(|| {
        assert_eq!(last_error(), None, "nothing failed on a fresh thread");
        // SAFETY: a null out-pointer, refused.
        assert_eq!(unsafe { cuDriverGetVersion(null_mut()) }, CUDA_ERROR_INVALID_VALUE);
        let theirs = last_error().expect("the refusal left a message");
        assert!(theirs.starts_with("cuDriverGetVersion: "), "{theirs}");
        let mut v = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { cuDriverGetVersion(&mut v) }, "cuDriverGetVersion");
        assert_eq!(last_error(), Some(theirs), "a success keeps the last failure's message");
    })
    .join()
    .unwrap();
    assert_eq!(last_error(), Some(mine), "another thread's failures leave this thread's message");
}
