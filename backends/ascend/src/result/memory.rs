//! Work on device memory in stream order: `aclrtMemcpyAsync`, `aclrtMemsetAsync`, and
//! `aclrtLaunchHostFunc`.

use super::pointer_kind;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{HostFn, Result, code};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// `aclrtMemcpyAsync` of `n` bytes (`destMax` is `n`) in direction `kind`. A range
/// outside live device memory is `InvalidPointer`.
#[inline]
pub(crate) fn memcpy_async(
    rt: &Runtime,
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> Result<()> {
    let f = sym!(rt, aclrtMemcpyAsync)?;
    // SAFETY: the caller passes device addresses the runtime checks, host buffers it
    // keeps alive until the copy has run (staging owned by a later host function), and a
    // live stream.
    let rc = unsafe { f(dst, n, src, n, kind, stream) };
    rt.check_with(rc, "aclrtMemcpyAsync", pointer_kind)
}

/// `aclrtMemsetAsync` of `n` bytes (`maxCount` is `n`) to `value`. A range outside live
/// device memory is `InvalidPointer`.
#[inline]
pub(crate) fn memset_async(
    rt: &Runtime,
    dst: *mut c_void,
    value: i32,
    n: usize,
    stream: sys::aclrtStream,
) -> Result<()> {
    let f = sym!(rt, aclrtMemsetAsync)?;
    // SAFETY: the runtime checks the device range; the caller passes a live stream.
    let rc = unsafe { f(dst, n, value, n, stream) };
    rt.check_with(rc, "aclrtMemsetAsync", pointer_kind)
}

/// `aclrtLaunchHostFunc`: runs `f` once when `stream` reaches it. A panic in `f` is
/// caught before it could unwind into the runtime's C frames; a failed launch drops `f`
/// without running it.
#[inline]
pub(crate) fn launch_host_func(rt: &Runtime, stream: sys::aclrtStream, f: HostFn) -> Result<()> {
    unsafe extern "C" fn trampoline(args: *mut c_void) {
        // SAFETY: `args` is the `Box<HostFn>` leaked by `launch_host_func`, and the runtime
        // calls each host function exactly once.
        let f = unsafe { Box::from_raw(args.cast::<HostFn>()) };
        // A panic must not unwind into the runtime's C frames.
        let _ = catch_unwind(AssertUnwindSafe(f));
    }
    let launch = sym!(rt, aclrtLaunchHostFunc)?;
    let args = Box::into_raw(Box::new(f));
    // SAFETY: the caller passes a live stream; `trampoline` matches `aclrtHostFunc`; `args`
    // stays valid until the trampoline takes it back.
    let rc = unsafe { launch(stream, Some(trampoline), args.cast()) };
    if rc != code::ACL_SUCCESS {
        // SAFETY: the launch failed, so the runtime will never call the trampoline: the
        // box is still ours.
        drop(unsafe { Box::from_raw(args) });
    }
    rt.check(rc, "aclrtLaunchHostFunc")
}
