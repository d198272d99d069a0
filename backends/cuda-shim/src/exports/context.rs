//! Contexts: each device's primary context (retained and released, counted; its state,
//! flags and reset), the contexts programs create and destroy, the calling thread's context
//! stack (push, pop, set; its top is the current context), the queries of a context
//! (device, API version, flags, id, stream priorities) and the context synchronization.
//!
//! Each device has its primary context, whose handle stays the same for the life of the
//! process. Releasing its last retain synchronizes the device and makes it inactive: calls
//! that need a current context answer `CUDA_ERROR_INVALID_CONTEXT` while it is current,
//! until it is retained again. A context made by `cuCtxCreate` is another context of its
//! device, usable until `cuCtxDestroy`. Streams, events and pools belong to the device:
//! unlike the driver, those made in a context stay valid after it is released or
//! destroyed. A thread's stack holds up to 64 contexts.

use super::prelude::*;

/// `CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)`: counts one retain
/// of the device's primary context and gives its handle (it does not make it current).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxRetain";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(pctx, OP, "pctx")?;
        let d = s.device_id(i64::from(dev), OP)?;
        s.retain(d);
        // SAFETY: non-null, and the caller passes a writable `CUcontext`.
        unsafe { pctx.write(s.primary_context(d) as CUcontext) };
        Ok(())
    })
}

/// `CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)` (`cuDevicePrimaryCtxRelease` in
/// `cuda.h`): undoes one retain; at the last one the device's work is waited for. None
/// left to undo: `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxRelease_v2";
    ffi(OP, || primary_release(dev, OP))
}

/// `CUresult cuDevicePrimaryCtxRelease(CUdevice dev)`: CUDA 7.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease(dev: CUdevice) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxRelease";
    ffi(OP, || primary_release(dev, OP))
}

/// The body of both primary-context releases.
fn primary_release(dev: CUdevice, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(dev), op)?;
    if s.release(d, op)? == 0 {
        s.dev(d).synchronize_device().map_err(|e| e.with_op(op))?;
    }
    Ok(())
}

/// `CUresult cuCtxSetCurrent(CUcontext ctx)`: replaces the top of the calling thread's
/// context stack with `ctx` (a retained primary context or a created one); NULL pops the
/// top (no context is current when the stack had one). A handle that is not a context, a
/// primary context whose every retain was released, a destroyed context:
/// `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxSetCurrent";
    ffi(OP, || {
        let s = shim(OP)?;
        if ctx.is_null() {
            set_current(None);
            return Ok(());
        }
        let c = s.context(ctx as usize, OP)?;
        set_current(Some((c.device, ctx as usize)));
        Ok(())
    })
}

/// `CUresult cuCtxGetCurrent(CUcontext *pctx)`: the calling thread's current context, or
/// NULL when none is.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CUresult {
    const OP: &str = "cuCtxGetCurrent";
    ffi(OP, || {
        shim(OP)?;
        non_null(pctx, OP, "pctx")?;
        let h = current_context().unwrap_or(0);
        // SAFETY: non-null, and the caller passes a writable `CUcontext`.
        unsafe { pctx.write(h as CUcontext) };
        Ok(())
    })
}

/// `CUresult cuCtxSynchronize(void)`: waits for the work of every stream of the current
/// context's device; the device's pools then release memory above their threshold.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
    const OP: &str = "cuCtxSynchronize";
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.current(OP)?;
        s.dev(d).synchronize_device().map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuCtxSynchronize_v2(CUcontext ctx)` (CUDA 13.0's variant): as
/// `cuCtxSynchronize` for `ctx`'s device (NULL: the current context).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSynchronize_v2(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxSynchronize_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        let (_, c) = s.context_or_current(ctx as usize, OP)?;
        s.dev(c.device).synchronize_device().map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)`: 0 and
/// 0 (the emulator's streams have one priority, as on a device without stream
/// priorities); either pointer may be NULL. Needs a current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CUresult {
    const OP: &str = "cuCtxGetStreamPriorityRange";
    ffi(OP, || {
        let s = shim(OP)?;
        s.current(OP)?;
        for p in [least, greatest] {
            if !p.is_null() {
                // SAFETY: non-null, and the caller passes a writable `int`.
                unsafe { p.write(0) };
            }
        }
        Ok(())
    })
}

/// Checks context flags: only `CU_CTX_*` bits, at most one scheduling bit.
fn check_flags(flags: c_uint, op: &'static str) -> mempool_hal::Result<()> {
    if flags & !CU_CTX_FLAGS_MASK != 0 || !matches!(flags & CU_CTX_SCHED_MASK, 0 | 1 | 2 | 4) {
        return Err(err(
            CUDA_ERROR_INVALID_VALUE,
            op,
            format!("context flags {flags:#x} are not CU_CTX_* flags with at most one scheduling flag"),
        ));
    }
    Ok(())
}

/// The body of every `cuCtxCreate`: a new context of `dev`, pushed onto the calling
/// thread's stack (it is then current).
fn create(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(pctx, op, "pctx")?;
    check_flags(flags, op)?;
    let d = s.device_id(i64::from(dev), op)?;
    let h = s.contexts.insert(ContextEntry::new(d, flags));
    if let Err(e) = push_current((d, h), op) {
        s.contexts.remove(h);
        return Err(e);
    }
    // SAFETY: non-null, and the caller passes a writable `CUcontext`.
    unsafe { pctx.write(h as CUcontext) };
    Ok(())
}

/// `CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)`: a new
/// context of `dev`, made current (pushed onto the thread's stack). `flags`: `CU_CTX_*`
/// with at most one scheduling flag (`CUDA_ERROR_INVALID_VALUE`); kept for
/// `cuCtxGetFlags`, without other effect.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult {
    const OP: &str = "cuCtxCreate_v2";
    ffi(OP, || create(pctx, flags, dev, OP))
}

/// `CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)`: CUDA 2.0's
/// variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult {
    const OP: &str = "cuCtxCreate";
    ffi(OP, || create(pctx, flags, dev, OP))
}

/// Refuses execution-affinity parameters (`CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY`, 224): the
/// emulator has no multiprocessors to partition. A negative count: `CUDA_ERROR_INVALID_VALUE`.
fn no_affinity(num: c_int, op: &'static str) -> mempool_hal::Result<()> {
    match num {
        0 => Ok(()),
        n if n < 0 => Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("numParams {n} is negative"))),
        n => Err(err(
            CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
            op,
            format!("{n} execution-affinity parameter(s): the emulated device has no multiprocessors to partition"),
        )),
    }
}

/// `CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int
/// numParams, unsigned int flags, CUdevice dev)`: as `cuCtxCreate_v2` with no parameters;
/// any parameter: `CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY` (224).
///
/// # Safety
///
/// See the module docs; `paramsArray` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v3(
    pctx: *mut CUcontext,
    _params: *mut c_void,
    num_params: c_int,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    const OP: &str = "cuCtxCreate_v3";
    ffi(OP, || {
        shim(OP)?;
        no_affinity(num_params, OP)?;
        create(pctx, flags, dev, OP)
    })
}

/// `CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned
/// int flags, CUdevice dev)` (`cuCtxCreate` in CUDA 13's `cuda.h`): as `cuCtxCreate_v2`;
/// `ctxCreateParams` may be NULL, execution-affinity parameters answer
/// `CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY` (224) and graphics (CIG) parameters
/// `CUDA_ERROR_NOT_SUPPORTED`.
///
/// # Safety
///
/// See the module docs; `ctxCreateParams` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v4(
    pctx: *mut CUcontext,
    params: *mut CUctxCreateParams,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    const OP: &str = "cuCtxCreate_v4";
    ffi(OP, || {
        shim(OP)?;
        if !params.is_null() {
            // SAFETY: non-null, and the caller passes a readable struct.
            let p = unsafe { params.read() };
            no_affinity(p.numExecAffinityParams, OP)?;
            if !p.cigParams.is_null() {
                return Err(err(CUDA_ERROR_NOT_SUPPORTED, OP, "CUDA-in-graphics contexts are not emulated"));
            }
        }
        create(pctx, flags, dev, OP)
    })
}

/// The body of both `cuCtxDestroy`s.
fn destroy(ctx: CUcontext, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let h = ctx as usize;
    if s.is_primary(h) {
        return Err(err(
            CUDA_ERROR_INVALID_CONTEXT,
            op,
            format!("{ctx:p} is a primary context: release it with cuDevicePrimaryCtxRelease"),
        ));
    }
    let c = s.context(h, op)?;
    s.dev(c.device).synchronize_device().map_err(|e| e.with_op(op))?;
    s.contexts.remove(h).ok_or_else(|| err(CUDA_ERROR_INVALID_CONTEXT, op, format!("context {ctx:p} is destroyed")))?;
    if current_context() == Some(h) {
        pop_current();
    }
    Ok(())
}

/// `CUresult cuCtxDestroy_v2(CUcontext ctx)`: waits for the device's work and destroys a
/// context `cuCtxCreate` made; where it is the calling thread's current context it is
/// popped (other threads that have it current get `CUDA_ERROR_INVALID_CONTEXT` from then
/// on). A primary context, garbage, a destroyed context: `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxDestroy_v2(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxDestroy_v2";
    ffi(OP, || destroy(ctx, OP))
}

/// `CUresult cuCtxDestroy(CUcontext ctx)`: CUDA 2.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxDestroy(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxDestroy";
    ffi(OP, || destroy(ctx, OP))
}

/// The body of both `cuCtxPushCurrent`s.
fn push(ctx: CUcontext, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(ctx, op, "ctx")?;
    let c = s.context(ctx as usize, op)?;
    push_current((c.device, ctx as usize), op)
}

/// `CUresult cuCtxPushCurrent_v2(CUcontext ctx)`: pushes `ctx` onto the calling thread's
/// context stack (it becomes current). NULL: `CUDA_ERROR_INVALID_VALUE`; not a usable
/// context: `CUDA_ERROR_INVALID_CONTEXT`; a stack of 64 already:
/// `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxPushCurrent_v2";
    ffi(OP, || push(ctx, OP))
}

/// `CUresult cuCtxPushCurrent(CUcontext ctx)`: CUDA 2.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxPushCurrent(ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxPushCurrent";
    ffi(OP, || push(ctx, OP))
}

/// The body of both `cuCtxPopCurrent`s.
fn pop(pctx: *mut CUcontext, op: &'static str) -> mempool_hal::Result<()> {
    shim(op)?;
    let (_, h) =
        pop_current().ok_or_else(|| err(CUDA_ERROR_INVALID_CONTEXT, op, "the thread's context stack is empty"))?;
    if !pctx.is_null() {
        // SAFETY: non-null, and the caller passes a writable `CUcontext`.
        unsafe { pctx.write(h as CUcontext) };
    }
    Ok(())
}

/// `CUresult cuCtxPopCurrent_v2(CUcontext *pctx)`: pops the calling thread's current
/// context (the one below becomes current) and writes it where `pctx` is not NULL. An empty
/// stack: `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CUresult {
    const OP: &str = "cuCtxPopCurrent_v2";
    ffi(OP, || pop(pctx, OP))
}

/// `CUresult cuCtxPopCurrent(CUcontext *pctx)`: CUDA 2.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxPopCurrent(pctx: *mut CUcontext) -> CUresult {
    const OP: &str = "cuCtxPopCurrent";
    ffi(OP, || pop(pctx, OP))
}

/// The body of both `cuCtxGetDevice`s.
fn get_device(device: *mut CUdevice, ctx: CUcontext, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(device, op, "device")?;
    let (_, c) = s.context_or_current(ctx as usize, op)?;
    // SAFETY: non-null, and the caller passes a writable `CUdevice`.
    unsafe { device.write(c.device as CUdevice) };
    Ok(())
}

/// `CUresult cuCtxGetDevice(CUdevice *device)`: the current context's device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    const OP: &str = "cuCtxGetDevice";
    ffi(OP, || get_device(device, std::ptr::null_mut(), OP))
}

/// `CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)` (CUDA 13.0's variant):
/// `ctx`'s device (NULL: the current context).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) -> CUresult {
    const OP: &str = "cuCtxGetDevice_v2";
    ffi(OP, || get_device(device, ctx, OP))
}

/// `CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)`: the API version
/// of `ctx` (NULL: the current context), the library's driver version (13050).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) -> CUresult {
    const OP: &str = "cuCtxGetApiVersion";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(version, OP, "version")?;
        s.context_or_current(ctx as usize, OP)?;
        // SAFETY: non-null, and the caller passes a writable `unsigned int`.
        unsafe { version.write(crate::table::TABLE_VERSION as c_uint) };
        Ok(())
    })
}

/// `CUresult cuCtxGetFlags(unsigned int *flags)`: the current context's flags (those it
/// was created with, or `cuCtxSetFlags`/`cuDevicePrimaryCtxSetFlags` set).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut c_uint) -> CUresult {
    const OP: &str = "cuCtxGetFlags";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(flags, OP, "flags")?;
        let (_, c) = s.context_or_current(0, OP)?;
        // SAFETY: non-null, and the caller passes a writable `unsigned int`.
        unsafe { flags.write(c.flags()) };
        Ok(())
    })
}

/// `CUresult cuCtxSetFlags(unsigned int flags)`: replaces the current context's flags
/// (checked as at creation).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxSetFlags(flags: c_uint) -> CUresult {
    const OP: &str = "cuCtxSetFlags";
    ffi(OP, || {
        let s = shim(OP)?;
        check_flags(flags, OP)?;
        let (_, c) = s.context_or_current(0, OP)?;
        c.set_flags(flags);
        Ok(())
    })
}

/// `CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)`: an id of `ctx` (NULL:
/// the current context) unique in the process: its handle value.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetId(ctx: CUcontext, id: *mut u64) -> CUresult {
    const OP: &str = "cuCtxGetId";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(id, OP, "ctxId")?;
        let (h, _) = s.context_or_current(ctx as usize, OP)?;
        // SAFETY: non-null, and the caller passes a writable `unsigned long long`.
        unsafe { id.write(h as u64) };
        Ok(())
    })
}

/// `CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)`:
/// the primary context's flags and whether it is retained (1) or not (0).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxGetState";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(flags, OP, "flags")?;
        non_null(active, OP, "active")?;
        let d = s.device_id(i64::from(dev), OP)?;
        let c =
            s.contexts.get(s.primary_context(d)).ok_or_else(|| err(CUDA_ERROR_UNKNOWN, OP, "no primary context"))?;
        // SAFETY: both non-null, and the caller passes a writable `unsigned int` and `int`.
        unsafe {
            flags.write(c.flags());
            active.write(c_int::from(s.is_active(d)));
        }
        Ok(())
    })
}

/// The body of both `cuDevicePrimaryCtxSetFlags`.
fn primary_set_flags(dev: CUdevice, flags: c_uint, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(dev), op)?;
    check_flags(flags, op)?;
    if let Some(c) = s.contexts.get(s.primary_context(d)) {
        c.set_flags(flags);
    }
    Ok(())
}

/// `CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)`: the primary
/// context's flags (checked as at `cuCtxCreate`), active or not.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxSetFlags_v2";
    ffi(OP, || primary_set_flags(dev, flags, OP))
}

/// `CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)`: CUDA 7.0's
/// variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxSetFlags(dev: CUdevice, flags: c_uint) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxSetFlags";
    ffi(OP, || primary_set_flags(dev, flags, OP))
}

/// The body of both `cuDevicePrimaryCtxReset`s.
fn primary_reset(dev: CUdevice, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let d = s.device_id(i64::from(dev), op)?;
    s.dev(d).synchronize_device().map_err(|e| e.with_op(op))?;
    if let Some(c) = s.contexts.get(s.primary_context(d)) {
        c.set_flags(0);
    }
    Ok(())
}

/// `CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)`: waits for the device's work and
/// resets the primary context's flags to 0; its retains are kept. Unlike the driver, the
/// device's allocations, streams and events stay valid (they belong to the device here).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxReset_v2";
    ffi(OP, || primary_reset(dev, OP))
}

/// `CUresult cuDevicePrimaryCtxReset(CUdevice dev)`: CUDA 7.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset(dev: CUdevice) -> CUresult {
    const OP: &str = "cuDevicePrimaryCtxReset";
    ffi(OP, || primary_reset(dev, OP))
}
