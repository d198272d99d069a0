//! Work on device memory in stream order: `cuMemcpyHtoDAsync_v2`,
//! `cuMemcpyDtoHAsync_v2`, `cuMemcpyDtoDAsync_v2`, `cuMemsetD8Async`, and
//! `cuLaunchHostFunc`; page-locked host memory for staging: `cuMemAllocHost_v2`,
//! `cuMemFreeHost`.

use super::{host_kind, pointer_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_backend_kit::staging::{HostBytes, PinnedBuffer};
use mempool_hal::{HostFn, Result};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// `cuMemcpyHtoDAsync_v2` of `n` bytes from page-locked host memory at `src`. A range
/// outside live device memory is `InvalidPointer`.
#[inline]
pub(crate) fn memcpy_htod_async(
    rt: &Runtime,
    dst: sys::CUdeviceptr,
    src: &PinnedHost,
    n: usize,
    stream: sys::CUstream,
) -> Result<()> {
    let f = sym!(rt, cuMemcpyHtoDAsync_v2)?;
    debug_assert!(n <= src.size());
    // SAFETY: the driver checks the device range; `src` holds at least `n` bytes and the
    // caller keeps it alive until the copy has run (it moves into a host function ordered
    // after the copy); the caller passes a live stream.
    let rc = unsafe { f(dst, src.as_ptr(), n, stream) };
    rt.check_with(rc, "cuMemcpyHtoDAsync_v2", pointer_kind)
}

/// `cuMemcpyDtoHAsync_v2` of `n` bytes into page-locked host memory at `dst`. A range
/// outside live device memory is `InvalidPointer`.
#[inline]
pub(crate) fn memcpy_dtoh_async(
    rt: &Runtime,
    dst: &PinnedHost,
    src: sys::CUdeviceptr,
    n: usize,
    stream: sys::CUstream,
) -> Result<()> {
    let f = sym!(rt, cuMemcpyDtoHAsync_v2)?;
    debug_assert!(n <= dst.size());
    // SAFETY: the driver checks the device range; `dst` holds at least `n` bytes and the
    // caller keeps it alive, unread, until the copy has run (it moves into a host function
    // ordered after the copy); the caller passes a live stream.
    let rc = unsafe { f(dst.as_ptr(), src, n, stream) };
    rt.check_with(rc, "cuMemcpyDtoHAsync_v2", pointer_kind)
}

/// `cuMemcpyDtoDAsync_v2` of `n` bytes. A range outside live device memory is
/// `InvalidPointer`.
#[inline]
pub(crate) fn memcpy_dtod_async(
    rt: &Runtime,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    n: usize,
    stream: sys::CUstream,
) -> Result<()> {
    let f = sym!(rt, cuMemcpyDtoDAsync_v2)?;
    // SAFETY: both addresses are device memory, which the driver checks; the caller
    // passes a live stream.
    let rc = unsafe { f(dst, src, n, stream) };
    rt.check_with(rc, "cuMemcpyDtoDAsync_v2", pointer_kind)
}

/// `cuMemsetD8Async` of `n` bytes to `value`. A range outside live device memory is
/// `InvalidPointer`.
#[inline]
pub(crate) fn memset_d8_async(
    rt: &Runtime,
    dst: sys::CUdeviceptr,
    value: u8,
    n: usize,
    stream: sys::CUstream,
) -> Result<()> {
    let f = sym!(rt, cuMemsetD8Async)?;
    // SAFETY: the driver checks the device range; the caller passes a live stream.
    let rc = unsafe { f(dst, value, n, stream) };
    rt.check_with(rc, "cuMemsetD8Async", pointer_kind)
}

/// `cuLaunchHostFunc`: runs `f` once when `stream` reaches it. A panic in `f` is caught
/// before it could unwind into the driver's C frames; a failed launch drops `f` without
/// running it. The driver forbids CUDA calls inside a host function.
#[inline]
pub(crate) fn launch_host_func(rt: &Runtime, stream: sys::CUstream, f: HostFn) -> Result<()> {
    unsafe extern "C" fn trampoline(user_data: *mut c_void) {
        // SAFETY: `user_data` is the `Box<HostFn>` leaked by `launch_host_func`, and the
        // driver calls each host function exactly once.
        let f = unsafe { Box::from_raw(user_data.cast::<HostFn>()) };
        // A panic must not unwind into the driver's C frames.
        let _ = catch_unwind(AssertUnwindSafe(f));
    }
    let launch = sym!(rt, cuLaunchHostFunc)?;
    let user_data = Box::into_raw(Box::new(f));
    // SAFETY: the caller passes a live stream; `trampoline` matches `CUhostFn`;
    // `user_data` stays valid until the trampoline takes it back.
    let rc = unsafe { launch(stream, Some(trampoline), user_data.cast()) };
    if rc != sys::CUDA_SUCCESS {
        // SAFETY: the launch failed, so the driver will never call the trampoline: the box
        // is still ours.
        drop(unsafe { Box::from_raw(user_data) });
    }
    rt.check(rc, "cuLaunchHostFunc")
}

/// A page-locked host buffer from `cuMemAllocHost_v2`, owned: whoever holds it may read
/// and write it, and a copy queued on it keeps it (moved into the host function ordered
/// after the copy) until that copy has run.
///
/// Dropping it leaks it: freeing needs the driver, and the driver forbids CUDA calls
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
        // SAFETY: `addr` is `len` bytes of host memory from `cuMemAllocHost_v2`, owned by
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

    /// `cuMemAllocHost_v2` of `len` bytes (the caller has made a context current, which the
    /// driver needs). Host memory exhausted (2) is `HostAllocation`.
    #[inline]
    fn alloc(rt: &Runtime, len: usize) -> Result<PinnedHost> {
        let f = sym!(rt, cuMemAllocHost_v2)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { f(&mut p, len) };
        rt.check_with(rc, "cuMemAllocHost_v2", host_kind)?;
        Ok(PinnedHost { addr: p as usize, len })
    }

    /// `cuMemFreeHost` of the buffer (on a user thread, never inside a host function).
    #[inline]
    fn free(self, rt: &Runtime) -> Result<()> {
        let f = sym!(rt, cuMemFreeHost)?;
        // SAFETY: the buffer came from `cuMemAllocHost_v2` of this driver and is owned, so
        // no queued copy uses it any more; it is consumed, so it is freed once.
        rt.check(unsafe { f(self.as_ptr()) }, "cuMemFreeHost")
    }

    /// Its size in bytes.
    #[inline]
    fn size(&self) -> usize {
        self.len
    }
}
