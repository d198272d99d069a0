//! [`Device`] for [`Ascend`]: streams, events, copies, host functions, pool creation.

use super::{Ascend, AscendEvent, AscendPool, AscendStream, Handle};
use crate::loader::Runtime;
use crate::result::memory::PinnedHost;
use crate::{result, sys};
use mempool_backend_kit::context::InstanceContext;
use mempool_backend_kit::handle::borrowed_not_destroyed;
use mempool_backend_kit::staging::StagedCopies;
use mempool_hal::{
    Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, HostFn, MemInfo, MemPool, MemPoolExt, PoolCall,
    PoolProps, Result, StreamStatus, code, round_down, round_up,
};
use std::ffi::c_void;

impl Device for Ascend {
    type Stream = AscendStream;
    type Event = AscendEvent;
    type Pool = AscendPool;

    fn id(&self) -> u32 {
        self.shared.device
    }

    /// Measured once: the USED counter of a one-byte allocation, read after the stream
    /// has run it (2 MiB on Ascend hardware). A probe that fails, or measures anything
    /// but a non-zero power of two, gives [`FALLBACK_GRANULARITY`] (2 MiB), with one
    /// warning on standard error per process.
    fn pool_granularity(&self) -> u64 {
        *self.shared.granularity.get_or_init(|| checked_granularity(probe_granularity(self)))
    }

    fn mem_info(&self) -> Result<MemInfo> {
        self.shared.enter_checked()?;
        let (free, total) = result::device::mem_info(&self.shared.rt)?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    fn create_stream(&self) -> Result<AscendStream> {
        self.shared.enter_checked()?;
        let s = result::stream::create(&self.shared.rt)?;
        Ok(AscendStream(Handle::new(s, self.shared.instance)))
    }

    /// `aclrtDestroyStream` of a stream the backend created. A borrowed stream
    /// ([`Ascend::borrow_stream`]) is not destroyed: `InvalidHandle` (107017), and it stays
    /// usable.
    fn destroy_stream(&self, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtDestroyStream";
        let raw = self.stream(stream, OP)?;
        if stream.0.is_borrowed() {
            return Err(borrowed_not_destroyed(OP, "stream"));
        }
        if !self.shared.retire(&stream.0) {
            return Err(Error::stale_handle(OP, "stream"));
        }
        result::stream::destroy(&self.shared.rt, raw)
    }

    fn synchronize_stream(&self, stream: &AscendStream) -> Result<()> {
        let raw = self.stream(stream, "aclrtSynchronizeStream")?;
        result::stream::synchronize(&self.shared.rt, raw)
    }

    fn query_stream(&self, stream: &AscendStream) -> Result<StreamStatus> {
        let raw = self.stream(stream, "aclrtStreamQuery")?;
        result::stream::query(&self.shared.rt, raw)
    }

    /// `aclrtSynchronizeDevice` in this instance's context: CANN waits for the current
    /// context's streams, and every stream, event and pool of the instance lives in its
    /// one context. Other instances on the same device (other contexts) are not covered.
    fn synchronize_device(&self) -> Result<()> {
        self.shared.enter_checked()?;
        result::device::synchronize(&self.shared.rt)
    }

    fn create_event(&self) -> Result<AscendEvent> {
        self.shared.enter_checked()?;
        let e = result::event::create(&self.shared.rt)?;
        Ok(AscendEvent(Handle::new(e, self.shared.instance)))
    }

    fn destroy_event(&self, event: &AscendEvent) -> Result<()> {
        const OP: &str = "aclrtDestroyEvent";
        let raw = self.event(event, OP)?;
        if !self.shared.retire(&event.0) {
            return Err(Error::stale_handle(OP, "event"));
        }
        result::event::destroy(&self.shared.rt, raw)
    }

    fn record_event(&self, event: &AscendEvent, stream: &AscendStream) -> Result<()> {
        let e = self.event(event, "aclrtRecordEvent")?;
        let s = self.stream(stream, "aclrtRecordEvent")?;
        result::event::record(&self.shared.rt, e, s)
    }

    fn stream_wait_event(&self, stream: &AscendStream, event: &AscendEvent) -> Result<()> {
        let s = self.stream(stream, "aclrtStreamWaitEvent")?;
        let e = self.event(event, "aclrtStreamWaitEvent")?;
        result::event::stream_wait(&self.shared.rt, s, e)
    }

    fn synchronize_event(&self, event: &AscendEvent) -> Result<()> {
        let e = self.event(event, "aclrtSynchronizeEvent")?;
        result::event::synchronize(&self.shared.rt, e)
    }

    fn query_event(&self, event: &AscendEvent) -> Result<EventStatus> {
        let e = self.event(event, "aclrtQueryEventStatus")?;
        result::event::query(&self.shared.rt, e)
    }

    fn event_elapsed_ms(&self, start: &AscendEvent, end: &AscendEvent) -> Result<f32> {
        let a = self.event(start, "aclrtEventElapsedTime")?;
        let b = self.event(end, "aclrtEventElapsedTime")?;
        result::event::elapsed_ms(&self.shared.rt, a, b)
    }

    /// Creates the pool, then measures the granularity (once per instance) and reads the
    /// device's memory for a whole-device pool. If anything after `aclrtMemPoolCreate`
    /// fails, the new pool is destroyed before the error is returned.
    fn create_pool(&self, props: &PoolProps) -> Result<AscendPool> {
        self.shared.enter_checked()?;
        let pool = result::pool::create(&self.shared.rt, &sys::aclrtMemPoolProps::from(props))?;
        let gran = self.pool_granularity();
        let size = if props.max_size == 0 {
            match self.mem_info() {
                Ok(info) => round_down(info.total, gran),
                Err(e) => {
                    // Nothing has used the new pool: destroy it, not leak it.
                    let _ = self.shared.enter_slow();
                    let _ = result::pool::destroy(&self.shared.rt, pool);
                    return Err(e);
                }
            }
        } else {
            round_up(props.max_size, gran).unwrap_or(u64::MAX)
        };
        Ok(self.pool_handle(pool, size, gran))
    }

    /// Waits for every stream of the instance (`aclrtSynchronizeDevice` in its context),
    /// then destroys the pool: CANN's `aclrtMemPoolDestroy` neither waits for queued work
    /// nor checks for it, and a queued free, allocation or copy that runs after it meets
    /// a destroyed pool (contract §12). So dropping a facade `Buffer` (which queues its
    /// free) and then its `Pool` is safe. If the synchronization fails the pool is not
    /// destroyed, and the error (kind and code of the synchronization) says so; calling
    /// again destroys it once the queue is drained.
    fn destroy_pool(&self, pool: &AscendPool) -> Result<()> {
        const OP: &str = "aclrtMemPoolDestroy";
        if !pool.handle.is_live_in(self.shared.instance) {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool"));
        }
        self.shared.enter_checked()?;
        result::device::synchronize(&self.shared.rt).map_err(|e| {
            let message =
                format!("{}; the pool was not destroyed: work queued before it may still use it", e.message());
            e.with_message(message).with_op(OP)
        })?;
        if !self.shared.retire(&pool.handle) {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool"));
        }
        result::pool::destroy(&self.shared.rt, pool.as_raw())
    }

    /// Stages `src` in a page-locked buffer from the instance's cache (so the copy stays
    /// asynchronous: CANN makes a copy from pageable memory wait for the stream) and
    /// returns at once; the caller may reuse `src`. A host function ordered after the
    /// copy gives the buffer back to the cache.
    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &AscendStream) -> Result<()> {
        let s = self.stream(stream, "aclrtMemcpyAsync")?;
        let rt = &self.shared.rt;
        self.shared.staging.copy_to_device(rt, dst, src, &OnStream { rt, stream: s })
    }

    /// Copies through a page-locked buffer from the instance's cache; a host function
    /// ordered after the copy moves the bytes into `dst` and gives the buffer back.
    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &AscendStream) -> Result<()> {
        let s = self.stream(stream, "aclrtMemcpyAsync")?;
        let rt = &self.shared.rt;
        self.shared.staging.copy_to_host(rt, dst, src, &OnStream { rt, stream: s })
    }

    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemcpyAsync";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| too_long(OP))?;
        result::memory::memcpy_async(
            &self.shared.rt,
            dst.addr() as usize as *mut c_void,
            src.addr() as usize as *const c_void,
            n,
            sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
            s,
        )
    }

    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemsetAsync";
        let s = self.stream(stream, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| too_long(OP))?;
        result::memory::memset_async(&self.shared.rt, dst.addr() as usize as *mut c_void, i32::from(value), n, s)
    }

    fn launch_host_func(&self, stream: &AscendStream, f: HostFn) -> Result<()> {
        let s = self.stream(stream, "aclrtLaunchHostFunc")?;
        result::memory::launch_host_func(&self.shared.rt, s, f)
    }

    /// `aclrtDeviceCanAccessPeer`, in the instance's context.
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        self.shared.enter_checked()?;
        result::device::can_access_peer(&self.shared.rt, self.id() as i32, peer_id(peer)?)
    }

    /// `aclrtDeviceEnablePeerAccess(peer, 0)` with the instance's device current.
    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        self.shared.enter_checked()?;
        result::device::enable_peer_access(&self.shared.rt, peer_id(peer)?)
    }

    /// `aclrtDeviceDisablePeerAccess(peer)` with the instance's device current.
    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        self.shared.enter_checked()?;
        result::device::disable_peer_access(&self.shared.rt, peer_id(peer)?)
    }
}

/// A peer device id as CANN takes it (`int32_t`): one beyond its range is `InvalidDevice`.
fn peer_id(peer: u32) -> Result<i32> {
    i32::try_from(peer).map_err(|_| {
        Error::new(
            ErrorKind::InvalidDevice,
            code::ACL_ERROR_RT_INVALID_DEVICEID,
            "peer access",
            format!("device {peer}"),
        )
    })
}

/// A length that does not fit the platform's `size_t`: `InvalidParam`, code 100000.
#[cold]
#[inline(never)]
fn too_long(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, "length too large")
}

/// The granularity used when the probe fails or measures something that cannot be one.
pub const FALLBACK_GRANULARITY: u64 = 2 << 20;

/// The probe's answer if it is a non-zero power of two; otherwise [`FALLBACK_GRANULARITY`],
/// with one warning on standard error per process (the crate has no logger).
fn checked_granularity(measured: Result<u64>) -> u64 {
    static WARNED: std::sync::Once = std::sync::Once::new();
    let why = match measured {
        Ok(g) if g != 0 && g.is_power_of_two() => return g,
        Ok(g) => format!("measured {g} bytes, not a non-zero power of two"),
        Err(e) => format!("failed: {e}"),
    };
    WARNED.call_once(|| {
        eprintln!("mempool-ascend: the pool granularity probe {why}; using {FALLBACK_GRANULARITY} bytes");
    });
    FALLBACK_GRANULARITY
}

/// Measures the pool granularity: the USED counter of a one-byte allocation, read once
/// the stream has run the allocation (with a driver that counts on the device, USED may
/// change only then).
fn probe_granularity(dev: &Ascend) -> Result<u64> {
    let pool = dev.create_pool_unprobed()?;
    let stream = match dev.create_stream() {
        Ok(s) => s,
        Err(e) => {
            let _ = dev.destroy_pool(&pool);
            return Err(e);
        }
    };
    let measured = (|| {
        let p = pool.malloc_async(1, &stream)?;
        let used = dev.synchronize_stream(&stream).and_then(|()| pool.get(mempool_hal::attr::UsedMemCurrent));
        // `p` was just allocated from `pool` and nothing used it: freeing it here is what
        // `free_async` asks of its callers.
        pool.free_ordered(p, &stream)?;
        dev.synchronize_stream(&stream)?;
        used
    })();
    let _ = dev.destroy_stream(&stream);
    let _ = dev.destroy_pool(&pool);
    measured
}

impl Ascend {
    /// A one-granule pool for the granularity probe (its `size` is not known yet).
    fn create_pool_unprobed(&self) -> Result<AscendPool> {
        self.shared.enter_checked()?;
        let props = PoolProps::builder().device(self.shared.device).max_size(1).build();
        let pool = result::pool::create(&self.shared.rt, &sys::aclrtMemPoolProps::from(&props))?;
        Ok(self.pool_handle(pool, 1, 1))
    }
}

/// The staged copies' calls on one stream: `aclrtMemcpyAsync` and `aclrtLaunchHostFunc`.
struct OnStream<'a> {
    rt: &'a Runtime,
    stream: sys::aclrtStream,
}

impl StagedCopies for OnStream<'_> {
    type Buffer = PinnedHost;

    #[inline]
    fn to_device(&self, dst: DevicePtr, src: &PinnedHost, n: usize) -> Result<()> {
        let dst = dst.addr() as usize as *mut c_void;
        result::memory::memcpy_async(self.rt, dst, src.as_ptr(), n, sys::ACL_MEMCPY_HOST_TO_DEVICE, self.stream)
    }

    #[inline]
    fn to_host(&self, dst: &PinnedHost, src: DevicePtr, n: usize) -> Result<()> {
        let src = src.addr() as usize as *const c_void;
        result::memory::memcpy_async(self.rt, dst.as_ptr(), src, n, sys::ACL_MEMCPY_DEVICE_TO_HOST, self.stream)
    }

    #[inline]
    fn launch_host_func(&self, f: HostFn) -> Result<()> {
        result::memory::launch_host_func(self.rt, self.stream, f)
    }
}
