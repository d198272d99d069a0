//! [`Device`] for [`Ascend`]: streams, events, copies, host functions, pool creation.

use super::{Ascend, AscendEvent, AscendPool, AscendStream, Handle};
use crate::{result, sys};
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

    /// Measured once: the USED counter of a one-byte allocation (2 MiB on Ascend
    /// hardware). Falls back to 2 MiB if the probe fails.
    fn pool_granularity(&self) -> u64 {
        *self.shared.granularity.get_or_init(|| probe_granularity(self).unwrap_or(2 << 20))
    }

    fn mem_info(&self) -> Result<MemInfo> {
        self.shared.enter()?;
        let (free, total) = result::device::mem_info(&self.shared.rt)?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    fn create_stream(&self) -> Result<AscendStream> {
        self.shared.enter()?;
        let s = result::stream::create(&self.shared.rt)?;
        Ok(AscendStream(Handle::new(s, self.shared.instance)))
    }

    fn destroy_stream(&self, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtDestroyStream";
        let raw = self.stream(stream, OP)?;
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

    fn synchronize_device(&self) -> Result<()> {
        self.shared.enter()?;
        result::device::synchronize(&self.shared.rt)
    }

    fn create_event(&self) -> Result<AscendEvent> {
        self.shared.enter()?;
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

    fn create_pool(&self, props: &PoolProps) -> Result<AscendPool> {
        self.shared.enter()?;
        let pool = result::pool::create(&self.shared.rt, &sys::aclrtMemPoolProps::from(props))?;
        let gran = self.pool_granularity();
        let size = if props.max_size == 0 {
            round_down(self.mem_info()?.total, gran)
        } else {
            round_up(props.max_size, gran).unwrap_or(u64::MAX)
        };
        Ok(self.pool_handle(pool, size, gran))
    }

    fn destroy_pool(&self, pool: &AscendPool) -> Result<()> {
        const OP: &str = "aclrtMemPoolDestroy";
        if !self.shared.retire(&pool.handle) {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool"));
        }
        self.shared.enter()?;
        result::pool::destroy(&self.shared.rt, pool.as_raw())
    }

    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &AscendStream) -> Result<()> {
        let s = self.stream(stream, "aclrtMemcpyAsync")?;
        if src.is_empty() {
            return Ok(());
        }
        // Stage the bytes: the caller may reuse `src` at once, and the staging buffer is
        // freed by a host function ordered after the copy.
        let staging: Box<[u8]> = src.into();
        result::memory::memcpy_async(
            &self.shared.rt,
            dst.addr() as usize as *mut c_void,
            staging.as_ptr().cast(),
            staging.len(),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
            s,
        )?;
        result::memory::launch_host_func(&self.shared.rt, s, Box::new(move || drop(staging)))
    }

    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &AscendStream) -> Result<()> {
        let s = self.stream(stream, "aclrtMemcpyAsync")?;
        let len = dst.len();
        if len == 0 {
            return Ok(());
        }
        let mut staging = vec![0u8; len].into_boxed_slice();
        let at = staging.as_mut_ptr().cast::<c_void>();
        result::memory::memcpy_async(
            &self.shared.rt,
            at,
            src.addr() as usize as *const c_void,
            len,
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
            s,
        )?;
        let dst = dst.clone();
        result::memory::launch_host_func(
            &self.shared.rt,
            s,
            Box::new(move || {
                let mut out = dst.lock();
                let n = out.len().min(staging.len());
                out[..n].copy_from_slice(&staging[..n]);
            }),
        )
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
}

/// A length that does not fit the platform's `size_t`: `InvalidParam`, code 100000.
#[cold]
#[inline(never)]
fn too_long(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, "length too large")
}

/// Measures the pool granularity: the USED counter of a one-byte allocation.
fn probe_granularity(dev: &Ascend) -> Result<u64> {
    let pool = dev.create_pool_unprobed()?;
    let stream = dev.create_stream()?;
    let measured = (|| {
        let p = pool.malloc_async(1, &stream)?;
        let used = pool.get(mempool_hal::attr::UsedMemCurrent)?;
        // `p` was just allocated from `pool` and nothing used it: freeing it here is what
        // `free_async` asks of its callers.
        pool.free_ordered(p, &stream)?;
        dev.synchronize_stream(&stream)?;
        Ok(used)
    })();
    let _ = dev.destroy_stream(&stream);
    let _ = dev.destroy_pool(&pool);
    measured
}

impl Ascend {
    /// A one-granule pool for the granularity probe (its `size` is not known yet).
    fn create_pool_unprobed(&self) -> Result<AscendPool> {
        self.shared.enter()?;
        let props = PoolProps::builder().device(self.shared.device).max_size(1).build();
        let pool = result::pool::create(&self.shared.rt, &sys::aclrtMemPoolProps::from(&props))?;
        Ok(self.pool_handle(pool, 1, 1))
    }
}
