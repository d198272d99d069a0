//! [`CudaPool`] and its [`MemPool`] implementation (the hot path of the backend), and the
//! device's own pools: default and current.

use super::device::POOL_GRANULARITY;
use super::{Cuda, CudaStream, Handle, Shared};
use crate::result::{self, pool::PoolCalls};
use crate::sys;
use mempool_backend_kit::context::InstanceContext;
use mempool_backend_kit::pool::{OomCase, OomRetry, out_of_memory};
use mempool_hal::attr::{AttrId, AttrWrite, ReservedMemCurrent, UsedMemCurrent};
use mempool_hal::{DevicePtr, Error, MemPool, MemPoolExt, PoolCall, RawAttrValue, Result, round_down, round_up};
use std::fmt;
use std::sync::{Arc, PoisonError, Weak};

/// A pool of the CUDA backend: one the backend created ([`Device::create_pool`]), or the
/// device's default or current pool ([`Cuda::default_pool`], [`Cuda::current_pool`]).
///
/// [`Device::create_pool`]: mempool_hal::Device::create_pool
#[derive(Clone)]
pub struct CudaPool {
    pub(super) handle: Arc<Handle>,
    shared: Arc<Shared>,
    size: u64,
    /// Whether the backend created the pool (only those can be destroyed through it).
    pub(super) owned: bool,
    /// Whether the backend enforces `size` itself (a driver before 12.2 with a finite
    /// `max_size`).
    enforce_max: bool,
    calls: PoolCalls,
    /// The retry after out-of-memory with cached bytes, and its count (shared by the
    /// pool's clones).
    oom_retry: OomRetry,
}

impl fmt::Debug for CudaPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaPool")
            .field("raw", &format_args!("{:#x}", self.handle.raw()))
            .field("size", &self.size)
            .field("owned", &self.owned)
            .field("enforce_max", &self.enforce_max)
            .field("oom_retries", &self.oom_retries())
            .finish()
    }
}

impl Cuda {
    /// The backend's pool for the driver's `pool`. A pool the backend creates (`owned`) is
    /// registered, so that a later handle of the same driver pool ([`Cuda::current_pool`])
    /// shares its liveness: destroying the pool makes both stale.
    pub(super) fn pool_handle(&self, pool: sys::CUmemoryPool, size: u64, owned: bool, enforce_max: bool) -> CudaPool {
        let handle = {
            let mut pools = self.shared.pools.lock().unwrap_or_else(PoisonError::into_inner);
            pools.retain(|w| w.upgrade().is_some_and(|h| h.is_live_in(self.shared.instance)));
            let known = pools.iter().filter_map(Weak::upgrade).find(|h| h.raw() == pool as usize);
            match known {
                Some(h) => h,
                None => {
                    let h = Handle::new(pool, self.shared.instance);
                    if owned {
                        pools.push(Arc::downgrade(&h));
                    }
                    h
                }
            }
        };
        CudaPool {
            handle,
            shared: Arc::clone(&self.shared),
            size,
            owned,
            enforce_max,
            calls: PoolCalls::resolve(&self.shared.rt),
            oom_retry: OomRetry::default(),
        }
    }

    /// A pool of the whole device for a pool the driver made: its size is the device's
    /// memory rounded down to [`POOL_GRANULARITY`].
    fn device_pool(&self, pool: sys::CUmemoryPool) -> Result<CudaPool> {
        let (_, total) = result::device::mem_info(&self.shared.rt)?;
        Ok(self.pool_handle(pool, round_down(total as u64, POOL_GRANULARITY), false, false))
    }

    /// The device's default pool (`cuDeviceGetDefaultMemPool`), the one the driver made
    /// for it. Its size is the device's memory rounded down to 2 MiB; the backend cannot
    /// destroy it. Every call returns a new handle of the same driver pool.
    ///
    /// # Errors
    ///
    /// The driver's refusals; `NotSupported` naming the symbol on a driver without it.
    pub fn default_pool(&self) -> Result<CudaPool> {
        self.shared.enter_checked()?;
        let pool = result::device::default_mem_pool(&self.shared.rt, self.shared.cu_device)?;
        self.device_pool(pool)
    }

    /// The device's current pool (`cuDeviceGetMemPool`): the one
    /// [`Cuda::malloc_async_current`] (`cuMemAllocAsync`) allocates from, the default pool
    /// unless [`Cuda::set_current_pool`] chose another. The handle counts as not created
    /// by the backend (even for a pool it did create): its size is the device's memory
    /// rounded down to 2 MiB, and `destroy_pool` refuses it. For a pool this instance
    /// created, the handle goes stale when that pool is destroyed (`InvalidHandle`, never a
    /// destroyed pool passed to the driver).
    ///
    /// # Errors
    ///
    /// The driver's refusals; `NotSupported` naming the symbol on a driver without it.
    pub fn current_pool(&self) -> Result<CudaPool> {
        self.shared.enter_checked()?;
        let pool = result::device::mem_pool(&self.shared.rt, self.shared.cu_device)?;
        self.device_pool(pool)
    }

    /// Makes `pool` the device's current pool (`cuDeviceSetMemPool`): allocations without a
    /// pool ([`Cuda::malloc_async_current`], and `cudaMallocAsync` elsewhere in the process)
    /// come from it. Destroying the current pool makes the default pool current again.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign pool: `InvalidHandle` (400); the driver's refusals.
    pub fn set_current_pool(&self, pool: &CudaPool) -> Result<()> {
        const OP: &str = "cuDeviceSetMemPool";
        if !pool.handle.is_live_in(self.shared.instance) {
            return Err(result::renumbered(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool")));
        }
        self.shared.enter_checked()?;
        result::device::set_mem_pool(&self.shared.rt, self.shared.cu_device, pool.as_raw())
    }

    /// Allocates `size` bytes in stream order on `stream` from the device's current pool
    /// (`cuMemAllocAsync`). Free it with any pool's
    /// [`free_async`](MemPool::free_async) (`cuMemFreeAsync` needs no pool), for example
    /// that of [`Cuda::current_pool`].
    ///
    /// # Errors
    ///
    /// `size == 0`: `InvalidParam` (1); a destroyed or foreign stream: `InvalidHandle`
    /// (400); the driver's refusals (out of memory is `OutOfMemory`, 2, with no retry and
    /// no statistics: the backend does not know which pool answered).
    pub fn malloc_async_current(&self, size: u64, stream: &CudaStream) -> Result<DevicePtr> {
        const OP: &str = "cuMemAllocAsync";
        let s = self.stream(stream, OP)?;
        let n = checked_size(OP, size)?;
        let p = result::pool::malloc_async_current(&self.shared.rt, n, s, Err)?;
        Ok(DevicePtr::from_addr(p))
    }
}

/// `size` as `size_t`, refusing 0 and a size that overflows when rounded to the
/// granularity: `InvalidParam` (1).
#[inline]
fn checked_size(op: &'static str, size: u64) -> Result<usize> {
    mempool_backend_kit::pool::checked_size(op, size, POOL_GRANULARITY).map_err(result::renumbered)
}

impl CudaPool {
    /// The driver's `CUmemoryPool`, to pass to other CUDA calls. It is valid until the pool
    /// is destroyed through the backend; using it is up to the caller's own `unsafe` code.
    pub fn as_raw(&self) -> sys::CUmemoryPool {
        self.handle.raw() as sys::CUmemoryPool
    }

    /// Whether the backend created this pool (and so may destroy it).
    pub fn is_owned(&self) -> bool {
        self.owned
    }

    /// How many allocations of this pool were retried after synchronizing and trimming:
    /// an out-of-memory answer while the pool held cached bytes (RESERVED > USED) that a
    /// pool trimmed to USED could have room for, or (on a driver before 12.2) an allocation
    /// that took RESERVED above the pool's size. Each such allocation counts once, whether
    /// its retry succeeded or not.
    pub fn oom_retries(&self) -> u64 {
        self.oom_retry.count()
    }

    /// The raw pool, checked live, with the device's context current; a destroyed pool
    /// is `InvalidHandle` (400).
    #[inline]
    fn raw(&self, op: &'static str, call: PoolCall) -> Result<sys::CUmemoryPool> {
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(result::renumbered(Error::destroyed_pool(op, call, "pool")));
        }
        self.shared.enter()?;
        Ok(self.as_raw())
    }

    /// [`CudaPool::raw`] for the management paths, which ask the driver for the current
    /// context.
    fn raw_checked(&self, op: &'static str, call: PoolCall) -> Result<sys::CUmemoryPool> {
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(result::renumbered(Error::destroyed_pool(op, call, "pool")));
        }
        self.shared.enter_checked()?;
        Ok(self.as_raw())
    }

    /// The raw stream of `s`, checked live (the context is entered by the caller).
    #[inline]
    fn stream(&self, s: &CudaStream, op: &'static str) -> Result<sys::CUstream> {
        Ok(self.shared.live(&s.0, op, "stream")? as sys::CUstream)
    }

    /// The answer to the driver's out-of-memory `driver` error for `size` bytes (`n` as
    /// `size_t`): the kit's [`OomRetry`] policy, with the context synchronized before the
    /// trim (a trim releases only memory whose frees have run).
    #[cold]
    #[inline(never)]
    fn after_oom(
        &self,
        op: &'static str,
        size: u64,
        n: usize,
        pool: sys::CUmemoryPool,
        stream: sys::CUstream,
        driver: Error,
    ) -> Result<sys::CUdeviceptr> {
        let requested = round_up(size, POOL_GRANULARITY).unwrap_or(size);
        let stats = self.stats().unwrap_or_default();
        let case = OomCase { requested, pool_size: self.size, stats, said: Some(driver.message()) };
        self.oom_retry.after_oom(
            case,
            || {
                result::context::synchronize(&self.shared.rt)?;
                let used = self.get(UsedMemCurrent)?;
                result::pool::trim_to(&self.shared.rt, pool, usize::try_from(used).unwrap_or(usize::MAX))?;
                Ok(used)
            },
            |give_up| {
                result::pool::malloc_async(&self.shared.rt, &self.calls, pool, n, stream, |again| {
                    Err(give_up(Some(again.message())))
                })
            },
            |tried| self.oom(op, requested, tried),
        )
    }

    /// On a driver that ignores `maxSize`: `p` if the allocation left RESERVED within the
    /// pool's size; otherwise give it back, let the free run (a synchronization of
    /// `stream`), trim to USED and try once more; if RESERVED is still above the size, give
    /// that back too and answer out of memory.
    #[inline]
    fn within_max_size(
        &self,
        op: &'static str,
        p: sys::CUdeviceptr,
        size: u64,
        n: usize,
        pool: sys::CUmemoryPool,
        stream: sys::CUstream,
    ) -> Result<sys::CUdeviceptr> {
        match self.get(ReservedMemCurrent) {
            Ok(reserved) if reserved <= self.size => Ok(p),
            Ok(reserved) => self.over_max_size(op, p, reserved, size, n, pool, stream),
            Err(e) => {
                // The allocation cannot be checked: give it back rather than exceed the size.
                let _ = result::pool::free_async(&self.shared.rt, &self.calls, p, stream);
                Err(e)
            }
        }
    }

    /// The cold part of [`CudaPool::within_max_size`].
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn over_max_size(
        &self,
        op: &'static str,
        p: sys::CUdeviceptr,
        reserved: u64,
        size: u64,
        n: usize,
        pool: sys::CUmemoryPool,
        stream: sys::CUstream,
    ) -> Result<sys::CUdeviceptr> {
        let rt = &self.shared.rt;
        let requested = round_up(size, POOL_GRANULARITY).unwrap_or(size);
        // `p` was allocated on `stream` just now and nothing has used it.
        let give_back = |p: sys::CUdeviceptr| -> Result<()> {
            result::pool::free_async(rt, &self.calls, p, stream)?;
            result::stream::synchronize(rt, stream)?;
            let used = self.get(UsedMemCurrent)?;
            result::pool::trim_to(rt, pool, usize::try_from(used).unwrap_or(usize::MAX))
        };
        let why = |reserved: u64| {
            format!(
                "the driver ({}) does not read maxSize, and the allocation took RESERVED to {reserved} bytes, \
                 above the pool's {}",
                self.shared.driver_version, self.size
            )
        };
        give_back(p)?;
        let retries = self.oom_retry.note();
        let p = result::pool::malloc_async(rt, &self.calls, pool, n, stream, |e| {
            Err(self.oom(op, requested, format!("{}; {}", why(reserved), e.message())))
        })?;
        match self.get(ReservedMemCurrent) {
            Ok(again) if again <= self.size => Ok(p),
            Ok(again) => {
                give_back(p)?;
                Err(self.oom(
                    op,
                    requested,
                    format!(
                        "{}; retried once after synchronizing the stream and trimming to USED \
                         (retries on this pool: {retries})",
                        why(again)
                    ),
                ))
            }
            Err(e) => {
                let _ = result::pool::free_async(rt, &self.calls, p, stream);
                Err(e)
            }
        }
    }

    /// The pool's out-of-memory error for a request of `requested` bytes, with its
    /// statistics, in the driver's numbering (2), and `tried` at the end of its message.
    fn oom(&self, op: &'static str, requested: u64, tried: String) -> Error {
        let stats = self.stats().unwrap_or_default();
        let room = self.size.saturating_sub(stats.reserved_current);
        // The device, not the pool, is full when the pool has room the device cannot give.
        let device_free = match result::device::mem_info(&self.shared.rt) {
            Ok((free, _)) if (free as u64) < requested && room >= requested => Some(free as u64),
            _ => None,
        };
        result::renumbered(out_of_memory(op, requested, stats, self.size, device_free, &tried))
    }

    /// The body of [`MemPool::free_async`], for this crate's own callers: they owe what
    /// that method's contract asks (`ptr` is a live allocation of this device, every use
    /// of it ordered before the free on `stream`).
    #[inline]
    pub(super) fn free_ordered(&self, ptr: DevicePtr, stream: &CudaStream) -> Result<()> {
        const OP: &str = "cuMemFreeAsync";
        let s = self.stream(stream, OP)?;
        self.shared.enter()?;
        if ptr.is_null() {
            return Err(result::renumbered(Error::invalid_pointer(OP, "null pointer")));
        }
        result::pool::free_async(&self.shared.rt, &self.calls, ptr.addr(), s)
    }
}

impl MemPool for CudaPool {
    type Stream = CudaStream;

    /// `cuMemAllocFromPoolAsync`.
    ///
    /// # Errors
    ///
    /// As the trait says, in the driver's numbering: `size == 0` or a size that overflows
    /// when rounded is `InvalidParam` (1), a destroyed or foreign stream or pool
    /// `InvalidHandle` (400), no room `OutOfMemory` (2) with [`Error::oom`] filled in.
    ///
    /// # Portability
    ///
    /// - The driver chooses the block by its own rules (with its reuse flags, on by
    ///   default), not the contract's smallest-fit order.
    /// - Out of memory while the pool holds cached bytes that a trim to USED could give
    ///   back: the backend synchronizes the context, trims to USED and retries once
    ///   ([`CudaPool::oom_retries`]).
    /// - On a driver before 12.2 (which ignores `maxSize`) with a finite pool size, the
    ///   backend enforces the size: after each allocation it reads RESERVED, and when the
    ///   allocation took it above the size it frees the block, synchronizes `stream` (so
    ///   the free has run), trims to USED and retries once; if RESERVED is still above the
    ///   size, the answer is `OutOfMemory`. That costs one attribute read per allocation
    ///   and, when the limit is met, a synchronization of `stream`. Cached blocks whose
    ///   frees have not run yet count in RESERVED and cannot be trimmed, so such a pool may
    ///   refuse an allocation the size would allow once they have run.
    #[inline]
    fn malloc_async(&self, size: u64, stream: &CudaStream) -> Result<DevicePtr> {
        const OP: &str = "cuMemAllocFromPoolAsync";
        let s = self.stream(stream, OP)?;
        let pool = self.raw(OP, PoolCall::Lifetime)?;
        let n = checked_size(OP, size)?;
        let p = result::pool::malloc_async(&self.shared.rt, &self.calls, pool, n, s, |e| {
            self.after_oom(OP, size, n, pool, s, e)
        })?;
        let p = if self.enforce_max { self.within_max_size(OP, p, size, n, pool, s)? } else { p };
        Ok(DevicePtr::from_addr(p))
    }

    /// `cuMemFreeAsync`.
    ///
    /// # Portability
    ///
    /// The driver checks what it can (an unknown address is `InvalidPointer`, 1), but not
    /// stream order, and not every bad pointer: the trait's safety contract is the caller's
    /// to keep.
    #[allow(unsafe_code)]
    #[inline]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &CudaStream) -> Result<()> {
        self.free_ordered(ptr, stream)
    }

    /// `cuMemPoolTrimTo`.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign pool: `InvalidHandle` (400); the driver's refusals.
    ///
    /// # Portability
    ///
    /// The driver's rules, not Ascend's: a target below USED is no error, the driver
    /// releases what it can (every cached block whose free has run); a target at or above
    /// RESERVED, or above the pool size, releases nothing and is no error either.
    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        const OP: &str = "cuMemPoolTrimTo";
        let pool = self.raw_checked(OP, PoolCall::Lifetime)?;
        let keep = usize::try_from(min_bytes_to_keep).unwrap_or(usize::MAX);
        result::pool::trim_to(&self.shared.rt, pool, keep)
    }

    /// `cuMemPoolGetAttribute`: the reuse flags (1-3) are the driver's `int`, answered as
    /// [`RawAttrValue::U32`]; the others its `cuuint64_t`, as [`RawAttrValue::U64`].
    ///
    /// # Errors
    ///
    /// An unknown id: `UnknownAttribute` (1); a destroyed or foreign pool:
    /// `InvalidHandle` (400).
    ///
    /// # Portability
    ///
    /// A fresh pool's reuse flags read `1` (the driver's default), not the contract's 0.
    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        const OP: &str = "cuMemPoolGetAttribute";
        let info = attr.check_read().map_err(|e| result::renumbered(e.with_op(OP)))?;
        let pool = self.raw_checked(OP, PoolCall::Attribute)?;
        result::pool::get_attr(&self.shared.rt, pool, attr, info.width)
    }

    /// Checks the write with [`AttrId::check_write`] (the contract's rules, in the driver's
    /// numbering), then `cuMemPoolSetAttribute`: a reuse flag as the driver's `int` (0 or
    /// 1), the threshold as its `cuuint64_t`, a high-water mark reset as a `cuuint64_t` 0.
    ///
    /// # Errors
    ///
    /// Those of [`AttrId::check_write`] in the driver's numbering: an unknown id is
    /// `UnknownAttribute`, a value of the wrong width or a non-zero high-water mark
    /// `InvalidParam`, a read-only counter `ReadOnly`, a threshold above the pool's size
    /// `InvalidParam`, all with code 1. A destroyed or foreign pool: `InvalidHandle` (400).
    ///
    /// # Portability
    ///
    /// - A high-water mark reset sets the mark to the current value (the driver's rule),
    ///   not to 0.
    /// - The driver would accept any release threshold (`u64::MAX`, "keep everything", is a
    ///   common CUDA setting); the backend refuses one above the pool's size, as every
    ///   backend does. The pool's size is the threshold that keeps everything.
    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        const OP: &str = "cuMemPoolSetAttribute";
        let write = attr.check_write(value, self.size).map_err(|e| result::renumbered(e.with_op(OP)))?;
        let pool = self.raw_checked(OP, PoolCall::Attribute)?;
        let (id, value) = match write {
            AttrWrite::Flag(flag, on) => (flag.id(), RawAttrValue::U32(u32::from(on))),
            AttrWrite::ReleaseThreshold(bytes) => (AttrId::RELEASE_THRESHOLD, RawAttrValue::U64(bytes)),
            AttrWrite::ResetHigh(counter) => (counter.high_id(), RawAttrValue::U64(0)),
        };
        result::pool::set_attr(&self.shared.rt, pool, id, value)
    }

    /// The validated size: `max_size` rounded up to 2 MiB, or the device's memory rounded
    /// down to 2 MiB for `max_size` 0 and for the device's own pools.
    fn size(&self) -> u64 {
        self.size
    }

    // `stats_snapshot` keeps the provided four reads of `get_attr_raw`: the driver has no
    // call that reads several attributes of a pool together, so counters read while
    // another thread allocates, frees or trims may come from different instants.
}
