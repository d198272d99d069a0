//! [`Device`] for [`Cuda`]: streams, events, copies, host functions, pool creation.

use super::{Cuda, CudaEvent, CudaPool, CudaStream, Handle};
use crate::loader::Runtime;
use crate::result::memory::PinnedHost;
use crate::{result, sys};
use mempool_backend_kit::context::InstanceContext;
use mempool_backend_kit::handle::borrowed_not_destroyed;
use mempool_backend_kit::staging::StagedCopies;
use mempool_hal::{
    Device, DevicePtr, Error, ErrorKind, EventStatus, HandleType, HostBuffer, HostFn, MemInfo, PoolCall, PoolProps,
    Result, StreamStatus,
};

/// The pool granularity the backend reports: 2 MiB. The driver has no query for the
/// granularity of a pool (`cuMemGetAllocationGranularity` describes the virtual memory
/// calls, not pools), so the backend uses the size a pool of today's GPUs grows by, and
/// rounds pool sizes and checks sizes for overflow with it.
///
/// # Portability
///
/// The statistics are the driver's own: how it rounds an allocation in USED and RESERVED
/// is its business, and need not be a multiple of this number.
pub const POOL_GRANULARITY: u64 = 2 << 20;

impl Device for Cuda {
    type Stream = CudaStream;
    type Event = CudaEvent;
    type Pool = CudaPool;

    fn id(&self) -> u32 {
        self.shared.device
    }

    /// [`POOL_GRANULARITY`] (2 MiB): the driver cannot be asked.
    fn pool_granularity(&self) -> u64 {
        POOL_GRANULARITY
    }

    /// `cuMemGetInfo_v2` in the instance's context.
    fn mem_info(&self) -> Result<MemInfo> {
        self.shared.enter_checked()?;
        let (free, total) = result::device::mem_info(&self.shared.rt)?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    /// `cuStreamCreate` with `CU_STREAM_NON_BLOCKING`.
    ///
    /// # Portability
    ///
    /// The stream does not synchronize with the legacy NULL stream, so work other code
    /// enqueues there orders nothing on it: only the contract's orderings (same stream,
    /// event waits, host observations) hold, as on every backend.
    fn create_stream(&self) -> Result<CudaStream> {
        self.shared.enter_checked()?;
        let s = result::stream::create(&self.shared.rt, sys::CU_STREAM_NON_BLOCKING)?;
        Ok(CudaStream(Handle::new(s, self.shared.instance)))
    }

    /// `cuStreamDestroy_v2`: the driver lets work already enqueued run, then frees the
    /// stream. A borrowed stream ([`Cuda::borrow_stream`]) is not destroyed:
    /// `InvalidHandle` (`CUDA_ERROR_INVALID_HANDLE`, 400), and it stays usable.
    fn destroy_stream(&self, stream: &CudaStream) -> Result<()> {
        const OP: &str = "cuStreamDestroy_v2";
        let raw = self.stream(stream, OP)?;
        if stream.0.is_borrowed() {
            return Err(result::renumbered(borrowed_not_destroyed(OP, "stream")));
        }
        if !self.shared.retire(&stream.0) {
            return Err(result::renumbered(Error::stale_handle(OP, "stream")));
        }
        result::stream::destroy(&self.shared.rt, raw)
    }

    /// `cuStreamSynchronize`.
    ///
    /// # Portability
    ///
    /// The driver's pools release cached memory above their release threshold at
    /// synchronizations, as the contract says; which synchronizations count (stream,
    /// event, context) is the driver's choice.
    fn synchronize_stream(&self, stream: &CudaStream) -> Result<()> {
        let raw = self.stream(stream, "cuStreamSynchronize")?;
        result::stream::synchronize(&self.shared.rt, raw)
    }

    /// `cuStreamQuery`: success is complete, `CUDA_ERROR_NOT_READY` (600) not ready.
    ///
    /// # Portability
    ///
    /// The driver reports failed device work (a sticky error) in the answer:
    /// `AsyncFailure`, at once rather than at the next synchronization.
    fn query_stream(&self, stream: &CudaStream) -> Result<StreamStatus> {
        let raw = self.stream(stream, "cuStreamQuery")?;
        result::stream::query(&self.shared.rt, raw)
    }

    /// `cuCtxSynchronize` in the device's primary context.
    ///
    /// # Portability
    ///
    /// The primary context is shared by everything in the process that uses the device
    /// through it (other instances, the CUDA runtime), so this waits for their streams too.
    /// It stops at the first failure, which the driver reports for the whole context.
    fn synchronize_device(&self) -> Result<()> {
        self.shared.enter_checked()?;
        result::context::synchronize(&self.shared.rt)
    }

    /// `cuEventCreate` with `CU_EVENT_DEFAULT` (timing on, so
    /// [`Device::event_elapsed_ms`] works).
    fn create_event(&self) -> Result<CudaEvent> {
        self.shared.enter_checked()?;
        let e = result::event::create(&self.shared.rt, sys::CU_EVENT_DEFAULT)?;
        Ok(CudaEvent(Handle::new(e, self.shared.instance)))
    }

    /// `cuEventDestroy_v2`.
    fn destroy_event(&self, event: &CudaEvent) -> Result<()> {
        const OP: &str = "cuEventDestroy_v2";
        let raw = self.event(event, OP)?;
        if !self.shared.retire(&event.0) {
            return Err(result::renumbered(Error::stale_handle(OP, "event")));
        }
        result::event::destroy(&self.shared.rt, raw)
    }

    /// `cuEventRecord`.
    fn record_event(&self, event: &CudaEvent, stream: &CudaStream) -> Result<()> {
        let e = self.event(event, "cuEventRecord")?;
        let s = self.stream(stream, "cuEventRecord")?;
        result::event::record(&self.shared.rt, e, s)
    }

    /// `cuStreamWaitEvent` (flags 0); an event never recorded is a no-op, as the contract
    /// says.
    fn stream_wait_event(&self, stream: &CudaStream, event: &CudaEvent) -> Result<()> {
        let s = self.stream(stream, "cuStreamWaitEvent")?;
        let e = self.event(event, "cuStreamWaitEvent")?;
        result::stream::wait_event(&self.shared.rt, s, e)
    }

    /// `cuEventSynchronize`; an event never recorded returns at once.
    fn synchronize_event(&self, event: &CudaEvent) -> Result<()> {
        let e = self.event(event, "cuEventSynchronize")?;
        result::event::synchronize(&self.shared.rt, e)
    }

    /// `cuEventQuery`: success is complete, `CUDA_ERROR_NOT_READY` (600) not ready.
    ///
    /// # Portability
    ///
    /// An event never recorded is [`EventStatus::Complete`] here: the driver answers
    /// success for it, where CANN (and the contract) say not ready.
    fn query_event(&self, event: &CudaEvent) -> Result<EventStatus> {
        let e = self.event(event, "cuEventQuery")?;
        result::event::query(&self.shared.rt, e)
    }

    /// `cuEventElapsedTime`. An event never recorded (the driver's 400) or not complete
    /// (600) is `NotReady`, as the contract says.
    fn event_elapsed_ms(&self, start: &CudaEvent, end: &CudaEvent) -> Result<f32> {
        let a = self.event(start, "cuEventElapsedTime")?;
        let b = self.event(end, "cuEventElapsedTime")?;
        result::event::elapsed_ms(&self.shared.rt, a, b)
    }

    /// Validates `props` with [`PoolProps::validate`] (the device count from
    /// `cuDeviceGetCount`, its memory from `cuMemGetInfo_v2`, [`POOL_GRANULARITY`]),
    /// renumbers them for the driver and calls `cuMemPoolCreate`.
    ///
    /// The pool's [`size`](mempool_hal::MemPool::size) is the validated size: `max_size`
    /// rounded up to 2 MiB, or the device's memory rounded down for `max_size` 0. The
    /// driver gets that size as `maxSize` (0, no limit, for `max_size` 0).
    ///
    /// # Errors
    ///
    /// Those of [`PoolProps::validate`], in the driver's numbering (`InvalidParam` is 1,
    /// `InvalidDevice` 101); a pool for another device than this instance's:
    /// `InvalidDevice` (101); a POSIX handle type the device cannot share
    /// (`CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES`): `NotSupported` (801); the
    /// driver's refusals.
    ///
    /// # Portability
    ///
    /// - A fresh pool's three reuse flags are **on** (the driver's defaults), where the
    ///   contract's default is off: set them explicitly for portable behaviour.
    /// - Drivers before 12.2 do not read `maxSize`: the backend passes 0 there and enforces
    ///   the size itself (see [`CudaPool`]'s `malloc_async`).
    fn create_pool(&self, props: &PoolProps) -> Result<CudaPool> {
        const OP: &str = "cuMemPoolCreate";
        self.shared.enter_checked()?;
        let rt = &self.shared.rt;
        let count = u32::try_from(result::device::count(rt)?).unwrap_or(0);
        let (_, total) = result::device::mem_info(rt)?;
        let size =
            props.validate(count, total as u64, POOL_GRANULARITY).map_err(|e| result::renumbered(e.with_op(OP)))?;
        if props.location.id != self.shared.device {
            return Err(Error::cuda(
                ErrorKind::InvalidDevice,
                sys::CUDA_ERROR_INVALID_DEVICE,
                OP,
                format!(
                    "a pool of device {} through the instance of device {}: open device {} for it",
                    props.location.id, self.shared.device, props.location.id
                ),
            ));
        }
        if props.handle_type == HandleType::POSIX {
            let mask = result::device::attribute(
                rt,
                self.shared.cu_device,
                sys::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
            )?;
            if mask & sys::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
                return Err(Error::cuda(
                    ErrorKind::NotSupported,
                    sys::CUDA_ERROR_NOT_SUPPORTED,
                    OP,
                    format!("device {} cannot share pools through POSIX file descriptors", self.shared.device),
                ));
            }
        }
        let mut c = sys::CUmemPoolProps::from_portable(props)
            .ok_or_else(|| result::renumbered(Error::invalid_param(OP, "properties the driver has no numbers for")))?;
        c.location.id = self.shared.cu_device;
        let driver_limits = self.driver_limits_pool_size();
        c.maxSize = if props.max_size == 0 || !driver_limits { 0 } else { usize::try_from(size).unwrap_or(usize::MAX) };
        let pool = result::pool::create(rt, &c)?;
        let enforce_max = !driver_limits && props.max_size != 0;
        Ok(self.pool_handle(pool, size, true, enforce_max))
    }

    /// `cuMemPoolDestroy`.
    ///
    /// # Errors
    ///
    /// A pool destroyed before, or foreign: `InvalidHandle` (400). The device's default
    /// pool, or a pool handle from [`Cuda::current_pool`] (the backend did not create
    /// them): `InvalidParam` (1), as the driver answers for its default pool.
    ///
    /// # Portability
    ///
    /// No synchronization first: the driver itself keeps the memory of live allocations
    /// and of frees not yet run until they are done, which is what the contract asks.
    fn destroy_pool(&self, pool: &CudaPool) -> Result<()> {
        const OP: &str = "cuMemPoolDestroy";
        if !pool.handle.is_live_in(self.shared.instance) {
            return Err(result::renumbered(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool")));
        }
        if !pool.owned {
            return Err(result::renumbered(Error::invalid_param(
                OP,
                "the pool was not created by this backend (the device's default or current pool)",
            )));
        }
        self.shared.enter_checked()?;
        if !self.shared.retire(&pool.handle) {
            return Err(result::renumbered(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool")));
        }
        result::pool::destroy(&self.shared.rt, pool.as_raw())
    }

    /// Stages `src` in a page-locked buffer from the instance's cache (so the copy stays
    /// asynchronous) and returns at once; the caller may reuse `src`. A host function
    /// ordered after the copy gives the buffer back to the cache.
    ///
    /// # Portability
    ///
    /// The driver cannot check stream order: an unordered or freed `dst` is overwritten
    /// silently. An address it does not know is `InvalidPointer` (1).
    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &CudaStream) -> Result<()> {
        let s = self.stream(stream, "cuMemcpyHtoDAsync_v2")?;
        let rt = &self.shared.rt;
        self.shared.staging.copy_to_device(rt, dst, src, &OnStream { rt, stream: s })
    }

    /// Copies through a page-locked buffer from the instance's cache; a host function
    /// ordered after the copy moves the bytes into `dst` and gives the buffer back.
    ///
    /// # Portability
    ///
    /// The driver cannot check stream order: an unordered or freed `src` is read silently.
    /// `dst` is written only by the host function, so synchronize before reading it, as on
    /// every backend.
    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &CudaStream) -> Result<()> {
        let s = self.stream(stream, "cuMemcpyDtoHAsync_v2")?;
        let rt = &self.shared.rt;
        self.shared.staging.copy_to_host(rt, dst, src, &OnStream { rt, stream: s })
    }

    /// `cuMemcpyDtoDAsync_v2`.
    ///
    /// # Portability
    ///
    /// The driver cannot check stream order: it reads stale data from an unordered `src`,
    /// and an unordered or freed `dst` is overwritten silently.
    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &CudaStream) -> Result<()> {
        const OP: &str = "cuMemcpyDtoDAsync_v2";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| too_long(OP))?;
        result::memory::memcpy_dtod_async(&self.shared.rt, dst.addr(), src.addr(), n, s)
    }

    /// `cuMemsetD8Async`.
    ///
    /// # Portability
    ///
    /// The driver cannot check stream order: an unordered or freed range is overwritten
    /// silently.
    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &CudaStream) -> Result<()> {
        const OP: &str = "cuMemsetD8Async";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| too_long(OP))?;
        result::memory::memset_d8_async(&self.shared.rt, dst.addr(), value, n, s)
    }

    /// `cuLaunchHostFunc`.
    ///
    /// # Portability
    ///
    /// The driver forbids CUDA calls inside a host function (through this backend or
    /// any other way): such a call may deadlock or fail. The function runs on a driver
    /// thread; one that blocks may hold back the host functions of other streams.
    fn launch_host_func(&self, stream: &CudaStream, f: HostFn) -> Result<()> {
        let s = self.stream(stream, "cuLaunchHostFunc")?;
        result::memory::launch_host_func(&self.shared.rt, s, f)
    }

    /// `cuDeviceCanAccessPeer` (`false` for the device itself, as the driver answers).
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        self.shared.enter_checked()?;
        let rt = &self.shared.rt;
        let peer = result::device::get(rt, peer_ordinal(peer)?)?;
        result::context::can_access_peer(rt, self.shared.cu_device, peer)
    }

    /// `cuCtxEnablePeerAccess` of the peer's primary context, which the instance retains
    /// while access is enabled.
    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        self.shared.enter_checked()?;
        let rt = &self.shared.rt;
        let dev = result::device::get(rt, peer_ordinal(peer)?)?;
        let ctx = result::context::primary_retain(rt, dev)?;
        // Back to this instance's context: retaining does not change the current one, but
        // the peer call works from it.
        let outcome = result::context::enable_peer_access(rt, ctx);
        let mut peers = self.shared.peers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if outcome.is_err() || peers.contains_key(&peer) {
            drop(peers);
            // The reference taken above is not needed: the call failed, or one is held.
            result::context::primary_release(rt, dev)?;
            return outcome;
        }
        peers.insert(peer, dev);
        Ok(())
    }

    /// `cuCtxDisablePeerAccess` of the peer's primary context; the instance's reference on
    /// it, if any, is given back.
    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        self.shared.enter_checked()?;
        let rt = &self.shared.rt;
        let dev = result::device::get(rt, peer_ordinal(peer)?)?;
        let ctx = result::context::primary_retain(rt, dev)?;
        let outcome = result::context::disable_peer_access(rt, ctx);
        result::context::primary_release(rt, dev)?;
        outcome?;
        let held = self.shared.peers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&peer);
        if let Some(d) = held {
            result::context::primary_release(rt, d)?;
        }
        Ok(())
    }
}

/// A peer ordinal as the driver takes it (`int`): one beyond its range is `InvalidDevice`.
fn peer_ordinal(peer: u32) -> Result<std::ffi::c_int> {
    std::ffi::c_int::try_from(peer).map_err(|_| {
        Error::cuda(ErrorKind::InvalidDevice, sys::CUDA_ERROR_INVALID_DEVICE, "peer access", format!("device {peer}"))
    })
}

/// A length that does not fit the platform's `size_t`: `InvalidParam`, code 1.
#[cold]
#[inline(never)]
fn too_long(op: &'static str) -> Error {
    Error::cuda(ErrorKind::InvalidParam, sys::CUDA_ERROR_INVALID_VALUE, op, "length too large")
}

/// The staged copies' calls on one stream: `cuMemcpyHtoDAsync_v2`, `cuMemcpyDtoHAsync_v2`
/// and `cuLaunchHostFunc`.
struct OnStream<'a> {
    rt: &'a Runtime,
    stream: sys::CUstream,
}

impl StagedCopies for OnStream<'_> {
    type Buffer = PinnedHost;

    #[inline]
    fn to_device(&self, dst: DevicePtr, src: &PinnedHost, n: usize) -> Result<()> {
        result::memory::memcpy_htod_async(self.rt, dst.addr(), src, n, self.stream)
    }

    #[inline]
    fn to_host(&self, dst: &PinnedHost, src: DevicePtr, n: usize) -> Result<()> {
        result::memory::memcpy_dtoh_async(self.rt, dst, src.addr(), n, self.stream)
    }

    #[inline]
    fn launch_host_func(&self, f: HostFn) -> Result<()> {
        result::memory::launch_host_func(self.rt, self.stream, f)
    }
}
