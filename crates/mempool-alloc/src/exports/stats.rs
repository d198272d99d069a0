//! `mempool_stats` and `mempool_reset_peak_stats`.

use crate::error::AllocError;
use crate::ffi::guard;
use crate::state::allocator;
use crate::stats::{STATS_HEADER, STATS_SIZE, STATS_VERSION, Stats};
use std::ffi::c_int;

/// `int mempool_stats(int device, mempool_alloc_stats *out)`: fills `out` with `device`'s
/// statistics. The caller sets `out->version` (1 or later) and `out->size` (at least the
/// 8 bytes of those two fields); the library writes at most `size` bytes, then its own
/// version and the bytes written. 0 on success; -1 for NULL, version 0, a size below 8 or
/// an unknown device (nothing is written then).
///
/// # Safety
///
/// `out` is NULL or valid for reading 8 bytes and writing `out->size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_stats(device: c_int, out: *mut Stats) -> c_int {
    guard("mempool_stats", -1, || {
        if out.is_null() {
            return Err(AllocError::Invalid("out is NULL".into()));
        }
        let header = out.cast::<u32>();
        // SAFETY: `out` is valid for reading its two leading `u32` fields (the caller's
        // promise); read unaligned in case the caller's buffer is not 8-aligned.
        let (version, size) = unsafe { (header.read_unaligned(), header.add(1).read_unaligned()) };
        if version == 0 || size < STATS_HEADER {
            return Err(AllocError::Invalid(format!(
                "version {version}, size {size}: set version to {STATS_VERSION} and size to {STATS_SIZE} \
                 (sizeof(mempool_alloc_stats))"
            )));
        }
        let mut stats = allocator()?.device(device.into())?.stats()?;
        let n = size.min(STATS_SIZE);
        stats.size = n;
        // SAFETY: `stats` is a plain `repr(C)` struct of `STATS_SIZE` bytes; `out` is valid
        // for writing `size` bytes (the caller's promise), and `n` is at most both.
        unsafe { std::ptr::copy_nonoverlapping((&raw const stats).cast::<u8>(), out.cast::<u8>(), n as usize) };
        Ok(0)
    })
}

/// `int mempool_reset_peak_stats(int device)`: torch_npu's `reset_peak_status` hook: the
/// high-water marks of USED, RESERVED, requested and held bytes restart from their current
/// values. 0 on success; -1 for an unknown device or a backend failure.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_reset_peak_stats(device: c_int) -> c_int {
    guard("mempool_reset_peak_stats", -1, || {
        allocator()?.device(device.into())?.reset_peak()?;
        Ok::<c_int, AllocError>(0)
    })
}
