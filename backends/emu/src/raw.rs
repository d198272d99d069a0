//! Checked access to device memory: copies with raw host pointers for C callers (the
//! drop-in ACL library), and host functions that declare the device memory they use
//! ("kernels"). Every device range goes through the stream-order checker.

use crate::Emulator;
use crate::pool::shared::{PoolShared, Touch, check_now, enqueue_touching};
use crate::stream::EmuStream;
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};
use std::sync::Arc;

/// One side of a raw copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mem {
    /// Host memory at this address: the caller guarantees it is valid for the copy's
    /// length until the copy has run.
    Host(*mut u8),
    /// Device memory: checked to lie inside one live allocation, ordered after it.
    Device(DevicePtr),
}

/// Device memory a kernel declares it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads `len` bytes at the pointer.
    Read(DevicePtr, u64),
    /// Writes (and may read) `len` bytes at the pointer.
    Write(DevicePtr, u64),
}

/// A side resolved; host addresses travel as integers so the work is `Send`.
pub(crate) enum Side {
    Host(usize),
    Device(Arc<PoolShared>, u64),
}

/// The device memory a kernel declared, for it to read and write while it runs.
#[derive(Debug)]
pub struct KernelMem {
    touches: Vec<Touch>,
}

impl KernelMem {
    fn find(&self, ptr: DevicePtr, len: u64, write: bool) -> Result<&Touch> {
        let end = ptr.addr().checked_add(len);
        self.touches
            .iter()
            .find(|t| ptr.addr() >= t.addr && end.is_some_and(|e| e <= t.addr + t.len) && (t.write || !write))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::StreamOrderViolation,
                    code::ACL_ERROR_RT_PARAM_INVALID,
                    "launch_kernel",
                    format!(
                        "the kernel {} [{ptr}, +{len}), which it did not declare",
                        if write { "writes" } else { "reads" }
                    ),
                )
            })
    }

    /// Reads `len` bytes of declared device memory.
    ///
    /// # Errors
    ///
    /// A range the kernel did not declare: `StreamOrderViolation`.
    pub fn read(&self, ptr: DevicePtr, len: u64) -> Result<Vec<u8>> {
        let t = self.find(ptr, len, false)?;
        let mut out = vec![0u8; len as usize];
        t.pool.with_memory(ptr.addr(), len, "launch_kernel", |p| {
            // SAFETY: the range is committed and locked (`with_memory`); `out` holds `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), out.as_mut_ptr(), out.len()) }
        })?;
        Ok(out)
    }

    /// Writes `data` to declared (write) device memory at `ptr`.
    ///
    /// # Errors
    ///
    /// A range the kernel did not declare for writing: `StreamOrderViolation`.
    pub fn write(&self, ptr: DevicePtr, data: &[u8]) -> Result<()> {
        let t = self.find(ptr, data.len() as u64, true)?;
        t.pool.with_memory(ptr.addr(), data.len() as u64, "launch_kernel", |p| {
            // SAFETY: the range is committed and locked (`with_memory`); `data` is a
            // separate host slice of that length.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) }
        })
    }
}

impl Emulator {
    /// Whether `[addr, addr + len)` lies inside one live allocation of a pool of this
    /// platform (so it is device memory).
    pub fn is_device_memory(&self, addr: DevicePtr, len: u64) -> bool {
        self.platform.registry.pool_at(addr.addr()).is_some_and(|p| p.is_live(addr.addr(), len.max(1)))
    }

    /// Frees `ptr` in stream order on `stream`, whichever pool of the platform holds it
    /// (as `aclrtMemPoolFreeAsync` does: it takes no pool).
    ///
    /// # Errors
    ///
    /// As [`mempool_hal::MemPool::free_async`].
    pub fn free(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.platform.id, "free_async")?;
        self.platform.registry.free_async(ptr, s)
    }

    /// Whether `addr` is device memory of this platform: it lies in a live pool's range, or
    /// in the range of a destroyed pool (a pointer that outlived its pool, which copies and
    /// accesses then refuse) while the emulator still holds or keeps that range, or nothing
    /// in the process has mapped it since. The range of a destroyed pool goes back to the
    /// host only after many later pools are dropped, and once the host maps it again it is
    /// host memory.
    pub fn is_pool_address(&self, addr: DevicePtr) -> bool {
        let a = addr.addr();
        let kept = |held: bool| held || crate::pool::quarantined(a) || !host_mapped(a);
        self.platform.registry.pool_at(a).is_some() || self.platform.registry.destroyed_at(a).is_some_and(kept)
    }

    /// Resolves a device range to its pool; the checks come when it is enqueued.
    pub(crate) fn touch(&self, ptr: DevicePtr, len: u64, write: bool, op: &'static str) -> Result<Touch> {
        match self.platform.registry.pool_at(ptr.addr()) {
            Some(pool) => Ok(Touch { pool, addr: ptr.addr(), len, write }),
            None if self.platform.config.checker && self.platform.registry.was_destroyed(ptr.addr()) => {
                Err(Error::new(
                    ErrorKind::StreamOrderViolation,
                    code::ACL_ERROR_RT_PARAM_INVALID,
                    op,
                    format!("{op} touches {ptr}: memory of a destroyed pool"),
                ))
            }
            None => Err(Error::new(
                ErrorKind::InvalidPointer,
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!("{ptr} is not device memory"),
            )),
        }
    }

    fn side(&self, m: Mem, len: u64, write: bool, op: &'static str, touches: &mut Vec<Touch>) -> Result<Side> {
        match m {
            Mem::Host(p) if p.is_null() => {
                Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, "null host pointer"))
            }
            Mem::Host(p) => Ok(Side::Host(p as usize)),
            Mem::Device(d) => {
                let t = self.touch(d, len, write, op)?;
                let side = Side::Device(Arc::clone(&t.pool), d.addr());
                touches.push(t);
                Ok(side)
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
    /// A device side outside live memory: `InvalidPointer` (107000); one the stream is
    /// not ordered after, or freed: `StreamOrderViolation` (107000); a null host side:
    /// `InvalidParam` (100000); a destroyed stream: `InvalidHandle` (107017).
    pub unsafe fn memcpy_raw_async(&self, dst: Mem, src: Mem, len: u64, stream: &EmuStream) -> Result<()> {
        self.copy_async(dst, src, len, stream, "memcpy_async")
    }

    pub(crate) fn copy_async(&self, dst: Mem, src: Mem, len: u64, stream: &EmuStream, op: &'static str) -> Result<()> {
        let s = stream.live(self.platform.id, op)?;
        if len == 0 {
            return Ok(());
        }
        let mut touches = Vec::new();
        let d = self.side(dst, len, true, op, &mut touches)?;
        let sr = self.side(src, len, false, op, &mut touches)?;
        enqueue_touching(
            s,
            &touches,
            op,
            Box::new(move || {
                // SAFETY: the callers guarantee the host sides stay valid until this work
                // runs (`memcpy_raw_async`'s contract, or buffers the work owns).
                unsafe { copy(d, sr, len, op) }
            }),
        )
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
        const OP: &str = "memcpy";
        if len == 0 {
            return Ok(());
        }
        let mut touches = Vec::new();
        let d = self.side(dst, len, true, OP, &mut touches)?;
        let s = self.side(src, len, false, OP, &mut touches)?;
        check_now(&touches, OP)?;
        // SAFETY: the caller guarantees the host sides for the duration of the call.
        unsafe { copy(d, s, len, OP) }
    }

    /// Sets `len` bytes of device memory at `dst` to `value` now, on the calling thread.
    ///
    /// # Errors
    ///
    /// A range outside live memory: `InvalidPointer` (107000); freed memory:
    /// `StreamOrderViolation` (107000).
    pub fn memset_now(&self, dst: DevicePtr, value: u8, len: u64) -> Result<()> {
        const OP: &str = "memset";
        if len == 0 {
            return Ok(());
        }
        let t = self.touch(dst, len, true, OP)?;
        check_now(std::slice::from_ref(&t), OP)?;
        t.pool.with_memory(dst.addr(), len, OP, |p| {
            // SAFETY: the range is committed read/write memory, locked against release.
            unsafe { std::ptr::write_bytes(p, value, len as usize) }
        })
    }

    /// Enqueues a host function that works on device memory ("a kernel"): it declares
    /// the ranges it reads and writes, the stream-order checker checks them when it is
    /// enqueued (as for copies), and when it runs it gets a [`KernelMem`] that reads and
    /// writes exactly those ranges.
    ///
    /// ```
    /// use mempool_emu::{Access, Emulator};
    /// use mempool_hal::{Device, HostBuffer, MemPool, PoolProps};
    /// let emu = Emulator::new();
    /// let s = emu.create_stream()?;
    /// let pool = emu.create_pool(&PoolProps::builder().max_size(64 << 20).build())?;
    /// let x = pool.malloc_async(16, &s)?;
    /// emu.launch_kernel(&s, &[Access::Write(x, 16)], move |mem| mem.write(x, &[7; 16]))?;
    /// let out = HostBuffer::new(16);
    /// emu.memcpy_d2h_async(&out, x, &s)?;
    /// emu.synchronize_stream(&s)?;
    /// assert_eq!(out.to_vec(), vec![7; 16]);
    /// # Ok::<(), mempool_hal::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for copies: `InvalidPointer`, `StreamOrderViolation` (nothing is enqueued), or
    /// `InvalidHandle` for the stream. An error the kernel returns, or an undeclared
    /// access, is reported by the next synchronization of the stream.
    pub fn launch_kernel(
        &self,
        stream: &EmuStream,
        accesses: &[Access],
        f: impl FnOnce(&KernelMem) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        const OP: &str = "launch_kernel";
        let s = stream.live(self.platform.id, OP)?;
        let touches = accesses
            .iter()
            .map(|a| match *a {
                Access::Read(p, len) => self.touch(p, len, false, OP),
                Access::Write(p, len) => self.touch(p, len, true, OP),
            })
            .collect::<Result<Vec<_>>>()?;
        let mem = KernelMem { touches: touches.clone() };
        enqueue_touching(s, &touches, OP, Box::new(move || f(&mem)))
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

/// Whether the page holding `addr` is mapped in this process (`msync` answers `ENOMEM` for
/// an unmapped range).
fn host_mapped(addr: u64) -> bool {
    let page = rustix::param::page_size() as u64;
    let start = addr & !(page - 1);
    // SAFETY: `MS_ASYNC` on one page neither reads nor writes it; the kernel only checks
    // that the range is mapped.
    let r = unsafe { rustix::mm::msync(start as *mut std::ffi::c_void, page as usize, rustix::mm::MsyncFlags::ASYNC) };
    !matches!(r, Err(rustix::io::Errno::NOMEM))
}
