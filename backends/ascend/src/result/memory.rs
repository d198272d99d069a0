//! Work on device memory in stream order: `aclrtMemcpyAsync`, `aclrtMemsetAsync`, and
//! `aclrtLaunchHostFunc`; page-locked host memory for staging: `aclrtMallocHost`,
//! `aclrtFreeHost`.

use super::{host_kind, pointer_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_backend_kit::host_fn;
use mempool_backend_kit::pinned::{self, PageLockedHost};
use mempool_hal::{HostFn, Result, code};
use std::ffi::c_void;

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

/// `aclrtLaunchHost/// `aclrtLaunchHostFunc`: runs `f` once when `stream` reaches it, through the kit's
/// [trampoline](mempool_backend_kit::host_fn::launch) (a panic in `f` is caught; a failed
/// launch drops `f` without running it).
#[inline]
pub(crate) fn launch_host_func(rt: &Runtime, stream: sys::aclrtStream, f: HostFn) -> Result<()> {
    let launch = sym!(rt, aclrtLaunchHostFunc)?;
    let rc = host_fn::launch(f, code::ACL_SUCCESS, |tramp, args| {
        // SAFETY: the caller passes a live stream; the trampoline matches `aclrtCallback`;
        // the runtime calls it once with `args` when it answers success.
        unsafe { launch(stream, Some(tramp), args) }
    });
    rt.check(rc, "aclrtLaunchHostFunc")
}

/// A page-locked host buffer from `aclrtMallocHost` (the kit's [`pinned::PinnedHost`]).
pub(crate) type PinnedHost = pinned::PinnedHost<MallocHost>;

/// `aclrtMallocHost` and `aclrtFreeHost`, for [`PinnedHost`].
#[derive(Debug)]
pub(crate) enum MallocHost {}

impl PageLockedHost for MallocHost {
    type Host = Runtime;

    /// `aclrtMallocHost` of `len` bytes (the caller has made a context current, which CANN
    /// needs). A failure to get host memory (207001) is `HostAllocation`.
    #[inline]
    fn alloc(rt: &Runtime, len: usize) -> Result<*mut c_void> {
        let f = sym!(rt, aclrtMallocHost)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { f(&mut p, len) };
        rt.check_with(rc, "aclrtMallocHost", host_kind)?;
        Ok(p)
    }

    /// `aclrtFreeHost` (on a user thread, never inside a host function).
    #[inline]
    unsafe fn free(rt: &Runtime, ptr: *mut c_void) -> Result<()> {
        let f = sym!(rt, aclrtFreeHost)?;
        // SAFETY: the caller passes memory from `aclrtMallocHost` of this runtime, unused
        // and freed once.
        rt.check(unsafe { f(ptr) }, "aclrtFreeHost")
    }
}
