//! The emulated platform: what the devices of one emulator instance share, the registry
//! of streams, the registry of pools by address ([`PoolRegistry`]), the graveyard of
//! destroyed pools, injected faults and the host's observations at synchronization.

use crate::clock::{Clock, HostClock};
use crate::config::Config;
use crate::hostfn::{self, HostFnThread};
use crate::pool::budget::DeviceMemory;
use crate::pool::registry::PoolRegistry;
use crate::pool::shared::{Faults, PoolShared};
use crate::stream::{StreamShared, WorkerDelay, lock};
use mempool_hal::Result;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

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
    /// Each device's memory, which its pools' reservations draw on (contract §2).
    pub(crate) memory: Vec<Arc<DeviceMemory>>,
    /// The host-function thread of each device that has started one (only with
    /// `Config::host_functions_on_one_thread`).
    host_fn_threads: Mutex<HashMap<u32, HostFnThread>>,
    /// What the host has observed complete: orders everything enqueued afterwards.
    pub(crate) host: Arc<HostClock>,
    /// Tests: random delays of the stream workers.
    pub(crate) worker_delay: Option<WorkerDelay>,
}

impl Drop for Platform {
    fn drop(&mut self) {
        for s in self.streams.get_mut().unwrap_or_else(PoisonError::into_inner).values() {
            s.close();
        }
    }
}

impl Platform {
    pub(crate) fn new(config: Config, worker_delay: Option<WorkerDelay>) -> Platform {
        Platform {
            id: NEXT_PLATFORM.fetch_add(1, Ordering::Relaxed),
            config,
            next_id: AtomicU64::new(1),
            streams: Mutex::new(HashMap::new()),
            registry: Arc::new(PoolRegistry::default()),
            graveyard: Mutex::new(Vec::new()),
            faults: Arc::new(Faults::default()),
            memory: (0..config.devices).map(|_| Arc::new(DeviceMemory::new(config.device_memory))).collect(),
            host_fn_threads: Mutex::new(HashMap::new()),
            host: Arc::new(HostClock::default()),
            worker_delay,
        }
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, id: u64) -> Option<Arc<StreamShared>> {
        lock(&self.streams).get(&id).cloned()
    }

    pub(crate) fn streams_of(&self, device: u32) -> Vec<Arc<StreamShared>> {
        lock(&self.streams).values().filter(|s| s.device == device).cloned().collect()
    }

    /// The host-function thread of `device`, started at its first use; `None` when each
    /// stream's worker runs its own host functions.
    pub(crate) fn host_fn_thread(&self, device: u32) -> Result<Option<HostFnThread>> {
        if !self.config.host_functions_on_one_thread {
            return Ok(None);
        }
        let mut threads = lock(&self.host_fn_threads);
        if let Some(t) = threads.get(&device) {
            return Ok(Some(t.clone()));
        }
        let t = hostfn::spawn(self.id, device)?;
        threads.insert(device, t.clone());
        Ok(Some(t))
    }

    /// Marks everything in `clock` observed complete by the host: for reuse rule b (each
    /// stream's `host_known`) and for the ordering of everything enqueued afterwards.
    pub(crate) fn observe_clock(&self, clock: &Clock) {
        self.host.observe(clock);
        for (sid, pos) in clock.iter() {
            if let Some(s) = self.stream(sid) {
                s.observe(pos);
            }
        }
    }

    /// Pools release above their threshold; destroyed pools whose streams have passed the
    /// destroy give their memory back.
    pub(crate) fn after_sync(&self, device: u32) {
        for p in self.registry.pools_of(device) {
            p.release_at_sync();
        }
        self.bury();
    }

    /// Registers a new stream.
    pub(crate) fn add_stream(&self, s: &Arc<StreamShared>) {
        lock(&self.streams).insert(s.id, Arc::clone(s));
    }

    /// Forgets destroyed streams that have drained; their blocks stay known complete
    /// through the host's observation.
    pub(crate) fn forget_drained_streams(&self) {
        lock(&self.streams).retain(|_, s| !(s.is_destroyed() && s.is_idle()));
    }

    /// Keeps a pool just destroyed in the graveyard while any stream has not passed the
    /// destroy (work enqueued before it still runs on its memory).
    ///
    /// On the cann-open profile (contract §12) a destroy does not wait for queued work: the
    /// pool's memory is given back at once, and work queued before the destroy that
    /// touches it fails when it runs (an asynchronous failure, reported by the next
    /// synchronization of its stream, never a fault: the range stays reserved and
    /// inaccessible until the quarantine lets it go).
    pub(crate) fn entomb(&self, pool: &Arc<PoolShared>) {
        if !self.config.profile.destroy_waits() {
            pool.give_back();
            return;
        }
        let waits: Vec<_> = lock(&self.streams)
            .values()
            .map(|s| (Arc::clone(s), s.state().last_real))
            .filter(|(s, pos)| s.completed() < *pos)
            .collect();
        if !waits.is_empty() {
            lock(&self.graveyard).push(Grave { _pool: Arc::clone(pool), waits });
        }
    }

    /// Drops the graveyard's pools whose streams have all passed their destroy.
    pub(crate) fn bury(&self) {
        lock(&self.graveyard).retain(|g| g.waits.iter().any(|(s, pos)| s.completed() < *pos));
    }
}
