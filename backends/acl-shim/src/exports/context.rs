//! Contexts: creating, destroying, and the calling thread's current context.

use super::prelude::*;

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

/// `aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)`: a handle of the current
/// device's default stream (the stream a NULL handle names; all contexts of a device share
/// it here). It cannot be destroyed (107000). NULL: 100000; no current context: 107002.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) -> aclError {
    const OP: &str = "aclrtCtxGetCurrentDefaultStream";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let h = s.default_stream_handle(current(OP)?)?;
        // SAFETY: non-null, and the caller passes a writable `aclrtStream`.
        unsafe { stream.write(h as aclrtStream) };
        Ok(())
    })
}
