//! The exported C functions of SPEC.md section 8.
//!
//! # Safety
//!
//! Every function is `unsafe extern "C"`: pointer arguments must be null or valid for
//! what the ACL API documents (an out-pointer writable for one value, a props struct
//! readable, host buffers valid for their length until the work using them has run).
//! Handles are never dereferenced: they are registry ids checked on every call, so a
//! garbage, destroyed or wrong-kind handle gets an error code. A null handle is a null
//! pointer (100000), except a null stream, which means the current device's default
//! stream where the ACL API allows it. Device pointers are checked by the emulator. No
//! panic crosses the boundary.

#![allow(non_snake_case)]

use crate::state::{current, current_context, err, ffi, last_error_ptr, non_null, set_current, shim};
use mempool_ascend::sys::{
    ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_MEMCPY_DEFAULT,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    aclError, aclrtContext, aclrtEvent, aclrtEventRecordedStatus, aclrtHostFunc, aclrtMemAttr, aclrtMemMallocPolicy,
    aclrtMemPool, aclrtMemPoolAttr, aclrtMemPoolProps, aclrtMemcpyKind, aclrtStream,
};
use mempool_emu::CopySide;
use mempool_hal::attr::{AttrId, AttrWidth};
use mempool_hal::{Device, DevicePtr, EventStatus, MemPool, PoolCall, PoolProps, RawAttrValue, code};
use std::ffi::{c_char, c_void};

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

/// `aclError aclInit(const char *configPath)`: the configuration file is not read.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(_config: *const c_char) -> aclError {
    ffi("aclInit", || shim("aclInit").map(|_| ()))
}

/// `aclError aclFinalize(void)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalize() -> aclError {
    ffi("aclFinalize", || shim("aclFinalize").map(|_| ()))
}

/// `aclError aclrtSetDevice(int32_t deviceId)`: makes the device's default context current.
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
        Ok(())
    })
}

/// `aclError aclrtResetDevice(int32_t deviceId)`: waits for the device's work.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetDevice(device: i32) -> aclError {
    const OP: &str = "aclrtResetDevice";
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.device_id(i64::from(device), OP)?;
        s.dev(d).synchronize_device()?;
        if current(OP).ok() == Some(d) {
            set_current(None);
        }
        Ok(())
    })
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

/// `aclError aclrtDestroyContext(aclrtContext context)`.
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
                code::ACL_ERROR_RT_INVALID_HANDLE,
                OP,
                format!(
                    "context {context:p} is the default context of a device (aclrtSetDevice) and cannot be destroyed"
                ),
            ));
        }
        s.contexts.remove(context as usize).ok_or_else(|| {
            err(code::ACL_ERROR_RT_INVALID_HANDLE, OP, format!("context {context:p} is destroyed or unknown"))
        })?;
        if current_context() == Some(context as usize) {
            set_current(None);
        }
        Ok(())
    })
}

/// `aclError aclrtSetCurrentContext(aclrtContext context)`.
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
            err(code::ACL_ERROR_RT_INVALID_HANDLE, OP, format!("context {context:p} is destroyed or unknown"))
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

/// `aclError aclrtDestroyEvent(aclrtEvent event)`.
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
        let dev = s.dev(current(OP)?);
        let ev = s.event(event as usize, OP)?;
        s.events.remove(event as usize);
        dev.destroy_event(&ev)
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

/// `aclError aclrtSynchronizeEvent(aclrtEvent event)`.
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
        s.dev(current(OP)?).synchronize_event(&ev)
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)`.
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
        let st = match s.dev(current(OP)?).query_event(&ev)? {
            EventStatus::Complete => ACL_EVENT_RECORDED_STATUS_COMPLETE,
            EventStatus::NotReady => ACL_EVENT_RECORDED_STATUS_NOT_READY,
        };
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(st) };
        Ok(())
    })
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end)`: real
/// elapsed milliseconds between two completed events.
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
        let v = s.dev(current(OP)?).event_elapsed_ms(&a, &b)?;
        // SAFETY: non-null, and the caller passes a writable float.
        unsafe { ms.write(v) };
        Ok(())
    })
}

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`:
/// synchronous device memory from a hidden whole-device pool. Such an address may also
/// be freed in stream order with `aclrtMemPoolFreeAsync`, as on the real runtime.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(ptr: *mut *mut c_void, size: usize, _policy: aclrtMemMallocPolicy) -> aclError {
    const OP: &str = "aclrtMalloc";
    ffi(OP, || {
        non_null(ptr, OP, "devPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        let s = shim(OP)?;
        let a = s.sync_alloc(current(OP)?)?;
        let p = a.pool.malloc_sync(size as u64, &a.stream)?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtFree(void *devPtr)`.
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
        s.sync_free(current(OP)?, dptr(ptr), OP)
    })
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size)`: ordinary host memory,
/// 64-byte aligned.
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
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(err(code::ACL_ERROR_RT_MEMORY_ALLOCATION, OP, format!("cannot allocate {size} host bytes")));
        }
        shim(OP)?.host_allocs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(p as usize, layout);
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p.cast()) };
        Ok(())
    })
}

/// `aclError aclrtFreeHost(void *hostPtr)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtFreeHost";
    ffi(OP, || {
        non_null(ptr, OP, "hostPtr")?;
        let layout = shim(OP)?
            .host_allocs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(ptr as usize))
            .ok_or_else(|| {
                err(code::ACL_ERROR_INVALID_PARAM, OP, format!("{ptr:p} was not allocated by aclrtMallocHost"))
            })?;
        // SAFETY: `ptr` was returned by `alloc` with this layout and is freed once (it
        // has just left the registry).
        unsafe { std::alloc::dealloc(ptr.cast(), layout) };
        Ok(())
    })
}

/// Checks a copy's arguments and resolves its sides from the kind.
fn copy_sides(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    op: &'static str,
) -> mempool_hal::Result<Option<(CopySide, CopySide)>> {
    non_null(dst, op, "dst")?;
    non_null(src, op, "src")?;
    if count == 0 {
        return Ok(None);
    }
    if count > dest_max {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("count {count} is larger than destMax {dest_max}")));
    }
    let s = shim(op)?;
    let host = |p: *const c_void| CopySide::Host(p.cast_mut().cast());
    let dev = |p: *const c_void| CopySide::Device(dptr(p));
    // DEFAULT: device memory is any pool's, of any device (they share one platform),
    // including a pool destroyed since, whose pointer is then refused rather than copied
    // through as host memory.
    let auto = |p: *const c_void| if s.devices[0].is_pool_address(dptr(p)) { dev(p) } else { host(p) };
    let sides = match kind {
        ACL_MEMCPY_HOST_TO_HOST => (host(dst), host(src)),
        ACL_MEMCPY_HOST_TO_DEVICE => (dev(dst), host(src)),
        ACL_MEMCPY_DEVICE_TO_HOST => (host(dst), dev(src)),
        ACL_MEMCPY_DEVICE_TO_DEVICE => (dev(dst), dev(src)),
        ACL_MEMCPY_DEFAULT => (auto(dst), auto(src)),
        other => return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("memcpy kind {other} is not 0-4"))),
    };
    if matches!(sides, (CopySide::Device(_), _) | (_, CopySide::Device(_))) {
        current(op)?;
    }
    Ok(Some(sides))
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
        let Some((d, s)) = copy_sides(dst, dest_max, src, count, kind, OP)? else { return Ok(()) };
        // SAFETY: the C caller guarantees host sides are valid for `count` bytes during
        // the call (the ACL contract); device sides are checked by the emulator.
        unsafe { shim(OP)?.devices[0].memcpy_raw(d, s, count as u64) }
    })
}

/// `aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
/// aclrtMemcpyKind kind, aclrtStream stream)`.
///
/// # Safety
///
/// See the module docs; host sides must stay valid until the copy has run.
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
        let sh = shim(OP)?;
        let e = sh.stream(stream as usize, OP)?;
        let Some((d, s)) = copy_sides(dst, dest_max, src, count, kind, OP)? else { return Ok(()) };
        // SAFETY: the C caller guarantees host sides stay valid until the copy has run on
        // the stream (the ACL contract); device sides are checked by the emulator.
        unsafe { sh.dev(e.device).memcpy_raw_async(d, s, count as u64, &e.stream) }
    })
}

fn memset_args(ptr: *mut c_void, max_count: usize, count: usize, op: &'static str) -> mempool_hal::Result<bool> {
    non_null(ptr, op, "devPtr")?;
    if count == 0 {
        return Ok(false);
    }
    if count > max_count {
        return Err(err(
            code::ACL_ERROR_INVALID_PARAM,
            op,
            format!("count {count} is larger than maxCount {max_count}"),
        ));
    }
    Ok(true)
}

/// `aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)`.
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
        s.dev(current(OP)?).memset_now(dptr(ptr), value as u8, count as u64)
    })
}

/// `aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
/// aclrtStream stream)`.
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
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        if !memset_args(ptr, max_count, count, OP)? {
            return Ok(());
        }
        s.dev(e.device).memset_async(dptr(ptr), value as u8, count as u64, &e.stream)
    })
}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)`:
/// `fn(args)` runs on the stream's worker thread when the stream reaches it. On the
/// emulator device pointers are host addresses, so the function may use them directly.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `args` from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchHostFunc(stream: aclrtStream, func: aclrtHostFunc, args: *mut c_void) -> aclError {
    const OP: &str = "aclrtLaunchHostFunc";
    ffi(OP, || {
        let Some(f) = func else { return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "fn is null")) };
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
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

/// `const char *aclGetRecentErrMsg(void)`: this thread's last error message (empty if
/// none), valid until the next failing call on this thread.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    last_error_ptr()
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
        let dev = s.dev(current(OP)?);
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
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
/// aclrtStream stream)`. Size 0 succeeds and writes nothing (CANN's behaviour).
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
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        let e = s.stream(stream as usize, OP)?;
        let d = p.malloc_async(size as u64, &e.stream).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(d.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)`: frees any pool's
/// allocation (or an `aclrtMalloc` address) in stream order.
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
        let e = s.stream(stream as usize, OP)?;
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
