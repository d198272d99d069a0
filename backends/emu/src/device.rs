//! The emulated platform (devices, the registries of streams and pools) and the
//! [`Device`] implementation.

use crate::Emulator;
use crate::config::{Config, ExecutionMode};
use crate::event::{EmuEvent, EventShared, Record};
use crate::pool::EmuPool;
use crate::pool::access::{self, CopySide, ResolvedSide, copy, enqueue_touching};
use crate::pool::registry::PoolRegistry;
use crate::pool::shared::{Faults, PoolSettings, PoolShared};
use crate::stream::{EmuStream, StreamShared, Work, lock};
use mempool_hal::{
    Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, HostFn, MemInfo, PoolCall, PoolProps, Result, code,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

static NEXT_PLATFORM: AtomicU64 = AtomicU64::new(1);

/// A destroyed pool whose memory waits for the streams to pass the destroy.
struct Grave {
    _pool: Arc<PoolShared>,
    waits: Vec<(Arc<StreamShared>, u64)>,
}

/// Everything the devices of one emulator instance share.
pub(crate) struct Platform {
    pub(crate) id: u64,
    pub(crate) config: Config,
    next_id: AtomicU64,
    streams: Mutex<HashMap<u64, Arc<StreamShared>>>,
    pub(crate) registry: Arc<PoolRegistry>,
    graveyard: Mutex<Vec<Grave>>,
    pub(crate) faults: Arc<Faults>,
}

impl Drop for Platform {
    fn drop(&mut self) {
        for s in self.streams.get_mut().unwrap_or_else(PoisonError::into_inner).values() {
            s.close();
        }
    }
}

impl Platform {
    pub(crate) fn new(config: Config) -> Platform {
        Platform {
            id: NEXT_PLATFORM.fetch_add(1, Ordering::Relaxed),
            config,
            next_id: AtomicU64::new(1),
            streams: Mutex::new(HashMap::new()),
            registry: Arc::new(PoolRegistry::default()),
            graveyard: Mutex::new(Vec::new()),
            faults: Arc::new(Faults::default()),
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, id: u64) -> Option<Arc<StreamShared>> {
        lock(&self.streams).get(&id).cloned()
    }

    fn streams_of(&self, device: u32) -> Vec<Arc<StreamShared>> {
        lock(&self.streams).values().filter(|s| s.device == device).cloned().collect()
    }

    /// Marks everything in `clock` observed complete by the host.
    fn observe_clock(&self, clock: &crate::clock::Clock) {
        for (sid, pos) in clock.iter() {
            if let Some(s) = self.stream(sid) {
                s.observe(pos);
            }
        }
    }

    /// Pools release above their threshold; destroyed pools whose streams have passed the
    /// destroy give their memory back.
    fn after_sync(&self, device: u32) {
        for p in self.registry.pools_of(device) {
            p.release_at_sync();
        }
        self.bury();
    }

    fn bury(&self) {
        lock(&self.graveyard).retain(|g| g.waits.iter().any(|(s, pos)| s.completed() < *pos));
    }
}

impl Emulator {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn timeout(&self) -> std::time::Duration {
        self.platform.config.wait_timeout
    }

    /// Makes the next `n` host-memory commits of this platform fail, as if the host were
    /// out of memory: the allocations that need them get `OutOfMemory` (with a message
    /// saying the commit failed) and the pool stays intact. For tests of failure paths.
    pub fn inject_commit_failures(&self, n: u32) {
        self.platform.faults.commit_failures.store(n, Ordering::Release);
    }

    fn enqueue(&self, stream: &EmuStream, op: &'static str, work: Work) -> Result<()> {
        let s = stream.live(self.platform.id, op)?;
        s.push(work).map(|_| ())
    }

    fn sync_failure(s: &StreamShared) -> Result<()> {
        match s.take_failure() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Runs everything enqueued on `stream` so far, **without** the host observing it:
    /// no release, no known-complete reuse. In threaded mode it only waits.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn run_pending(&self, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.platform.id, "run_pending")?;
        s.drain(self.timeout(), "run_pending").map(|_| ())
    }

    /// Deferred mode: runs the next `n` queued operations of `stream` (and whatever they
    /// wait for on other streams), without the host observing them. Returns how many ran.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn step(&self, stream: &EmuStream, n: usize) -> Result<usize> {
        let s = stream.live(self.platform.id, "step")?;
        let target = s.nth_pending(n);
        if let Some((pos, count)) = target {
            s.wait_for(pos, self.timeout(), "step")?;
            Ok(count)
        } else {
            Ok(0)
        }
    }

    /// Whether everything enqueued on `stream` has run (no host observation).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn is_idle(&self, stream: &EmuStream) -> Result<bool> {
        Ok(stream.live(self.platform.id, "is_idle")?.is_idle())
    }
}

impl Device for Emulator {
    type Stream = EmuStream;
    type Event = EmuEvent;
    type Pool = EmuPool;

    fn id(&self) -> u32 {
        self.device
    }

    fn pool_granularity(&self) -> u64 {
        self.platform.config.granularity
    }

    fn mem_info(&self) -> Result<MemInfo> {
        let total = self.platform.config.device_memory;
        let reserved: u64 = self.platform.registry.pools_of(self.device).iter().map(|p| p.reserved()).sum();
        Ok(MemInfo { free: total.saturating_sub(reserved), total })
    }

    fn create_stream(&self) -> Result<EmuStream> {
        let p = self.platform();
        let deferred = p.config.mode == ExecutionMode::Deferred;
        let shared = StreamShared::spawn(p.next_id(), self.device, p.id, deferred)?;
        lock(&p.streams).insert(shared.id, Arc::clone(&shared));
        Ok(EmuStream { shared })
    }

    fn destroy_stream(&self, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.platform.id, "destroy_stream")?;
        if !s.close() {
            return Err(Error::stale_handle("destroy_stream", format_args!("stream {}", s.id)));
        }
        Ok(())
    }

    fn synchronize_stream(&self, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.platform.id, "synchronize_stream")?;
        let (tail, clock) = s.drain_with_clock(self.timeout(), "synchronize_stream")?;
        s.observe(tail);
        self.platform.observe_clock(&clock);
        self.platform.after_sync(self.device);
        Self::sync_failure(s)
    }

    fn synchronize_device(&self) -> Result<()> {
        let p = self.platform();
        let streams = p.streams_of(self.device);
        let mut first_failure = None;
        for s in &streams {
            let tail = s.drain(self.timeout(), "synchronize_device")?;
            s.observe(tail);
            if let Some(e) = s.take_failure() {
                first_failure.get_or_insert(e);
            }
        }
        // Destroyed streams that have drained are forgotten; their blocks stay known
        // complete through the observation above.
        lock(&p.streams).retain(|_, s| !(s.is_destroyed() && s.is_idle()));
        p.after_sync(self.device);
        first_failure.map_or(Ok(()), Err)
    }

    fn create_event(&self) -> Result<EmuEvent> {
        let p = self.platform();
        Ok(EmuEvent { shared: Arc::new(EventShared::new(p.next_id(), self.device, p.id)) })
    }

    fn destroy_event(&self, event: &EmuEvent) -> Result<()> {
        let e = event.live(self.platform.id, "destroy_event")?;
        if !e.mark_destroyed() {
            return Err(Error::stale_handle("destroy_event", format_args!("event {}", e.id)));
        }
        Ok(())
    }

    fn record_event(&self, event: &EmuEvent, stream: &EmuStream) -> Result<()> {
        const OP: &str = "record_event";
        let e = event.live(self.platform.id, OP)?;
        let s = stream.live(self.platform.id, OP)?;
        let stamp = Arc::new(OnceLock::new());
        let record = {
            let mut st = s.state();
            let (pos, dep_real) = s.marker_locked(&mut st)?;
            // The event completes with the last real operation before it; its time is
            // stamped then (or now, if that has run).
            s.stamp_at_locked(&mut st, dep_real, Arc::clone(&stamp));
            let mut clock = (*st.clock).clone();
            clock.raise(s.id, pos);
            Record { stream: Arc::clone(s), pos, dep_real, clock, stamp }
        };
        e.set_record(record);
        Ok(())
    }

    fn stream_wait_event(&self, stream: &EmuStream, event: &EmuEvent) -> Result<()> {
        const OP: &str = "stream_wait_event";
        let s = stream.live(self.platform.id, OP)?;
        let e = event.live(self.platform.id, OP)?;
        let Some(rec) = e.record() else { return Ok(()) };
        let mut st = s.state();
        if rec.stream.id != s.id && !rec.complete() {
            let (src, target, timeout) = (Arc::clone(&rec.stream), rec.dep_real, self.timeout());
            s.push_locked(&mut st, Box::new(move || src.wait_for_work(target, timeout)))?;
        }
        Arc::make_mut(&mut st.clock).merge(&rec.clock);
        Ok(())
    }

    fn synchronize_event(&self, event: &EmuEvent) -> Result<()> {
        let e = event.live(self.platform.id, "synchronize_event")?;
        if let Some(rec) = e.record() {
            rec.stream.wait_for(rec.dep_real, self.timeout(), "synchronize_event")?;
            self.platform.observe_clock(&rec.clock);
            rec.stream.observe(rec.pos);
        }
        self.platform.after_sync(self.device);
        Ok(())
    }

    fn query_event(&self, event: &EmuEvent) -> Result<EventStatus> {
        let e = event.live(self.platform.id, "query_event")?;
        // CANN: NOT_READY also when the event was never recorded.
        Ok(match e.record() {
            Some(r) if r.complete() => EventStatus::Complete,
            _ => EventStatus::NotReady,
        })
    }

    fn event_elapsed_ms(&self, start: &EmuEvent, end: &EmuEvent) -> Result<f32> {
        const OP: &str = "event_elapsed_ms";
        let mut times = [None; 2];
        for (i, ev) in [start, end].into_iter().enumerate() {
            let e = ev.live(self.platform.id, OP)?;
            let rec = e.record().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidParam,
                    code::ACL_ERROR_RT_PARAM_INVALID,
                    OP,
                    format!("event {} was never recorded", e.id),
                )
            })?;
            times[i] = Some(*rec.stamp.get().filter(|_| rec.complete()).ok_or_else(|| {
                Error::new(
                    ErrorKind::NotReady,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    OP,
                    format!("event {} has not completed", e.id),
                )
            })?);
        }
        let (Some(a), Some(b)) = (times[0], times[1]) else { unreachable!("both times were set above") };
        let ms =
            if b >= a { b.duration_since(a).as_secs_f64() * 1e3 } else { -(a.duration_since(b).as_secs_f64() * 1e3) };
        Ok(ms as f32)
    }

    fn create_pool(&self, props: &PoolProps) -> Result<EmuPool> {
        let p = self.platform();
        let c = &p.config;
        let size = props.validate(c.devices, c.device_memory, c.granularity)?;
        let shared = Arc::new(PoolShared::create(
            p.next_id(),
            props.location.id,
            p.id,
            size,
            c.granularity,
            PoolSettings { faults: Arc::clone(&p.faults), wait_timeout: c.wait_timeout, checker: c.checker },
        )?);
        p.registry.insert(&shared);
        p.bury();
        Ok(EmuPool { shared, registry: Arc::clone(&p.registry) })
    }

    fn destroy_pool(&self, pool: &EmuPool) -> Result<()> {
        const OP: &str = "destroy_pool";
        let p = self.platform();
        let shared = &pool.shared;
        if shared.platform != p.id || !shared.mark_destroyed() {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, format_args!("pool {}", shared.id)));
        }
        p.registry.retire(shared);
        let waits: Vec<_> = lock(&p.streams)
            .values()
            .map(|s| (Arc::clone(s), s.state().last_real))
            .filter(|(s, pos)| s.completed() < *pos)
            .collect();
        if !waits.is_empty() {
            lock(&p.graveyard).push(Grave { _pool: Arc::clone(shared), waits });
        }
        p.bury();
        Ok(())
    }

    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &EmuStream) -> Result<()> {
        const OP: &str = "memcpy_h2d_async";
        let s = stream.live(self.platform.id, OP)?;
        if src.is_empty() {
            return Ok(());
        }
        let len = src.len() as u64;
        let t = self.range(dst, len, true, OP)?;
        let d = ResolvedSide::Device(Arc::clone(&t.pool), dst.addr());
        let data: Box<[u8]> = src.into();
        enqueue_touching(
            s,
            std::slice::from_ref(&t),
            OP,
            Box::new(move || {
                // SAFETY: the host side is `data`, owned by this work until it returns.
                unsafe { copy(d, ResolvedSide::Host(data.as_ptr() as usize), len, OP) }
            }),
        )
    }

    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memcpy_d2h_async";
        let s = stream.live(self.platform.id, OP)?;
        let len = dst.len() as u64;
        if len == 0 {
            return Ok(());
        }
        let t = self.range(src, len, false, OP)?;
        let from = ResolvedSide::Device(Arc::clone(&t.pool), src.addr());
        let dst = dst.clone();
        enqueue_touching(
            s,
            std::slice::from_ref(&t),
            OP,
            Box::new(move || {
                let mut out = dst.lock();
                let n = (out.len() as u64).min(len);
                // SAFETY: the host side is the locked buffer, holding at least `n` bytes.
                unsafe { copy(ResolvedSide::Host(out.as_mut_ptr() as usize), from, n, OP) }
            }),
        )
    }

    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memcpy_d2d_async";
        let s = stream.live(self.platform.id, OP)?;
        let (registry, checker) = (&self.platform.registry, self.platform.config.checker);
        // SAFETY: both sides are device memory, checked when enqueued and when the copy runs.
        unsafe { access::copy_async(registry, checker, s, (CopySide::Device(dst), CopySide::Device(src)), len, OP) }
    }

    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "memset_async";
        let s = stream.live(self.platform.id, OP)?;
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| Error::invalid_param(OP, "length too large"))?;
        let t = self.range(dst, len, true, OP)?;
        let pool = Arc::clone(&t.pool);
        enqueue_touching(
            s,
            std::slice::from_ref(&t),
            OP,
            Box::new(move || {
                pool.with_memory(dst.addr(), len, OP, |p| {
                    // SAFETY: the range is committed read/write memory, locked against release.
                    unsafe { std::ptr::write_bytes(p, value, n) }
                })
            }),
        )
    }

    fn launch_host_func(&self, stream: &EmuStream, f: HostFn) -> Result<()> {
        self.enqueue(
            stream,
            "launch_host_func",
            Box::new(move || {
                f();
                Ok(())
            }),
        )
    }
}
