//! Contexts: each device's primary context (retained and released, counted), the calling
//! thread's current context, and the context synchronization.
//!
//! There is one context per device, its primary context, whose handle stays the same for
//! the life of the process. Releasing its last retain synchronizes the device and makes it
//! inactive: calls that need a current context answer `CUDA_ERROR_INVALID_CONTEXT` while it
//! is current, until it is retained again. Unlike the driver, the streams, events and pools
//! made in it stay valid.

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
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.device_id(i64::from(dev), OP)?;
        if s.release(d, OP)? == 0 {
            s.dev(d).synchronize_device().map_err(|e| e.with_op(OP))?;
        }
        Ok(())
    })
}

/// `CUresult cuCtxSetCurrent(CUcontext ctx)`: makes a retained primary context current on
/// the calling thread; NULL makes none current. A handle that is not a context, or a
/// context whose every retain was released: `CUDA_ERROR_INVALID_CONTEXT`.
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
        let d = s.contexts.get(ctx as usize).ok_or_else(|| {
            err(
                CUDA_ERROR_INVALID_CONTEXT,
                OP,
                format!("{ctx:p} is not a context (garbage, or another kind of handle)"),
            )
        })?;
        if !s.is_active(d) {
            return Err(err(
                CUDA_ERROR_INVALID_CONTEXT,
                OP,
                format!("the primary context of device {d} is not retained (cuDevicePrimaryCtxRetain first)"),
            ));
        }
        set_current(Some((d, ctx as usize)));
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
