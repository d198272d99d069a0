//! The exported C functions of contract §8: the pool calls, the runtime calls around
//! them, and the wider runtime surface CANN's samples use.
//!
//! # Safety
//!
//! Every function is `unsafe extern "C"`: pointer arguments must be null or valid for
//! what the ACL API documents (an out-pointer writable for one value, a props struct
//! readable, host buffers valid for their length during the call: an async copy whose
//! host side is pageable memory is done before the call returns, and `aclrtMallocHost`
//! memory stays allocated until the queued work using it has run).
//! Handles are never dereferenced: they are registry ids checked on every call, so a
//! garbage, destroyed or wrong-kind handle gets an error code. A null handle is a null
//! pointer (100000), except a null stream, which means the current device's default
//! stream where the ACL API allows it. Device pointers are checked by the emulator. No
//! panic crosses the boundary.

#![allow(non_snake_case)]

use crate::report::Callback;
use crate::state::{
    HostBlock, HostMemory, Lifecycle, Shim, current, current_context, err, ffi, last_code, lifecycle, non_null,
    set_current, shim, take_last_error_ptr,
};
use mempool_ascend::sys;
use mempool_ascend::sys::{
    ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_MEMCPY_DEFAULT,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    aclError, aclrtContext, aclrtEvent, aclrtEventRecordedStatus, aclrtHostFunc, aclrtMemAttr, aclrtMemMallocPolicy,
    aclrtMemPool, aclrtMemPoolAttr, aclrtMemPoolProps, aclrtMemcpyKind, aclrtStream,
};
use mempool_ascend::sys::{aclrtCallback, aclrtCallbackBlockType, aclrtLastErrLevel, aclrtRunMode, aclrtStreamStatus};
use mempool_emu::CopySide;
use mempool_hal::attr::{AttrId, AttrWidth};
use mempool_hal::{Device, DevicePtr, EventStatus, MemPool, PoolCall, PoolProps, RawAttrValue, code};
use std::ffi::{CStr, c_char, c_void};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, PoisonError};

/// Makes a raw pointer `Send` for work queued on an emulated stream. The C caller owns
/// what it points to and guarantees it outlives the work (the ACL contract).
#[derive(Clone, Copy)]
struct SendPtr(*mut c_void);
// SAFETY: the pointer is only handed back to the C function it was given for, as the
// ACL API promises; the C caller is responsible for the pointee's thread safety.
unsafe impl Send for SendPtr {}

fn dptr(p: *const c_void) -> DevicePtr {
    DevicePtr::from_addr(p as u64)
}

/// `aclError aclInit(const char *configPath)`: NULL, an empty path or a readable file
/// (whose content is not read). Again before `aclFinalize`: 100002; a path that is not a
/// readable file: 100003.
///
/// # Safety
///
/// See the module docs; `configPath` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config: *const c_char) -> aclError {
    const OP: &str = "aclInit";
    ffi(OP, || {
        let mut l = lifecycle();
        if l.initialized {
            // CANN counts the repeat as one more reference (`aclFinalizeReference`).
            l.references += 1;
            return Err(err(
                sys::ACL_ERROR_REPEAT_INITIALIZE,
                OP,
                "aclInit was already called (call aclFinalize first)",
            ));
        }
        if !config.is_null() {
            // SAFETY: non-null, and the caller passes a NUL-terminated string.
            let path = unsafe { CStr::from_ptr(config) };
            let bytes = path.to_bytes();
            if !bytes.is_empty() {
                let p = std::path::Path::new(std::ffi::OsStr::from_bytes(bytes));
                if !p.is_file() || std::fs::File::open(p).is_err() {
                    return Err(err(
                        sys::ACL_ERROR_INVALID_FILE,
                        OP,
                        format!("the configuration path {} is not a readable file", p.display()),
                    ));
                }
            }
        }
        shim(OP)?;
        *l = Lifecycle { initialized: true, finalized: false, references: 1 };
        Ok(())
    })
}

/// `aclError aclFinalize(void)`: finalizes whatever the init reference count, and clears
/// it; again without an `aclInit` in between: 100037. The library keeps working
/// afterwards (every call works before `aclInit` too).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalize() -> aclError {
    const OP: &str = "aclFinalize";
    ffi(OP, || {
        let mut l = lifecycle();
        if l.finalized {
            return Err(err(sys::ACL_ERROR_REPEAT_FINALIZE, OP, "aclFinalize was already called (no aclInit since)"));
        }
        shim(OP)?;
        *l = Lifecycle { initialized: false, finalized: true, references: 0 };
        Ok(())
    })
}

/// `aclError aclFinalizeReference(uint64_t *refCount)`: the counted finalize, as CANN
/// has it. Every `aclInit` (a repeat answering 100002 too) counts one reference; this
/// takes one away, and finalizes (as `aclFinalize`) when it takes the last. With no
/// reference left: 100037. `refCount`, when not NULL, receives the references left
/// (0 after the call that finalized, or after a refused one).
///
/// # Safety
///
/// See the module docs; `refCount` is NULL or writable for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeReference(ref_count: *mut u64) -> aclError {
    const OP: &str = "aclFinalizeReference";
    ffi(OP, || {
        let mut l = lifecycle();
        let write = |n: u64| {
            if !ref_count.is_null() {
                // SAFETY: non-null, and the caller passes a writable `uint64_t`.
                unsafe { ref_count.write(n) };
            }
        };
        if l.references == 0 {
            write(0);
            return Err(err(
                sys::ACL_ERROR_REPEAT_FINALIZE,
                OP,
                "no aclInit reference is left (finalized already, or never initialized)",
            ));
        }
        if l.references > 1 {
            l.references -= 1;
            write(l.references);
            return Ok(());
        }
        shim(OP)?;
        *l = Lifecycle { initialized: false, finalized: true, references: 0 };
        write(0);
        Ok(())
    })
}

/// `aclError aclrtSetDevice(int32_t deviceId)`: makes the device's default context current
/// on this thread and counts one use of the device (process-wide).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDevice(device: i32) -> aclError {
    const OP: &str = "aclrtSetDevice";
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.device_id(i64::from(device), OP)?;
        set_current(Some((d, s.default_context(d))));
        s.set_counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[d as usize] += 1;
        Ok(())
    })
}

/// Undoes one `aclrtSetDevice` of `device` (all of them when `force`): 507007 when none is
/// left to undo. Waits for the device's work; the device stops being current on this
/// thread if it was.
fn reset_device(device: i32, force: bool, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(device), op)?;
    {
        let mut counts = s.set_counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = &mut counts[d as usize];
        if *n == 0 {
            return Err(err(
                sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                op,
                format!("device {d} is not set (every aclrtSetDevice of it was already reset)"),
            ));
        }
        *n = if force { 0 } else { *n - 1 };
    }
    s.dev(d).synchronize_device()?;
    if current(op).ok() == Some(d) {
        set_current(None);
    }
    Ok(())
}

/// `aclError aclrtResetDevice(int32_t deviceId)`: undoes one `aclrtSetDevice` of the
/// device (507007 if none is left) and waits for the device's work.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDevice(device: i32) -> aclError {
    const OP: &str = "aclrtResetDevice";
    ffi(OP, || reset_device(device, false, OP))
}

/// `aclError aclrtGetDeviceCount(uint32_t *count)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    const OP: &str = "aclrtGetDeviceCount";
    ffi(OP, || {
        non_null(count, OP, "count")?;
        let n = shim(OP)?.devices.len() as u32;
        // SAFETY: non-null, and the caller passes a writable `uint32_t`.
        unsafe { count.write(n) };
        Ok(())
    })
}

/// `aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)`: the new
/// context becomes current.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(context: *mut aclrtContext, device: i32) -> aclError {
    const OP: &str = "aclrtCreateContext";
    ffi(OP, || {
        non_null(context, OP, "context")?;
        let s = shim(OP)?;
        let d = s.device_id(i64::from(device), OP)?;
        let h = s.contexts.insert(d);
        set_current(Some((d, h)));
        // SAFETY: non-null, and the caller passes a writable `aclrtContext`.
        unsafe { context.write(h as aclrtContext) };
        Ok(())
    })
}

/// `aclError aclrtDestroyContext(aclrtContext context)`: a device's default context, or a
/// context destroyed or unknown, is 107002 (`ACL_ERROR_RT_CONTEXT_NULL`), as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyContext(context: aclrtContext) -> aclError {
    const OP: &str = "aclrtDestroyContext";
    ffi(OP, || {
        non_null(context, OP, "context")?;
        let s = shim(OP)?;
        if s.is_default_context(context as usize) {
            return Err(err(
                code::ACL_ERROR_RT_CONTEXT_NULL,
                OP,
                format!(
                    "context {context:p} is the default context of a device (aclrtSetDevice) and cannot be destroyed"
                ),
            ));
        }
        s.contexts.remove(context as usize).ok_or_else(|| {
            err(code::ACL_ERROR_RT_CONTEXT_NULL, OP, format!("context {context:p} is destroyed or unknown"))
        })?;
        if current_context() == Some(context as usize) {
            set_current(None);
        }
        Ok(())
    })
}

/// `aclError aclrtSetCurrentContext(aclrtContext context)`: a context destroyed or unknown
/// is 107000, as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetCurrentContext(context: aclrtContext) -> aclError {
    const OP: &str = "aclrtSetCurrentContext";
    ffi(OP, || {
        non_null(context, OP, "context")?;
        let s = shim(OP)?;
        let d = s.contexts.get(context as usize).ok_or_else(|| {
            err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("context {context:p} is destroyed or unknown"))
        })?;
        set_current(Some((d, context as usize)));
        Ok(())
    })
}

/// `aclError aclrtGetCurrentContext(aclrtContext *context)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError {
    const OP: &str = "aclrtGetCurrentContext";
    ffi(OP, || {
        non_null(context, OP, "context")?;
        current(OP)?;
        let h = current_context().unwrap_or(0);
        // SAFETY: non-null, and the caller passes a writable `aclrtContext`.
        unsafe { context.write(h as aclrtContext) };
        Ok(())
    })
}

/// `aclError aclrtCreateStream(aclrtStream *stream)`: on the current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    const OP: &str = "aclrtCreateStream";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let d = current(OP)?;
        let st = s.dev(d).create_stream()?;
        let h = s.streams.insert(crate::state::StreamEntry { device: d, stream: st });
        // SAFETY: non-null, and the caller passes a writable `aclrtStream`.
        unsafe { stream.write(h as aclrtStream) };
        Ok(())
    })
}

/// `aclError aclrtDestroyStream(aclrtStream stream)`: queued work still runs.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtDestroyStream";
    ffi(OP, || {
        let s = shim(OP)?;
        if stream.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "the default stream cannot be destroyed"));
        }
        let e = s.stream(stream as usize, OP)?;
        s.streams.remove(stream as usize);
        s.dev(e.device).destroy_stream(&e.stream)
    })
}

/// `aclError aclrtSynchronizeStream(aclrtStream stream)` (null: the default stream).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtSynchronizeStream";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).synchronize_stream(&e.stream)
    })
}

/// `aclError aclrtSynchronizeDevice(void)`: the current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeDevice() -> aclError {
    const OP: &str = "aclrtSynchronizeDevice";
    ffi(OP, || {
        let s = shim(OP)?;
        s.dev(current(OP)?).synchronize_device()
    })
}

/// `aclError aclrtCreateEvent(aclrtEvent *event)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    const OP: &str = "aclrtCreateEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.dev(current(OP)?).create_event()?;
        let h = s.events.insert(ev);
        // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
        unsafe { event.write(h as aclrtEvent) };
        Ok(())
    })
}

/// `aclError aclrtDestroyEvent(aclrtEvent event)`: needs no current context (as on
/// CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtDestroyEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.events.remove(event as usize);
        s.dev(current(OP).unwrap_or(0)).destroy_event(&ev)
    })
}

/// `aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtRecordEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).record_event(&ev, &e.stream)
    })
}

/// `aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtStreamWaitEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(e.device).stream_wait_event(&e.stream, &ev)
    })
}

/// `aclError aclrtSynchronizeEvent(aclrtEvent event)`: needs no current context (as on
/// CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtSynchronizeEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(current(OP).unwrap_or(0)).synchronize_event(&ev)
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)`:
/// needs no current context (as on CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError {
    const OP: &str = "aclrtQueryEventStatus";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        non_null(status, OP, "status")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let st = match s.dev(current(OP).unwrap_or(0)).query_event(&ev)? {
            EventStatus::Complete => ACL_EVENT_RECORDED_STATUS_COMPLETE,
            EventStatus::NotReady => ACL_EVENT_RECORDED_STATUS_NOT_READY,
        };
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(st) };
        Ok(())
    })
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end)`: real
/// elapsed milliseconds between two completed events. An event never recorded answers
/// 507000, as on CANN; needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(ms: *mut f32, start: aclrtEvent, end: aclrtEvent) -> aclError {
    const OP: &str = "aclrtEventElapsedTime";
    ffi(OP, || {
        non_null(ms, OP, "ms")?;
        non_null(start, OP, "startEvent")?;
        non_null(end, OP, "endEvent")?;
        let s = shim(OP)?;
        let (a, b) = (s.event(start as usize, OP)?, s.event(end as usize, OP)?);
        let v = s.dev(current(OP).unwrap_or(0)).event_elapsed_ms(&a, &b)?;
        // SAFETY: non-null, and the caller passes a writable float.
        unsafe { ms.write(v) };
        Ok(())
    })
}

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`:
/// synchronous device memory, the size padded as CANN pads it (to a multiple of 32 bytes,
/// plus 32), 32-byte aligned; small allocations share the granule blocks of a hidden
/// whole-device pool. It is ordered before everything enqueued after the call. Out of
/// device memory: 207001. Such an address may also be freed in stream order with
/// `aclrtMemPoolFreeAsync`, as on the real runtime.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(ptr: *mut *mut c_void, size: usize, _policy: aclrtMemMallocPolicy) -> aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { malloc_sync("aclrtMalloc", ptr, size, true) }
}

/// `aclrtMalloc` and `aclrtMallocAlign32`: `size` bytes of synchronous device memory from
/// the current device's heap, padded as CANN pads them (`plus_32`: `aclrtMalloc` adds 32
/// bytes to the multiple of 32).
///
/// # Safety
///
/// `ptr` is null or writable for one `void *`.
unsafe fn malloc_sync(op: &'static str, ptr: *mut *mut c_void, size: usize, plus_32: bool) -> aclError {
    ffi(op, || {
        non_null(ptr, op, "devPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, op, "size 0"));
        }
        let s = shim(op)?;
        let a = s.sync_alloc(current(op)?)?;
        let p = a.malloc(crate::heap::padded(size as u64, plus_32, op)?, op)?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtFree(void *devPtr)`: `aclrtMalloc` memory of any device; needs no current
/// context (as on CANN). The host must have synchronized the streams that used it.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtFree";
    ffi(OP, || {
        non_null(ptr, OP, "devPtr")?;
        let s = shim(OP)?;
        let Some((d, heap)) = s.heap_of(ptr as u64) else {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("{ptr:p} was not allocated by aclrtMalloc")));
        };
        heap.free(s.dev(d), dptr(ptr), OP)
    })
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size)`: host memory the runtime
/// knows (page-locked on CANN, ordinary host memory here), 64-byte aligned. Memsets and
/// copies accept it, synchronous and async; async work on it runs in stream order, and
/// the memory stays allocated until that work has run, even if it is freed earlier. Needs
/// a current context (107002), as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(ptr: *mut *mut c_void, size: usize) -> aclError {
    const OP: &str = "aclrtMallocHost";
    ffi(OP, || {
        non_null(ptr, OP, "hostPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        let layout = std::alloc::Layout::from_size_align(size, 64)
            .map_err(|_| err(code::ACL_ERROR_INVALID_PARAM, OP, format!("size {size} is too large")))?;
        let s = shim(OP)?;
        current(OP)?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(err(code::ACL_ERROR_RT_MEMORY_ALLOCATION, OP, format!("cannot allocate {size} host bytes")));
        }
        let block = Arc::new(HostBlock { addr: p as usize, layout });
        s.host_allocs.lock().unwrap_or_else(PoisonError::into_inner).insert(p as usize, block);
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p.cast()) };
        Ok(())
    })
}

/// `aclError aclrtFreeHost(void *hostPtr)`: the memory goes back once the copies and
/// memsets queued on it have run.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtFreeHost";
    ffi(OP, || {
        non_null(ptr, OP, "hostPtr")?;
        let block =
            shim(OP)?.host_allocs.lock().unwrap_or_else(PoisonError::into_inner).remove(&(ptr as usize)).ok_or_else(
                || err(code::ACL_ERROR_INVALID_PARAM, OP, format!("{ptr:p} was not allocated by aclrtMallocHost")),
            )?;
        // The last reference deallocates it (now, or when queued work using it has run).
        drop(block);
        Ok(())
    })
}

/// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: done as `ACL_MEMCPY_HOST_TO_DEVICE`, as CANN does.
const ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: aclrtMemcpyKind = 5;

/// Checks a copy's arguments in CANN's order; `false` when there is nothing to do.
///
/// `count == 0` succeeds before any other check; then null pointers and a kind outside
/// 0-5 are 100000, and `count > destMax` is 107000.
fn copy_args(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    op: &'static str,
) -> mempool_hal::Result<bool> {
    if count == 0 {
        return Ok(false);
    }
    non_null(dst, op, "dst")?;
    non_null(src, op, "src")?;
    if !(ACL_MEMCPY_HOST_TO_HOST..=ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE).contains(&kind) {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memcpy kind {kind} is not 0-5")));
    }
    if count > dest_max {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("count {count} is larger than destMax {dest_max}"),
        ));
    }
    Ok(true)
}

/// A copy's sides, resolved from its kind and addresses.
struct Sides {
    dst: CopySide,
    src: CopySide,
    /// The `aclrtMallocHost` allocations of its host sides.
    pinned: Vec<Arc<HostBlock>>,
    /// Whether a host side is pageable memory (not from `aclrtMallocHost`).
    pageable: bool,
}

/// Resolves a copy's sides from the kind (arguments checked by [`copy_args`]). A host
/// side is `aclrtMallocHost` memory or pageable memory; device sides are checked by the
/// emulator.
fn copy_sides(
    s: &Shim,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    op: &'static str,
) -> mempool_hal::Result<Sides> {
    // DEFAULT: device memory is any pool's, of any device (they share one platform),
    // including a pool destroyed since, whose pointer is then refused rather than copied
    // through as host memory.
    let is_dev = |p: *const c_void| s.devices[0].is_pool_address(dptr(p));
    let (dst_dev, src_dev) = match kind {
        ACL_MEMCPY_HOST_TO_HOST => (false, false),
        ACL_MEMCPY_HOST_TO_DEVICE | ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => (true, false),
        ACL_MEMCPY_DEVICE_TO_HOST => (false, true),
        ACL_MEMCPY_DEVICE_TO_DEVICE => (true, true),
        ACL_MEMCPY_DEFAULT => (is_dev(dst), is_dev(src)),
        other => return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memcpy kind {other} is not 0-5"))),
    };
    let mut sides = Sides {
        dst: CopySide::Device(dptr(dst)),
        src: CopySide::Device(dptr(src)),
        pinned: Vec::new(),
        pageable: false,
    };
    for (p, on_device, side) in [(dst.cast_const(), dst_dev, &mut sides.dst), (src, src_dev, &mut sides.src)] {
        if on_device {
            s.check_device_range(p as u64, count as u64, op)?;
            continue;
        }
        *side = CopySide::Host(p.cast_mut().cast());
        match s.host_memory(p as usize, count, op)? {
            HostMemory::Pinned(b) => sides.pinned.push(b),
            HostMemory::Pageable => sides.pageable = true,
        }
    }
    // CANN asks for a current context in every copy, host-to-host too.
    current(op)?;
    Ok(sides)
}

/// `aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind)`: synchronous.
///
/// # Safety
///
/// See the module docs; host sides must be valid for `count` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    const OP: &str = "aclrtMemcpy";
    ffi(OP, || {
        if !copy_args(dst, dest_max, src, count, kind, OP)? {
            return Ok(());
        }
        let sh = shim(OP)?;
        let c = copy_sides(sh, dst, src, count, kind, OP)?;
        // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
        // the call (the ACL contract); device sides are checked by the emulator.
        unsafe { sh.devices[0].memcpy_raw(c.dst, c.src, count as u64) }
    })
}

/// `aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind, aclrtStream stream)`.
///
/// With every host side in `aclrtMallocHost` memory (or none), the copy runs in stream
/// order. A host side in pageable memory makes it what CANN makes it: the stream is
/// synchronized (the host observes it) and the copy is done before the call returns, so
/// the program may reuse that buffer at once.
///
/// # Safety
///
/// See the module docs; `aclrtMallocHost` sides must stay allocated until the copy has
/// run (the library keeps them so), pageable ones be valid during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemcpyAsync";
    ffi(OP, || {
        if !copy_args(dst, dest_max, src, count, kind, OP)? {
            return Ok(());
        }
        let sh = shim(OP)?;
        let e = sh.stream(stream as usize, OP)?;
        let c = copy_sides(sh, dst, src, count, kind, OP)?;
        let dev = sh.dev(e.device);
        if c.pageable {
            dev.synchronize_stream(&e.stream)?;
            // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
            // the call; device sides are checked by the emulator.
            return unsafe { dev.memcpy_raw(c.dst, c.src, count as u64) };
        }
        // SAFETY: the host sides are `aclrtMallocHost` memory, valid for `count` bytes
        // (checked above) and kept allocated until the copy has run (the hold below,
        // enqueued after it, while `c.pinned` still holds them); device sides are checked
        // by the emulator.
        unsafe { dev.memcpy_raw_async(c.dst, c.src, count as u64, &e.stream)? };
        if !c.pinned.is_empty() {
            dev.hold_until_reached(&e.stream, c.pinned)?;
        }
        Ok(())
    })
}

/// Checks a memset's arguments in CANN's order; `false` when there is nothing to do.
///
/// `count == 0` succeeds before any other check; then a null pointer is 100000 and
/// `count > maxCount` is 107000.
fn memset_args(ptr: *mut c_void, max_count: usize, count: usize, op: &'static str) -> mempool_hal::Result<bool> {
    if count == 0 {
        return Ok(false);
    }
    non_null(ptr, op, "devPtr")?;
    if count > max_count {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("count {count} is larger than maxCount {max_count}"),
        ));
    }
    Ok(true)
}

/// Where a memset writes: device memory (checked by the emulator), or `aclrtMallocHost`
/// memory with its allocation.
fn memset_target(
    s: &Shim,
    ptr: *mut c_void,
    count: usize,
    op: &'static str,
) -> mempool_hal::Result<(CopySide, Option<Arc<HostBlock>>)> {
    if s.devices[0].is_pool_address(dptr(ptr)) {
        s.check_device_range(ptr as u64, count as u64, op)?;
        return Ok((CopySide::Device(dptr(ptr)), None));
    }
    match s.host_memory(ptr as usize, count, op)? {
        HostMemory::Pinned(b) => Ok((CopySide::Host(ptr.cast()), Some(b))),
        HostMemory::Pageable => Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("{ptr:p} is neither device memory nor aclrtMallocHost memory"),
        )),
    }
}

/// `aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)`:
/// device memory or `aclrtMallocHost` memory.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(ptr: *mut c_void, max_count: usize, value: i32, count: usize) -> aclError {
    const OP: &str = "aclrtMemset";
    ffi(OP, || {
        if !memset_args(ptr, max_count, count, OP)? {
            return Ok(());
        }
        let s = shim(OP)?;
        let device = current(OP)?;
        match memset_target(s, ptr, count, OP)? {
            (CopySide::Device(d), _) => s.dev(device).memset_now(d, value as u8, count as u64),
            (CopySide::Host(p), _block) => {
                // SAFETY: `[p, p + count)` lies inside one live aclrtMallocHost allocation
                // (checked above), kept allocated by `_block` during the write.
                unsafe { std::ptr::write_bytes(p, value as u8, count) };
                Ok(())
            }
        }
    })
}

/// `aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
/// aclrtStream stream)`: device memory or `aclrtMallocHost` memory, in stream order.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemsetAsync";
    ffi(OP, || {
        if !memset_args(ptr, max_count, count, OP)? {
            return Ok(());
        }
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let dev = s.dev(e.device);
        let (target, block) = memset_target(s, ptr, count, OP)?;
        // SAFETY: a host target lies inside one aclrtMallocHost allocation (checked
        // above), kept allocated until the memset has run by the hold enqueued after it
        // (while `block` holds it); a device target is checked by the emulator.
        unsafe { dev.memset_raw_async(target, value as u8, count as u64, &e.stream)? };
        if let Some(b) = block {
            dev.hold_until_reached(&e.stream, b)?;
        }
        Ok(())
    })
}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)`:
/// `fn(args)` runs when the stream reaches it, on the device's one host-function thread,
/// as CANN runs a context's host functions on its one callback thread: one at a time, so
/// a host function that blocks holds back the host functions of the device's other
/// streams (their copies and memsets still run). Every context of a device shares that
/// thread here. On the emulator device pointers are host addresses, so the function may
/// use them directly. A null `fn` is 107000; a stream subscribed for callbacks with
/// `aclrtSubscribeReport` is 107011 (`ACL_ERROR_RT_STREAM_SUBSCRIBE`), as on CANN, where
/// the two mechanisms must not be mixed on one stream.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `args` from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchHostFunc(stream: aclrtStream, func: aclrtHostFunc, args: *mut c_void) -> aclError {
    const OP: &str = "aclrtLaunchHostFunc";
    ffi(OP, || {
        let Some(f) = func else { return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "fn is null")) };
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.reports.refuse_subscribed(e.device, stream as usize, OP)?;
        let args = SendPtr(args);
        s.dev(e.device).launch_host_func(
            &e.stream,
            Box::new(move || {
                let args = args;
                // SAFETY: the C caller provided `f` and `args` for exactly this call.
                unsafe { f(args.0) }
            }),
        )
    })
}

/// `aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)`: the
/// current device's memory (every attribute reports the same device memory).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(_attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError {
    const OP: &str = "aclrtGetMemInfo";
    ffi(OP, || {
        non_null(free, OP, "free")?;
        non_null(total, OP, "total")?;
        let s = shim(OP)?;
        let info = s.dev(current(OP)?).mem_info()?;
        // SAFETY: both non-null, and the caller passes writable `size_t`s.
        unsafe {
            free.write(info.free as usize);
            total.write(info.total as usize);
        }
        Ok(())
    })
}

/// `const char *aclGetRecentErrMsg(void)`: takes this thread's last error message, as
/// CANN "obtains and clears" it. NULL when there is nothing to report: no call has failed
/// on this thread yet, or the message was already taken. A C caller that prints it must
/// check for NULL first (`printf("%s", NULL)` is undefined). The string stays valid until
/// this function returns another message on this thread.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    take_last_error_ptr()
}

/// `aclError aclrtMemPoolCreate(aclrtMemPool *pool, const aclrtMemPoolProps *props)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolCreate(pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps) -> aclError {
    const OP: &str = "aclrtMemPoolCreate";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        non_null(props, OP, "props")?;
        let s = shim(OP)?;
        let d = current(OP)?;
        // SAFETY: non-null, and the caller passes a readable props struct; read unaligned
        // in case C placed it oddly.
        let c = unsafe { props.read_unaligned() };
        let p = s.dev(d).create_pool(&PoolProps::from(&c))?;
        let h = s.pools.insert(p);
        // SAFETY: non-null, and the caller passes a writable `aclrtMemPool`.
        unsafe { pool.write(h as aclrtMemPool) };
        Ok(())
    })
}

/// `aclError aclrtMemPoolDestroy(aclrtMemPool pool)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolDestroy(pool: aclrtMemPool) -> aclError {
    const OP: &str = "aclrtMemPoolDestroy";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        // CANN looks the pool up before it needs the context.
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        let dev = s.dev(current(OP)?);
        s.pools.remove(pool as usize);
        dev.destroy_pool(&p)
    })
}

fn attr_width(attr: aclrtMemPoolAttr, op: &'static str) -> mempool_hal::Result<(AttrId, AttrWidth)> {
    let Ok(id) = u32::try_from(attr).map(AttrId) else {
        return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("unknown pool attribute id {attr}")));
    };
    let info = id.check_read().map_err(|e| e.with_op(op))?;
    Ok((id, info.width))
}

/// `aclError aclrtMemPoolSetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value)`:
/// `value` points to a `uint32_t` for attributes 1-3 and a `uint64_t` for 4-8.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolSetAttr(
    pool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    const OP: &str = "aclrtMemPoolSetAttr";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Attribute)?;
        let (id, width) = attr_width(attr, OP)?;
        if value.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "value is null"));
        }
        let raw = match width {
            // SAFETY: non-null; the caller passes a value of the attribute's documented
            // width; read unaligned to be safe.
            AttrWidth::U32 => RawAttrValue::U32(unsafe { value.cast::<u32>().read_unaligned() }),
            // SAFETY: as above, for a `uint64_t`.
            AttrWidth::U64 => RawAttrValue::U64(unsafe { value.cast::<u64>().read_unaligned() }),
        };
        p.set_attr_raw(id, raw).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemPoolGetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolGetAttr(
    pool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    const OP: &str = "aclrtMemPoolGetAttr";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Attribute)?;
        let (id, _) = attr_width(attr, OP)?;
        if value.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "value is null"));
        }
        match p.get_attr_raw(id).map_err(|e| e.with_op(OP))? {
            // SAFETY: non-null; the caller passes room for the attribute's documented width.
            RawAttrValue::U32(v) => unsafe { value.cast::<u32>().write_unaligned(v) },
            // SAFETY: as above, for a `uint64_t`.
            RawAttrValue::U64(v) => unsafe { value.cast::<u64>().write_unaligned(v) },
        }
        Ok(())
    })
}

/// `aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool pool,
/// aclrtStream stream)`. Size 0 succeeds and writes nothing (CANN's behaviour). The
/// checks come in CANN's order: null arguments (100000), size 0, the stream handle
/// (107017), the context (no current context or a stream of another device: 107003), a
/// size that overflows (107000), then the pool (unknown or destroyed: 507000).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    pool: aclrtMemPool,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemPoolMallocAsync";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        non_null(pool, OP, "pool")?;
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        if size == 0 {
            return Ok(());
        }
        let e = s.pool_stream(stream as usize, OP)?;
        let gran = s.dev(e.device).config().granularity;
        if (size as u64).checked_next_multiple_of(gran).is_none() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("size {size} overflows when rounded")));
        }
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        let d = p.malloc_async(size as u64, &e.stream).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(d.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)`: frees any pool's
/// allocation (or an `aclrtMalloc` address) in stream order. A null stream is 507000; no
/// current context, or a stream of another device, is 107003 (after the stream handle's
/// own check, 107017), as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtMemPoolFreeAsync";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        if stream.is_null() {
            return Err(err(code::ACL_ERROR_RT_INTERNAL_ERROR, OP, "stream is null"));
        }
        let s = shim(OP)?;
        let e = s.pool_stream(stream as usize, OP)?;
        if let Some((_, heap)) = s.heap_of(ptr as u64) {
            return heap.free_async(s.dev(e.device), dptr(ptr), &e.stream, OP);
        }
        s.dev(e.device).free(dptr(ptr), &e.stream).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemPoolTrimTo(aclrtMemPool pool, size_t minBytesToKeep)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolTrimTo(pool: aclrtMemPool, min_bytes_to_keep: usize) -> aclError {
    const OP: &str = "aclrtMemPoolTrimTo";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        p.trim_to(min_bytes_to_keep as u64).map_err(|e| e.with_op(OP))
    })
}

// ------------------------------------------------------------------ the wider runtime surface

/// Parses a time limit in milliseconds: -1 is no limit, 0 and anything below -1 are
/// refused with 107000 (CANN's answer).
fn timeout_ms(ms: i32, op: &'static str) -> mempool_hal::Result<Option<std::time::Duration>> {
    match ms {
        -1 => Ok(None),
        1.. => Ok(Some(std::time::Duration::from_millis(ms as u64))),
        _ => Err(err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("timeout {ms} ms is neither -1 nor positive"))),
    }
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode)`: always `ACL_HOST` (the program runs
/// on a host CPU). Needs neither `aclInit` nor a current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(mode: *mut aclrtRunMode) -> aclError {
    const OP: &str = "aclrtGetRunMode";
    ffi(OP, || {
        non_null(mode, OP, "runMode")?;
        // SAFETY: non-null, and the caller passes a writable `aclrtRunMode`.
        unsafe { mode.write(sys::ACL_HOST) };
        Ok(())
    })
}

/// `aclError aclrtGetDevice(int32_t *deviceId)`: the calling thread's current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(device: *mut i32) -> aclError {
    const OP: &str = "aclrtGetDevice";
    ffi(OP, || {
        non_null(device, OP, "deviceId")?;
        let d = current(OP)?;
        // SAFETY: non-null, and the caller passes a writable `int32_t`.
        unsafe { device.write(d as i32) };
        Ok(())
    })
}

/// `aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t
/// *patchVersion)`: the version of this library.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32) -> aclError {
    const OP: &str = "aclrtGetVersion";
    ffi(OP, || {
        non_null(major, OP, "majorVersion")?;
        non_null(minor, OP, "minorVersion")?;
        non_null(patch, OP, "patchVersion")?;
        let v = |s: &str| s.parse::<i32>().unwrap_or(0);
        // SAFETY: all non-null, and the caller passes writable `int32_t`s.
        unsafe {
            major.write(v(env!("CARGO_PKG_VERSION_MAJOR")));
            minor.write(v(env!("CARGO_PKG_VERSION_MINOR")));
            patch.write(v(env!("CARGO_PKG_VERSION_PATCH")));
        }
        Ok(())
    })
}

/// `const char *aclrtGetSocName(void)`: `"mempool-emu"`, a static string (never NULL).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    c"mempool-emu".as_ptr()
}

/// `aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)` (null: the
/// default stream): `ACL_STREAM_STATUS_COMPLETE` when everything enqueued has run, which
/// counts as the host observing the stream (contract §8); `NOT_READY` otherwise. A stream
/// of another device is queried too, as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) -> aclError {
    const OP: &str = "aclrtStreamQuery";
    ffi(OP, || {
        non_null(status, OP, "status")?;
        let s = shim(OP)?;
        let e = s.stream_of_any_device(stream as usize, OP)?;
        let st = match s.dev(e.device).query_stream(&e.stream)? {
            mempool_hal::StreamStatus::Complete => sys::ACL_STREAM_STATUS_COMPLETE,
            mempool_hal::StreamStatus::NotReady => sys::ACL_STREAM_STATUS_NOT_READY,
        };
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(st) };
        Ok(())
    })
}

/// `aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)` (null: the
/// default stream): stores the mode (only bit 0 counts: `ACL_STOP_ON_FAILURE`). Going back
/// from STOP to CONTINUE: 207000, as CANN. The emulator runs every task either way.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    const OP: &str = "aclrtSetStreamFailureMode";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let mode = mode & sys::ACL_STOP_ON_FAILURE;
        let mut modes = s.failure_modes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (e.device, stream as usize);
        if modes.get(&key) == Some(&sys::ACL_STOP_ON_FAILURE) && mode == sys::ACL_CONTINUE_ON_FAILURE {
            return Err(err(
                code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                OP,
                "a stream set to ACL_STOP_ON_FAILURE cannot go back to ACL_CONTINUE_ON_FAILURE",
            ));
        }
        modes.insert(key, mode);
        Ok(())
    })
}

/// `aclError aclrtDestroyStreamForce(aclrtStream stream)`: as `aclrtDestroyStream` (work
/// already queued still runs: the emulator cannot drop it).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtDestroyStreamForce";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.streams.remove(stream as usize);
        s.failure_modes.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&(e.device, stream as usize));
        s.dev(e.device).destroy_stream(&e.stream)
    })
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId)`: undoes every `aclrtSetDevice` of
/// the device (507007 if none is left) and waits for its work.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDeviceForce(device: i32) -> aclError {
    const OP: &str = "aclrtResetDeviceForce";
    ffi(OP, || reset_device(device, true, OP))
}

/// `aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t
/// flag)`: as `aclrtCreateStream`; the priority and flags are accepted and do not change
/// how the emulator runs the stream.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, _priority: u32, _flag: u32) -> aclError {
    const OP: &str = "aclrtCreateStreamWithConfig";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let d = current(OP)?;
        let st = s.dev(d).create_stream()?;
        let h = s.streams.insert(crate::state::StreamEntry { device: d, stream: st });
        // SAFETY: non-null, and the caller passes a writable `aclrtStream`.
        unsafe { stream.write(h as aclrtStream) };
        Ok(())
    })
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)`: as
/// `aclrtCreateEvent`; every event keeps time stamps whatever the flags.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, _flag: u32) -> aclError {
    const OP: &str = "aclrtCreateEventWithFlag";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.dev(current(OP)?).create_event()?;
        let h = s.events.insert(ev);
        // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
        unsafe { event.write(h as aclrtEvent) };
        Ok(())
    })
}

/// `aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)` (null stream: the
/// default stream): the event forgets its record, taking effect at the call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtResetEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).reset_event(&ev, &e.stream)
    })
}

/// `aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)` (null:
/// the default stream; -1: no limit): as `aclrtSynchronizeStream`, or 507046 when the work
/// has not completed within `timeout` ms (nothing is observed then).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    const OP: &str = "aclrtSynchronizeStreamWithTimeout";
    ffi(OP, || {
        let t = timeout_ms(timeout, OP)?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).synchronize_stream_timeout(&e.stream, t)
    })
}

/// `aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)` (-1: no
/// limit): as `aclrtSynchronizeEvent`, or 507047 when the recorded point has not been
/// reached within `timeout` ms. Needs no current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError {
    const OP: &str = "aclrtSynchronizeEventWithTimeout";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let t = timeout_ms(timeout, OP)?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(current(OP).unwrap_or(0)).synchronize_event_timeout(&ev, t)
    })
}

/// `aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)`: when the
/// event's recorded point was reached, in microseconds since the Unix epoch; an event
/// never recorded or not reached yet: 507000. Needs no current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) -> aclError {
    const OP: &str = "aclrtEventGetTimestamp";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        non_null(timestamp, OP, "timestamp")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let us = s.dev(current(OP).unwrap_or(0)).event_timestamp_us(&ev)?;
        // SAFETY: non-null, and the caller passes a writable `uint64_t`.
        unsafe { timestamp.write(us) };
        Ok(())
    })
}

/// `aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`:
/// as `aclrtMalloc`, the size padded to a multiple of 32 bytes only (CANN adds no 32 more
/// here).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocAlign32(
    ptr: *mut *mut c_void,
    size: usize,
    _policy: aclrtMemMallocPolicy,
) -> aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { malloc_sync("aclrtMallocAlign32", ptr, size, false) }
}

/// `aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)` (null stream:
/// the default stream): callbacks launched on the stream will run on the thread
/// `threadId` (a `pthread_t`) when it calls `aclrtProcessReport`. A stream already
/// subscribed: 107011.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSubscribeReport(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtSubscribeReport";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.reports.subscribe(thread, e.device, stream as usize, OP)
    })
}

/// `aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)`: ends the
/// subscription (107011 when `threadId` did not subscribe the stream); callbacks already
/// queued for the thread can still be processed.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnSubscribeReport(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtUnSubscribeReport";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.reports.unsubscribe(thread, e.device, stream as usize, OP)
    })
}

/// `aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType
/// blockType, aclrtStream stream)`: when the stream reaches it, `fn(userData)` is handed to
/// the thread that subscribed the stream, which runs it in `aclrtProcessReport`. With
/// `ACL_CALLBACK_BLOCK` the stream waits until it has run. A stream no thread subscribed:
/// 107015; a null `fn` or another block type: 100000.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `userData` on the subscribed thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchCallback(
    func: aclrtCallback,
    user_data: *mut c_void,
    block_type: aclrtCallbackBlockType,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtLaunchCallback";
    ffi(OP, || {
        let Some(f) = func else { return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "fn is null")) };
        let block = match block_type {
            sys::ACL_CALLBACK_NO_BLOCK => false,
            sys::ACL_CALLBACK_BLOCK => true,
            other => return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("block type {other} is not 0 or 1"))),
        };
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let target = s.reports.target(e.device, stream as usize, OP)?;
        let cb = Callback { func: f, data: user_data };
        let limit = s.dev(e.device).config().wait_timeout;
        s.dev(e.device).launch_host_func(
            &e.stream,
            Box::new(move || {
                if let Some(done) = target.post(cb, block) {
                    done.wait(limit);
                }
            }),
        )
    })
}

/// `aclError aclrtProcessReport(int32_t timeout)` (-1: no limit): runs the next callback
/// queued for the calling thread, waiting up to `timeout` ms for one: 507012 when none
/// came; 107012 when the thread subscribed no stream; 100000 for 0 or below -1.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtProcessReport(timeout: i32) -> aclError {
    const OP: &str = "aclrtProcessReport";
    ffi(OP, || {
        let t = timeout_ms(timeout, OP).map_err(|_| {
            err(code::ACL_ERROR_INVALID_PARAM, OP, format!("timeout {timeout} ms is neither -1 nor positive"))
        })?;
        shim(OP)?.reports.process(t, OP)
    })
}

/// Checks the level of `aclrtGetLastError` / `aclrtPeekAtLastError`, then answers this
/// thread's last error code, taking it when `take`.
fn last_error(level: aclrtLastErrLevel, take: bool, op: &'static str) -> aclError {
    let rc = ffi(op, || {
        if level != sys::ACL_RT_THREAD_LEVEL {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("level {level} is not ACL_RT_THREAD_LEVEL")));
        }
        Ok(())
    });
    if rc != code::ACL_SUCCESS { rc } else { last_code(take) }
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level)`: the code of the calling thread's
/// last failed call (0 if none), which it then forgets.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    last_error(level, true, "aclrtGetLastError")
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level)`: the code of the calling
/// thread's last failed call (0 if none), kept.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    last_error(level, false, "aclrtPeekAtLastError")
}
