//! What C callers and kernels use beyond [`mempool_hal::Device`]: host functions that
//! declare the device memory they use ("kernels", [`KernelAccess`], [`KernelMem`]),
//! copies and memsets with raw host pointers or now on the calling thread (for the drop-in
//! ACL library), keeping a value (host memory) alive until a stream reaches a point, the
//! free by address, and which addresses are device memory. Every device range goes
//! through the stream-order checker (`pool/access.rs`).

use crate::device::Emulator;
use crate::pool::access::{self, CheckedRange, CopySide, enqueue_touching};
use crate::pool::quarantined;
use crate::stream::EmuStream;
use mempool_hal::{DevicePtr, Error, Result};

/// Device memory a kernel declares it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelAccess {
    /// Reads `len` bytes at the pointer.
    Read(DevicePtr, u64),
    /// Writes (and may read) `len` bytes at the pointer.
    Write(DevicePtr, u64),
}

/// The device memory a kernel declared, for it to read and write while it runs.
#[derive(Debug)]
pub struct KernelMem {
    ranges: Vec<CheckedRange>,
}

impl KernelMem {
    fn find(&self, ptr: DevicePtr, len: u64, write: bool) -> Result<&CheckedRange> {
        let end = ptr.addr().checked_add(len);
        self.ranges
            .iter()
            .find(|t| ptr.addr() >= t.addr && end.is_some_and(|e| e <= t.addr + t.len) && (t.write || !write))
            .ok_or_else(|| {
                let what = if write { "writes" } else { "reads" };
                Error::stream_order_violation(
                    "launch_kernel",
                    format!("the kernel {what} [{ptr}, +{len}), which it did not declare"),
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
        t.mem.for_each_piece(ptr.addr(), len, false, "launch_kernel", |done, p, k| {
            // SAFETY: the piece is committed and pinned for reading (no release, give-back
            // or unmapping touches it, no other pinned access writes it); `out` holds
            // `len >= done + k` bytes.
            unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), out.as_mut_ptr().add(done), k) }
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
        t.mem.for_each_piece(ptr.addr(), data.len() as u64, true, "launch_kernel", |done, p, k| {
            // SAFETY: the piece is committed and pinned for writing (no release, give-back
            // or unmapping touches it, no other pinned access overlaps it); `data` is a
            // separate host slice of at least `done + k` bytes.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().add(done), p, k) }
        })
    }
}

impl Emulator {
    /// Whether `[addr, addr + len)` lies inside one live allocation of a pool of this
    /// platform, or is mapped in a reserved range of virtual memory (so it is device
    /// memory).
    pub fn is_device_memory(&self, addr: DevicePtr, len: u64) -> bool {
        let vmm = &self.platform.registry.vmm;
        if vmm.reserved_at(addr.addr()).is_some() {
            return vmm.is_mapped(addr.addr(), len.max(1));
        }
        self.platform.registry.pool_at(addr.addr()).is_some_and(|p| p.is_live(addr.addr(), len.max(1)))
    }

    /// The live pool allocation of this platform that contains `addr`, as (its start, its
    /// length as the pool handed it out, rounded to the granularity, the base address of its
    /// pool's range, which [`EmuPool::base`](crate::EmuPool::base) answers too), or `None`
    /// (not in a pool's range, or not in a live allocation there). What
    /// `cuMemGetAddressRange` and `cuPointerGetAttribute` answer from.
    pub fn allocation_at(&self, addr: DevicePtr) -> Option<(DevicePtr, u64, DevicePtr)> {
        let pool = self.platform.registry.pool_at(addr.addr())?;
        if pool.is_destroyed() {
            return None;
        }
        let (start, len, _) = pool.state().blocks.containing_live(addr.addr())?;
        Some((DevicePtr::from_addr(start), len, DevicePtr::from_addr(pool.base)))
    }

    /// The device whose pool memory (live or not) holds `addr`, or `None` (not in a pool's
    /// range). Which device a drop-in library's copy reaches.
    pub fn device_of(&self, addr: DevicePtr) -> Option<u32> {
        self.platform.registry.pool_at(addr.addr()).map(|p| p.device)
    }

    /// Frees `ptr` in stream order on `stream`, whichever pool of the platform holds it
    /// (as `aclrtMemPoolFreeAsync` does: it takes no pool). Through a pool handle, the
    /// same free is [`EmuPool::free`](crate::EmuPool::free).
    ///
    /// # Errors
    ///
    /// As [`mempool_hal::MemPool::free_async`].
    pub fn free(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.platform.id, "free_async")?;
        self.platform.registry.free_async(ptr, s)
    }

    /// Whether `addr` is device memory of this platform: it lies in a live pool's range or
    /// in a reserved range of virtual memory (mapped or not), or in the range of a
    /// destroyed pool (a pointer that outlived its pool, which copies and
    /// accesses then refuse) while the emulator still holds or keeps that range, or nothing
    /// in the process has mapped it since. The range of a destroyed pool goes back to the
    /// host only after many later pools are dropped, and once the host maps it again it is
    /// host memory.
    pub fn is_pool_address(&self, addr: DevicePtr) -> bool {
        let a = addr.addr();
        let kept = |held: bool| held || quarantined(a) || !host_mapped(a);
        let registry = &self.platform.registry;
        registry.pool_at(a).is_some()
            || registry.vmm.reserved_at(a).is_some()
            || registry.destroyed_at(a).is_some_and(kept)
    }

    /// Copies `len` bytes from `src` to `dst` in stream order on `stream`.
    ///
    /// # Safety
    ///
    /// Every [`CopySide::Host`] side must be valid for `len` bytes (readable for `src`,
    /// writable for `dst`) until the copy has run on the stream, and not be written by
    /// anyone else meanwhile.
    ///
    /// # Errors
    ///
    /// A device side outside live memory: `InvalidPointer` (107000); one the stream is
    /// not ordered after, or freed: `StreamOrderViolation` (107000); a null host side:
    /// `InvalidParam` (100000); a destroyed stream: `InvalidHandle` (107017).
    pub unsafe fn memcpy_raw_async(&self, dst: CopySide, src: CopySide, len: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memcpy_async";
        let s = stream.live(self.platform.id, OP)?;
        // SAFETY: the caller's guarantee above is `copy_async`'s.
        unsafe { access::copy_async(&self.platform.registry, self.platform.config.checker, s, (dst, src), len, OP) }
    }

    /// Copies `len` bytes from `src` to `dst` now, on the calling thread.
    ///
    /// # Safety
    ///
    /// Every [`CopySide::Host`] side must be valid for `len` bytes for the duration of the call.
    ///
    /// # Errors
    ///
    /// As [`Emulator::memcpy_raw_async`].
    pub unsafe fn memcpy_raw(&self, dst: CopySide, src: CopySide, len: u64) -> Result<()> {
        // SAFETY: the caller's guarantee above is `copy_now`'s.
        unsafe { access::copy_now(&self.platform.registry, self.platform.config.checker, (dst, src), len, "memcpy") }
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
        let t = self.range(dst, len, true, OP)?;
        access::check_now(std::slice::from_ref(&t), OP)?;
        t.mem.for_each_piece(dst.addr(), len, true, OP, |_, p, k| {
            // SAFETY: the piece is committed read/write memory of `k` bytes, pinned for
            // writing against release, unmapping and other pinned accesses.
            unsafe { std::ptr::write_bytes(p, value, k) }
        })
    }

    /// Sets `len` bytes at `dst` to `value` in stream order on `stream`: device memory as
    /// [`Device::memset_async`](mempool_hal::Device::memset_async) does (checked when
    /// enqueued and when it runs), host memory when the stream reaches it (page-locked
    /// host memory of the drop-in ACL library, `aclrtMallocHost`).
    ///
    /// # Safety
    ///
    /// A [`CopySide::Host`] side must be valid for writes of `len` bytes until the memset
    /// has run on the stream, and not be used by anyone else meanwhile.
    ///
    /// # Errors
    ///
    /// As [`Emulator::memcpy_raw_async`].
    pub unsafe fn memset_raw_async(&self, dst: CopySide, value: u8, len: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memset_async";
        let host = match dst {
            CopySide::Device(d) => return mempool_hal::Device::memset_async(self, d, value, len, stream),
            CopySide::Host(p) => p as usize,
        };
        let s = stream.live(self.platform.id, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| Error::invalid_param(OP, "length too large"))?;
        if host == 0 {
            return Err(Error::invalid_param(OP, "null host pointer"));
        }
        enqueue_touching(
            s,
            &[],
            OP,
            Box::new(move || {
                // SAFETY: the caller guarantees the host range is writable for `n` bytes
                // until this work has run.
                unsafe { std::ptr::write_bytes(host as *mut u8, value, n) };
                Ok(())
            }),
        )
    }

    /// Destroys `stream` as CANN's runtime does (`aclrtDestroyStream`,
    /// `aclrtDestroyStreamForce`), unlike [`Device::destroy_stream`](mempool_hal::Device::destroy_stream),
    /// which returns at once and lets the queued work run: this returns only when the
    /// stream has nothing pending. With `discard` off, the queued work runs first; with it
    /// on, work not yet started is dropped and never runs, and an operation already running
    /// completes. Either way **every operation queued before the call has completed or will
    /// never run when it returns**, and the host has observed the stream (what ran and what
    /// was dropped), so memory the work used may be freed from any stream afterwards. It is
    /// no synchronization: no pool releases anything.
    ///
    /// The wait is bounded by the [wait timeout](crate::Config::wait_timeout): past it, the
    /// work not yet started is dropped as with `discard`, and the call answers an error
    /// naming the stream; only the operation running then (a host function that does not
    /// return, say) may still finish later.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017); the wait timed out, or a
    /// host function destroys its own stream: `Internal` (507000).
    pub fn destroy_stream_waiting(&self, stream: &EmuStream, discard: bool) -> Result<()> {
        const OP: &str = "destroy_stream";
        let s = stream.live(self.platform.id, OP)?;
        let first = if discard { s.close_discarding() } else { s.close() };
        if !first {
            return Err(Error::stale_handle(OP, format_args!("stream {}", s.id)));
        }
        match s.drain_observing(self.platform.config.wait_timeout, OP) {
            Ok((tail, clock)) => {
                s.observe(tail);
                self.platform.observe_clock(&clock);
                Ok(())
            }
            // Its worker dropped the rest of its work: nothing more will run.
            Err(_) if s.is_abandoned() => Ok(()),
            Err(e) => {
                s.discard_pending();
                Err(e)
            }
        }
    }

    /// Runs `f` once every stream of the platform (any device) has run the work enqueued on
    /// it before this call: at once when none has work pending, else on the worker of the
    /// stream that finishes last (a stream destroyed meanwhile counts as finished when its
    /// worker has run or dropped that work). The drop-in ACL library gives memory that
    /// `aclrtFree` freed back to the device only then, so a host function queued earlier
    /// that reads it through a raw pointer never faults.
    pub fn after_queued_work(&self, f: impl FnOnce() + Send + 'static) {
        /// Runs its function when the last stream's hold of it goes.
        struct Last(std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>);
        impl Drop for Last {
            fn drop(&mut self) {
                let f = self.0.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                if let Some(f) = f {
                    f();
                }
            }
        }
        let last = std::sync::Arc::new(Last(std::sync::Mutex::new(Some(Box::new(f)))));
        for s in self.platform.live_streams().into_iter().filter(|s| !s.is_idle()) {
            let hold = std::sync::Arc::clone(&last);
            // A stream destroyed since the list was read takes nothing: its work was
            // enqueued before, and the destroy runs or drops it.
            let _ = enqueue_touching(
                &s,
                &[],
                "after_queued_work",
                Box::new(move || {
                    drop(hold);
                    Ok(())
                }),
            );
        }
    }

    /// Keeps `value` until `stream` reaches this point, then drops it there: the drop-in
    /// ACL library keeps page-locked host memory that queued copies and memsets use alive
    /// until they have run, even if the program frees it earlier.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn hold_until_reached(&self, stream: &EmuStream, value: impl Send + 'static) -> Result<()> {
        const OP: &str = "hold";
        let s = stream.live(self.platform.id, OP)?;
        enqueue_touching(
            s,
            &[],
            OP,
            Box::new(move || {
                drop(value);
                Ok(())
            }),
        )
    }

    /// Enqueues a host function that works on device memory ("a kernel"): it declares
    /// the ranges it reads and writes, the stream-order checker checks them when it is
    /// enqueued (as for copies), and when it runs it gets a [`KernelMem`] that reads and
    /// writes exactly those ranges.
    ///
    /// ```
    /// use mempool_emu::{KernelAccess, Emulator};
    /// use mempool_hal::{Device, HostBuffer, MemPool, PoolProps};
    /// let emu = Emulator::new();
    /// let s = emu.create_stream()?;
    /// let pool = emu.create_pool(&PoolProps::builder().max_size(64 << 20).build())?;
    /// let x = pool.malloc_async(16, &s)?;
    /// emu.launch_kernel(&s, &[KernelAccess::Write(x, 16)], move |mem| mem.write(x, &[7; 16]))?;
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
        accesses: &[KernelAccess],
        f: impl FnOnce(&KernelMem) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        const OP: &str = "launch_kernel";
        let s = stream.live(self.platform.id, OP)?;
        let ranges = accesses
            .iter()
            .map(|a| match *a {
                KernelAccess::Read(p, len) => self.range(p, len, false, OP),
                KernelAccess::Write(p, len) => self.range(p, len, true, OP),
            })
            .collect::<Result<Vec<_>>>()?;
        let mem = KernelMem { ranges: ranges.clone() };
        enqueue_touching(s, &ranges, OP, Box::new(move || f(&mem)))
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
