//! Work on device memory in stream order: `aclrtMemcpyAsync`, `aclrtMemsetAsync`, and
//! `aclrtLaunchHostFunc`; page-locked host memory for staging: `aclrtMallocHost`,
//! `aclrtFreeHost`.

use super::{host_kind, pointer_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_backend_kit::staging::{HostBytes, PinnedBuffer};
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

/// A page-locked host buffer from `aclrtMallocHost`, owned: whoever holds it may read and
/// write it, and a copy queued on it keeps it (moved into the host function ordered after
/// the copy) until that copy has run.
///
/// Dropping it leaks it: freeing needs the runtime, and CANN forbids `aclrtFreeHost`
/// inside a host function, where buffers come back. Give it to [`PinnedBuffer::free`] on a
/// user thread.
#[derive(Debug)]
pub(crate) struct PinnedHost {
    addr: usize,
    len: usize,
}

impl PinnedHost {
    /// Its address, for a copy's host side.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut c_void {
        self.addr as *mut c_void
    }
}

impl HostBytes for PinnedHost {
    /// Copies `src` into the start of the buffer (at most its length).
    #[inline]
    fn fill_from(&mut self, src: &[u8]) {
        let n = src.len().min(self.len);
        // SAFETY: `addr` is `len` bytes of host memory from `aclrtMallocHost`, owned by
        // `self` (no queued copy uses it: a copy keeps the buffer until it has run), and
        // `src` cannot overlap it.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.addr as *mut u8, n) };
    }

    /// Copies the start of the buffer into `dst` (at most its length).
    #[inline]
    fn copy_to(&self, dst: &mut [u8]) {
        let n = dst.len().min(self.len);
        // SAFETY: as in `fill_from`; the copy that wrote the buffer has run.
        unsafe { std::ptr::copy_nonoverlapping(self.addr as *const u8, dst.as_mut_ptr(), n) };
    }
}

impl PinnedBuffer for PinnedHost {
    type Host = Runtime;
    type Error = mempool_hal::Error;

    /// `aclrtMallocHost` of `len` bytes (the caller has made a context current, which CANN
    /// needs). A failure to get host memory (207001) is `HostAllocation`.
    #[inline]
    fn alloc(rt: &Runtime, len: usize) -> Result<PinnedHost> {
        let f = sym!(rt, aclrtMallocHost)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { f(&mut p, len) };
        rt.check_with(rc, "aclrtMallocHost", host_kind)?;
        Ok(PinnedHost { addr: p as usize, len })
    }

    /// `aclrtFreeHost` of the buffer (on a user thread, never inside a host function).
    #[inline]
    fn free(self, rt: &Runtime) -> Result<()> {
        let f = sym!(rt, aclrtFreeHost)?;
        // SAFETY: the buffer came from `aclrtMallocHost` of this runtime and is owned, so
        // no queued copy uses it any more; it is consumed, so it is freed once.
        rt.check(unsafe { f(self.as_ptr()) }, "aclrtFreeHost")
    }

    /// Its size in bytes.
    #[inline]
    fn size(&self) -> usize {
        self.len
    }
}
