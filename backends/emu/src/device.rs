//! [`Emulator`], one device of an emulated platform, with its builder, the [`Device`]
//! implementation (streams, events, pools, copies, memsets, host functions) and the test
//! controls (`step`, `run_pending`, `is_idle`, `inject_commit_failures`).

use crate::config::{Config, ExecutionMode};
use crate::env;
use crate::event::{EmuEvent, EventShared, Record};
use crate::platform::Platform;
use crate::pool::EmuPool;
use crate::pool::access::{self, CheckedRange, CopySide, ResolvedSide, copy, enqueue_touching};
use crate::pool::shared::{PoolSettings, PoolShared};
use crate::stream::{EmuStream, StreamShared, Work, WorkerDelay};
use mempool_hal::{
    Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, HostFn, MemInfo, PoolCall, PoolProps, Result,
    StreamStatus, code,
};
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

/// Builds an [`Emulator`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EmulatorBuilder {
    config: Config,
    worker_delay: Option<WorkerDelay>,
}

impl EmulatorBuilder {
    /// Number of devices.
    pub fn devices(mut self, n: u32) -> Self {
        self.config.devices = n;
        self
    }
    /// Memory of each device, in bytes.
    pub fn device_memory(mut self, bytes: u64) -> Self {
        self.config.device_memory = bytes;
        self
    }
    /// Pool granularity, in bytes.
    pub fn granularity(mut self, bytes: u64) -> Self {
        self.config.granularity = bytes;
        self
    }
    /// Execution mode.
    pub fn mode(mut self, mode: ExecutionMode) -> Self {
        self.config.mode = mode;
        self
    }
    /// Turns the stream-order checker on (the default) or off.
    pub fn checker(mut self, on: bool) -> Self {
        self.config.checker = on;
        self
    }
    /// Turns the checker's race mode on or off (default off): two accesses to overlapping
    /// device memory on different streams, at least one a write, neither ordered after the
    /// other, are refused at the second one (contract §11). Needs the checker.
    pub fn race_check(mut self, on: bool) -> Self {
        self.config.races = on;
        self
    }
    /// Tests only: each stream's worker sleeps a pseudo-random time below `max` before
    /// each operation, from a sequence fixed by `seed`, so tests can show that no verdict
    /// depends on timing.
    #[doc(hidden)]
    pub fn worker_delay_for_tests(mut self, max: std::time::Duration, seed: u64) -> Self {
        self.worker_delay = Some(WorkerDelay { max, seed });
        self
    }
    /// The longest any wait of the host inside the emulator may take (default 60 s); a
    /// stream's own wait lasts until the awaited work has run ([`Config::wait_timeout`]).
    pub fn wait_timeout(mut self, t: std::time::Duration) -> Self {
        self.config.wait_timeout = t;
        self
    }
    /// Runs the host functions of all streams of a device one at a time on one thread of
    /// that device, as CANN runs a context's host functions on its one callback thread
    /// (default off: each stream's worker runs its own host functions).
    ///
    /// A stream's worker hands each host function to that thread and waits for it to
    /// return, so stream order is kept; a host function that blocks then also holds back
    /// the host functions of the device's other streams, while their copies, memsets and
    /// kernels still run. A host function that waits for a stream whose own host function
    /// (at or before the awaited work) is still to run fails at once instead of
    /// deadlocking; a longer chain of waits through other streams ends with the
    /// [wait timeout](EmulatorBuilder::wait_timeout).
    pub fn host_functions_on_one_thread(mut self, on: bool) -> Self {
        self.config.host_functions_on_one_thread = on;
        self
    }
    /// The pools' behaviour (contract §12; default [`Profile::Documented`](crate::Profile)):
    /// with [`Profile::CannOpen`](crate::Profile::CannOpen) the pools behave as the open
    /// CANN runtime does: reuse rules a-e off (every allocation takes fresh address space;
    /// cached blocks come back only through `trim_to`), no release at synchronization,
    /// and a destroy that does not wait for queued work (the pool's memory is given back
    /// at once; work queued before the destroy that touches it fails when it runs, and
    /// the next synchronization of its stream reports that).
    pub fn profile(mut self, profile: crate::Profile) -> Self {
        self.config.profile = profile;
        self
    }
    /// Shorthand for `mode(ExecutionMode::Deferred)`.
    pub fn deferred(self) -> Self {
        self.mode(ExecutionMode::Deferred)
    }

    /// Applies the `MEMPOOL_EMU_*` variables that are set (see the `ENV_*` constants);
    /// unset or empty ones keep the builder's value.
    ///
    /// # Errors
    ///
    /// `InvalidParam` (100000) naming the variable and its value when a value does not
    /// parse, or is out of the range [`EmulatorBuilder::build`] enforces.
    pub fn with_env(self) -> Result<Self> {
        let config = env::read_vars(self.config, |name| std::env::var_os(name))?;
        let worker_delay = match env::read_worker_delay(|name| std::env::var_os(name))? {
            Some((max, seed)) => Some(WorkerDelay { max, seed }),
            None => self.worker_delay,
        };
        Ok(EmulatorBuilder { config, worker_delay })
    }

    /// Device 0 of a new emulated platform.
    ///
    /// # Errors
    ///
    /// `InvalidParam` (100000) for no devices or more than [`MAX_DEVICES`](crate::MAX_DEVICES), a
    /// granularity that is not a power of two from the host page size to
    /// [`MAX_GRANULARITY`](crate::MAX_GRANULARITY), or device memory below one granule or above
    /// [`MAX_DEVICE_MEMORY`](crate::MAX_DEVICE_MEMORY).
    pub fn build(self) -> Result<Emulator> {
        let c = self.config;
        if let Err((_, m)) = c.check() {
            return Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, "Emulator::build", m));
        }
        Ok(Emulator { platform: Arc::new(Platform::new(c, self.worker_delay)), device: 0 })
    }
}

/// One device of an emulated platform; implements [`mempool_hal::Device`].
///
/// Cheap to clone; clones are the same device. Handles (streams, events, pools) of one
/// platform are foreign to another: using them there is `InvalidHandle`.
#[derive(Clone)]
pub struct Emulator {
    pub(crate) platform: Arc<Platform>,
    pub(crate) device: u32,
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator").field("platform", &self.platform.id).field("device", &self.device).finish()
    }
}

impl Default for Emulator {
    fn default() -> Self {
        Emulator::new()
    }
}

impl Emulator {
    /// Device 0 of a platform with the default [`Config`]: one 16 GiB device, 2 MiB
    /// granularity, threaded.
    pub fn new() -> Emulator {
        Emulator { platform: Arc::new(Platform::new(Config::default(), None)), device: 0 }
    }

    /// A builder for another configuration.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder::default()
    }

    /// The platform's configuration.
    pub fn config(&self) -> Config {
        self.platform.config
    }

    /// Device `id` of the same platform.
    ///
    /// # Errors
    ///
    /// `InvalidDevice` (107001) for an id out of range.
    pub fn device(&self, id: u32) -> Result<Emulator> {
        if id >= self.platform.config.devices {
            return Err(Error::new(
                ErrorKind::InvalidDevice,
                code::ACL_ERROR_RT_INVALID_DEVICEID,
                "Emulator::device",
                format!("device {id} does not exist ({} device(s))", self.platform.config.devices),
            ));
        }
        Ok(Emulator { platform: Arc::clone(&self.platform), device: id })
    }
}

impl Emulator {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    pub(crate) fn timeout(&self) -> std::time::Duration {
        self.platform.config.wait_timeout
    }

    /// Resolves a device range to its pool (the checks come when it is enqueued) or to the
    /// chunks mapped behind it in a reserved range (checked now).
    pub(crate) fn range(&self, ptr: DevicePtr, len: u64, write: bool, op: &'static str) -> Result<CheckedRange> {
        access::resolve(&self.platform.registry, self.platform.config.checker, ptr, len, write, op)
    }

    /// Checks a peer device for the peer-access calls: another device of the platform.
    fn peer_of(&self, peer: u32, op: &'static str) -> Result<u32> {
        if peer == self.device {
            return Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_INVALID_PARAM,
                op,
                format!("device {peer} is its own peer"),
            ));
        }
        self.device(peer).map(|_| peer).map_err(|e| e.with_op(op))
    }

    /// Whether this device may reach `peer`'s memory ([`Device::enable_peer_access`]; a
    /// device always reaches its own).
    pub fn peer_access_enabled(&self, peer: u32) -> bool {
        peer == self.device || crate::stream::lock(&self.platform.peers).contains(&(self.device, peer))
    }

    /// Makes the next `n` host-memory commits of this platform fail, as if the host were
    /// out of memory: the allocations that need them get `OutOfMemory` (with a message
    /// saying the commit failed) and the pool stays intact; so does the creation of a
    /// physical chunk of virtual memory (code 207001, as CUDA's `CUDA_ERROR_OUT_OF_MEMORY`
    /// that PyTorch recovers from). For tests of failure paths.
    pub fn inject_commit_failures(&self, n: u32) {
        self.platform.faults.commit_failures.store(n, Ordering::Release);
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

    /// [`Device::synchronize_stream`] with a time limit: `None` waits as long as any wait of
    /// the emulator may ([`EmulatorBuilder::wait_timeout`]). On success the host has
    /// observed the stream, exactly as after [`Device::synchronize_stream`].
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017). The work did not complete
    /// in time: `NotReady` with code 507046 (`ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`); nothing is
    /// observed and the work stays queued. Otherwise as [`Device::synchronize_stream`].
    pub fn synchronize_stream_timeout(&self, stream: &EmuStream, timeout: Option<std::time::Duration>) -> Result<()> {
        const OP: &str = "synchronize_stream_timeout";
        let Some(t) = timeout.filter(|t| *t < self.timeout()) else { return self.synchronize_stream(stream) };
        let s = stream.live(self.platform.id, OP)?;
        let (tail, clock) = s.drain_observing(t, OP).map_err(|_| {
            Error::new(
                ErrorKind::NotReady,
                code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                OP,
                format!("stream {} did not complete its work within {t:?}", s.id),
            )
        })?;
        s.observe(tail);
        self.platform.observe_clock(&clock);
        self.platform.after_sync(s.device);
        Self::sync_failure(s)
    }

    /// [`Device::synchronize_event`] with a time limit (`None`: as long as any wait of the
    /// emulator may). An event never recorded completes at once.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017). The recorded point was not
    /// reached in time: `NotReady` with code 507047 (`ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`);
    /// nothing is observed.
    pub fn synchronize_event_timeout(&self, event: &EmuEvent, timeout: Option<std::time::Duration>) -> Result<()> {
        const OP: &str = "synchronize_event_timeout";
        let Some(t) = timeout.filter(|t| *t < self.timeout()) else { return self.synchronize_event(event) };
        let e = event.live(self.platform.id, OP)?;
        if let Some(rec) = e.record() {
            rec.stream.wait_for(rec.dep_real, t, OP).map_err(|_| {
                Error::new(
                    ErrorKind::NotReady,
                    code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                    OP,
                    format!("event {} was not reached within {t:?}", e.id),
                )
            })?;
            self.platform.observe_record(&rec);
        }
        self.platform.after_sync(Self::event_device(e));
        Ok(())
    }

    /// The device whose pools a synchronization with event `e` releases: that of the
    /// stream of its latest record, or the event's own when it was never recorded.
    fn event_device(e: &EventShared) -> u32 {
        e.record().map_or(e.device, |r| r.stream.device)
    }

    /// Forgets `event`'s latest record, as `aclrtResetEvent` does: the event then queries
    /// not ready and a wait on it is a no-op until it is recorded again. The reset takes
    /// effect at the call, as a record does; `stream` is checked to be live.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign handle: `InvalidHandle` (107017).
    pub fn reset_event(&self, event: &EmuEvent, stream: &EmuStream) -> Result<()> {
        const OP: &str = "reset_event";
        let e = event.live(self.platform.id, OP)?;
        stream.live(self.platform.id, OP)?;
        e.clear_record();
        Ok(())
    }

    /// When `event`'s latest recorded point was reached, in microseconds since the Unix
    /// epoch (wall clock).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017). An event never recorded, or
    /// whose point has not been reached: `NotReady` (507000).
    pub fn event_timestamp_us(&self, event: &EmuEvent) -> Result<u64> {
        const OP: &str = "event_timestamp_us";
        let e = event.live(self.platform.id, OP)?;
        let stamp = e.record().filter(|r| r.complete()).and_then(|r| r.stamp.get().copied()).ok_or_else(|| {
            Error::new(
                ErrorKind::NotReady,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                OP,
                format!("event {} was never recorded or has not completed", e.id),
            )
        })?;
        let at = std::time::SystemTime::now() - stamp.elapsed();
        let us = at.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros());
        Ok(u64::try_from(us).unwrap_or(u64::MAX))
    }

    /// Tests only: how many streams the platform's registry holds: those alive, destroyed
    /// ones whose worker still runs, and a bounded number of finished ones kept for the
    /// next device synchronization.
    #[doc(hidden)]
    pub fn registered_streams_for_tests(&self) -> usize {
        self.platform.registered_streams()
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
        // What the device's pools may still reserve, all together (contract §2).
        let free = self.platform.memory[self.device as usize].free();
        Ok(MemInfo { free, total: self.platform.config.device_memory })
    }

    fn create_stream(&self) -> Result<EmuStream> {
        Ok(EmuStream { shared: self.platform().add_stream(self.device)? })
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
        let (tail, clock) = s.drain_observing(self.timeout(), "synchronize_stream")?;
        s.observe(tail);
        self.platform.observe_clock(&clock);
        // The pools of the stream's device, whichever device this handle is.
        self.platform.after_sync(s.device);
        Self::sync_failure(s)
    }

    fn query_stream(&self, stream: &EmuStream) -> Result<StreamStatus> {
        let s = stream.live(self.platform.id, "query_stream")?;
        // A complete answer is a host observation: it orders everything enqueued
        // afterwards (contract §1), as an event query's does. It is no synchronization:
        // reuse rule b counts synchronizations only (contract §4), and it releases nothing
        // and leaves failures to the next synchronization.
        Ok(match s.query() {
            Some((_, clock)) => {
                self.platform.host.observe(&clock);
                StreamStatus::Complete
            }
            None => StreamStatus::NotReady,
        })
    }

    fn synchronize_device(&self) -> Result<()> {
        let p = self.platform();
        // Every stream is drained and observed, and the pools release, even when one
        // fails or times out: the first error is returned at the end (in stream-id order,
        // so the same program reports the same error).
        let mut streams = p.streams_to_sync(self.device);
        streams.sort_unstable_by_key(|s| s.id);
        let mut first_failure = None;
        for s in &streams {
            match s.drain_observing(self.timeout(), "synchronize_device") {
                Ok((tail, clock)) => {
                    s.observe(tail);
                    // Everything the stream's end is ordered after, on any device, is
                    // observed too (contract §1, transitively), for rule b as well.
                    p.observe_clock(&clock);
                }
                Err(e) => {
                    first_failure.get_or_insert(e);
                }
            }
            if let Some(e) = s.take_failure() {
                first_failure.get_or_insert(e);
            }
        }
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
            // The stream's clock as it is, shared (`pos` is the record's own point).
            Record { stream: Arc::clone(s), pos, dep_real, clock: Arc::clone(st.clock()), stamp }
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
            s.push_wait_locked(&mut st, Arc::clone(&rec.stream), rec.dep_real, self.timeout())?;
        }
        if let Some(mut clock) = st.clock().merged(&rec.clock, rec.point()) {
            // Entries of streams long gone would otherwise pile up (`Platform::prune`).
            if clock.len() > st.prune_at {
                // The clock is new, not shared yet: changed in place.
                self.platform.prune(Arc::make_mut(&mut clock));
                st.prune_at = crate::platform::prune_at(clock.len());
            }
            s.set_clock_locked(&mut st, clock);
        }
        Ok(())
    }

    fn synchronize_event(&self, event: &EmuEvent) -> Result<()> {
        let e = event.live(self.platform.id, "synchronize_event")?;
        if let Some(rec) = e.record() {
            rec.stream.wait_for(rec.dep_real, self.timeout(), "synchronize_event")?;
            self.platform.observe_record(&rec);
        }
        self.platform.after_sync(Self::event_device(e));
        Ok(())
    }

    fn query_event(&self, event: &EmuEvent) -> Result<EventStatus> {
        let e = event.live(self.platform.id, "query_event")?;
        // CANN: NOT_READY also when the event was never recorded; CUDA: complete.
        Ok(match e.record() {
            Some(r) if r.complete() => {
                // What the host saw complete orders everything enqueued afterwards
                // (contract §1); reuse rule b counts synchronizations only.
                self.platform.host.observe_with(&r.clock, r.point());
                EventStatus::Complete
            }
            None if self.platform.config.profile.unrecorded_event_is_complete() => EventStatus::Complete,
            _ => EventStatus::NotReady,
        })
    }

    fn event_elapsed_ms(&self, start: &EmuEvent, end: &EmuEvent) -> Result<f32> {
        const OP: &str = "event_elapsed_ms";
        let mut times = [None; 2];
        for (i, ev) in [start, end].into_iter().enumerate() {
            let e = ev.live(self.platform.id, OP)?;
            // CANN answers 507000 for an event never recorded, as for one not complete.
            let rec = e.record().ok_or_else(|| {
                Error::new(
                    ErrorKind::NotReady,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
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
            PoolSettings {
                faults: Arc::clone(&p.faults),
                wait_timeout: c.wait_timeout,
                checker: c.checker,
                races: c.checker && c.races,
                host: Arc::clone(&p.host),
                profile: c.profile,
                memory: Arc::clone(&p.memory[props.location.id as usize]),
            },
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
        p.entomb(shared);
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
        let d = ResolvedSide::Device(t.mem.clone(), dst.addr());
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
        let from = ResolvedSide::Device(t.mem.clone(), src.addr());
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
        usize::try_from(len).map_err(|_| Error::invalid_param(OP, "length too large"))?;
        let t = self.range(dst, len, true, OP)?;
        let mem = t.mem.clone();
        enqueue_touching(
            s,
            std::slice::from_ref(&t),
            OP,
            Box::new(move || {
                mem.for_each_piece(dst.addr(), len, true, OP, |_, p, k| {
                    // SAFETY: the piece is committed read/write memory of `k <= n` bytes,
                    // pinned for writing against release, unmapping and other pinned accesses.
                    unsafe { std::ptr::write_bytes(p, value, k) }
                })
            }),
        )
    }

    fn launch_host_func(&self, stream: &EmuStream, f: HostFn) -> Result<()> {
        const OP: &str = "launch_host_func";
        let s = stream.live(self.platform.id, OP)?;
        let work: Work = match self.platform.host_fn_thread(self.device)? {
            None => Box::new(move || {
                f();
                Ok(())
            }),
            Some(to) => {
                let id = s.id;
                Box::new(move || crate::hostfn::run_on(&to, f, id))
            }
        };
        s.push_host_fn(work).map(|_| ())
    }

    /// Every other device of the platform can be reached (the emulator's devices share the
    /// host's memory); the device itself is refused (100000, as ACL), a peer out of range is
    /// `InvalidDevice` (107001).
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        self.peer_of(peer, "can_access_peer").map(|_| true)
    }

    /// Enabling twice succeeds (as on ACL).
    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        let peer = self.peer_of(peer, "enable_peer_access")?;
        crate::stream::lock(&self.platform.peers).insert((self.device, peer));
        Ok(())
    }

    /// Not enabled: `InvalidParam` with code 507899 (the ACL driver's refusal).
    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        const OP: &str = "disable_peer_access";
        let peer = self.peer_of(peer, OP)?;
        if !crate::stream::lock(&self.platform.peers).remove(&(self.device, peer)) {
            return Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                OP,
                format!("peer access from device {} to device {peer} is not enabled", self.device),
            ));
        }
        Ok(())
    }
}
