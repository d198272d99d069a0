//! Raw-pointer copies for C callers (the drop-in ACL library): one side of a copy may be
//! host memory the caller vouches for, the other device memory the emulator checks.

use crate::device::check_stream;
use crate::pool::PoolShared;
use crate::{EmuStream, Emulator};
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};
use std::sync::Arc;

/// One side of a raw copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mem {
    /// Host memory at this address: the caller guarantees it is valid for the copy's
    /// length until the copy has run.
    Host(*mut u8),
    /// Device memory: checked to lie inside one live allocation.
    Device(DevicePtr),
}

/// A side resolved and checked; host addresses travel as integers so the work is `Send`.
pub(crate) enum Side {
    Host(usize),
    Device(Arc<PoolShared>, u64),
}

impl Emulator {
    /// Whether `[addr, addr + len)` lies inside one live allocation of a pool of this
    /// platform (so it is device memory).
    pub fn is_device_memory(&self, addr: DevicePtr, len: u64) -> bool {
        self.platform
            .pool_at(addr.addr())
            .is_some_and(|p| p.check_live(addr.addr(), len.max(1), "is_device_memory").is_ok())
    }

    /// Frees `ptr` in stream order on `stream`, whichever pool of the platform holds it
    /// (as `aclrtMemPoolFreeAsync` does: it takes no pool).
    ///
    /// # Errors
    ///
    /// As [`mempool_hal::MemPool::free_async`].
    pub fn free(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        let s = check_stream(&self.platform, stream, "free_async")?;
        self.platform.free(ptr, s)
    }

    /// Whether `addr` lies in the address range of any pool of this platform (live or not).
    pub fn is_pool_address(&self, addr: DevicePtr) -> bool {
        self.platform.pool_at(addr.addr()).is_some()
    }

    pub(crate) fn side(&self, m: Mem, len: u64, op: &'static str) -> Result<Side> {
        match m {
            Mem::Host(p) if p.is_null() => {
                Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, "null host pointer"))
            }
            Mem::Host(p) => Ok(Side::Host(p as usize)),
            Mem::Device(d) => {
                let pool = self.platform.pool_at(d.addr()).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidPointer,
                        code::ACL_ERROR_RT_PARAM_INVALID,
                        op,
                        format!("{d} is not device memory"),
                    )
                })?;
                pool.check_live(d.addr(), len, op)?;
                Ok(Side::Device(pool, d.addr()))
            }
        }
    }

    /// Copies `len` bytes from `src` to `dst` in stream order on `stream`.
    ///
    /// # Safety
    ///
    /// Every [`Mem::Host`] side must be valid for `len` bytes (readable for `src`,
    /// writable for `dst`) until the copy has run on the stream, and not be written by
    /// anyone else meanwhile.
    ///
    /// # Errors
    ///
    /// A device side outside live memory: `InvalidPointer` (107000); a null host side:
    /// `InvalidParam` (100000); a destroyed stream: `InvalidHandle` (107017).
    pub unsafe fn memcpy_raw_async(&self, dst: Mem, src: Mem, len: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memcpy_raw_async";
        let s = check_stream(&self.platform, stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let (d, sr) = (self.side(dst, len, OP)?, self.side(src, len, OP)?);
        s.push(Box::new(move || {
            // SAFETY: the caller of `memcpy_raw_async` guaranteed the host sides stay
            // valid until this work runs.
            unsafe { copy(d, sr, len, OP) }
        }));
        Ok(())
    }

    /// Copies `len` bytes from `src` to `dst` now, on the calling thread.
    ///
    /// # Safety
    ///
    /// Every [`Mem::Host`] side must be valid for `len` bytes for the duration of the call.
    ///
    /// # Errors
    ///
    /// As [`Emulator::memcpy_raw_async`].
    pub unsafe fn memcpy_raw(&self, dst: Mem, src: Mem, len: u64) -> Result<()> {
        const OP: &str = "memcpy_raw";
        if len == 0 {
            return Ok(());
        }
        let (d, s) = (self.side(dst, len, OP)?, self.side(src, len, OP)?);
        // SAFETY: the caller guarantees the host sides for the duration of the call.
        unsafe { copy(d, s, len, OP) }
    }

    /// Sets `len` bytes of device memory at `dst` to `value` now, on the calling thread.
    ///
    /// # Errors
    ///
    /// A range outside live memory: `InvalidPointer` (107000).
    pub fn memset_now(&self, dst: DevicePtr, value: u8, len: u64) -> Result<()> {
        const OP: &str = "memset";
        if len == 0 {
            return Ok(());
        }
        let Side::Device(pool, addr) = self.side(Mem::Device(dst), len, OP)? else { unreachable!("a device side") };
        pool.with_memory(addr, len, OP, |p| {
            // SAFETY: the range is committed read/write memory, locked against release.
            unsafe { std::ptr::write_bytes(p, value, len as usize) }
        })
    }
}

/// Performs a resolved copy.
///
/// # Safety
///
/// Host sides must be valid for `len` bytes.
pub(crate) unsafe fn copy(dst: Side, src: Side, len: u64, op: &'static str) -> Result<()> {
    let n = len as usize;
    match (dst, src) {
        (Side::Host(d), Side::Host(s)) => {
            // SAFETY: both host ranges are valid for `n` bytes (caller's guarantee); `copy`
            // allows overlap.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, n) };
            Ok(())
        }
        (Side::Device(p, a), Side::Host(s)) => p.with_memory(a, len, op, |dp| {
            // SAFETY: the device range is committed and locked; the host range is valid.
            unsafe { std::ptr::copy(s as *const u8, dp, n) }
        }),
        (Side::Host(d), Side::Device(p, a)) => p.with_memory(a, len, op, |sp| {
            // SAFETY: the device range is committed and locked; the host range is valid.
            unsafe { std::ptr::copy(sp.cast_const(), d as *mut u8, n) }
        }),
        (Side::Device(dp, da), Side::Device(sp, sa)) => {
            let mut tmp = vec![0u8; n];
            sp.with_memory(sa, len, op, |p| {
                // SAFETY: the source range is committed and locked; `tmp` holds `n` bytes.
                unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), tmp.as_mut_ptr(), n) }
            })?;
            dp.with_memory(da, len, op, |p| {
                // SAFETY: the destination range is committed and locked; `tmp` holds `n` bytes.
                unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), p, n) }
            })
        }
    }
}
