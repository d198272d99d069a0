//! Work on device memory in stream order: `cuMemcpyHtoDAsync_v2`,
//! `cuMemcpyDtoHAsync_v2`, `cuMemcpyDtoDAsync_v2`, `cuMemsetD8Async`, and
//! `cuLaunchHostFunc`; page-locked host memory for staging: `cuMemAllocHost_v2`,
//! `cuMemFreeHost`.

use super::{host_kind, pointer_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_backend_kit::host_fn;
use mempool_backend_kit::pinned::{self, PageLockedHost};
use mempool_backend_kit::staging::PinnedBuffer;
use mempool_hal::{HostFn, Result};
use std::ffi::c_void;

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

/// `cuLaunchHostFunc`: runs `f` once when `stream` reaches it, through the kit's
/// [trampoline](mempool_backend_kit::host_fn::launch) (a panic in `f` is caught; a failed
/// launch drops `f` without running it). The driver forbids CUDA calls inside a host
/// function.
#[inline]
pub(crate) fn launch_host_func(rt: &Runtime, stream: sys::CUstream, f: HostFn) -> Result<()> {
    let launch = sym!(rt, cuLaunchHostFunc)?;
    let rc = host_fn::launch(f, sys::CUDA_SUCCESS, |tramp, user_data| {
        // SAFETY: the caller passes a live stream; the trampoline matches `CUhostFn`; the
        // driver calls it once with `user_data` when it answers success.
        unsafe { launch(stream, Some(tramp), user_data) }
    });
    rt.check(rc, "cuLaunchHostFunc")
}

/// A page-locked host buffer from `cuMemAllocHost_v2` (the kit's [`pinned::PinnedHost`]).
pub(crate) type PinnedHost = pinned::PinnedHost<MemAllocHost>;

/// `cuMemAllocHost_v2` and `cuMemFreeHost`, for [`PinnedHost`].
#[derive(Debug)]
pub(crate) enum MemAllocHost {}

impl PageLockedHost for MemAllocHost {
    type Host = Runtime;

    /// `cuMemAllocHost_v2` of `len` bytes (the caller has made a context current, which the
    /// driver needs). Host memory exhausted (2) is `HostAllocation`.
    #[inline]
    fn alloc(rt: &Runtime, len: usize) -> Result<*mut c_void> {
        let f = sym!(rt, cuMemAllocHost_v2)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { f(&mut p, len) };
        rt.check_with(rc, "cuMemAllocHost_v2", host_kind)?;
        Ok(p)
    }

    /// `cuMemFreeHost` (on a user thread, never inside a host function).
    #[inline]
    unsafe fn free(rt: &Runtime, ptr: *mut c_void) -> Result<()> {
        let f = sym!(rt, cuMemFreeHost)?;
        // SAFETY: the caller passes memory from `cuMemAllocHost_v2` of this driver, unused
        // and freed once.
        rt.check(unsafe { f(ptr) }, "cuMemFreeHost")
    }
}
