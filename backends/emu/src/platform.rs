//! The emulated platform: what the devices of one emulator instance share, the registry
//! of streams, the registry of pools by address ([`PoolRegistry`]), the graveyard of
//! destroyed pools, injected faults and the host's observations at synchronization.
//!
//! The registry of streams holds the streams that are alive or still have work. A
//! destroyed stream leaves it when its worker ends (at its destroy, when it never had
//! work to start one); the last [`FINISHED_KEPT`] of those
//! stay, without a worker, until a synchronization of their device observes them, so
//! that "destroy, then synchronize the device" still makes their frees known complete
//! (contract §1, rule 3). A program that destroys more streams between two device
//! synchronizations loses that for the oldest, which is only conservative: their blocks
//! are still released at synchronization once their frees have executed.

use crate::clock::{Clock, HostClock};
use crate::config::Config;
use crate::hostfn::{self, HostFnThread};
use crate::pool::budget::DeviceMemory;
use crate::pool::registry::PoolRegistry;
use crate::pool::shared::{Faults, PoolShared};
use crate::stream::{OnExit, StreamShared, WorkerDelay, lock};
use crate::sync::{Arc, AtomicU64, Mutex, Ordering, PoisonError, Weak};
use mempool_hal::Result;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A stream's clock is pruned ([`Platform::prune`]) when a wait makes it longer than
/// this many entries, or than twice what the last pruning kept.
const PRUNE_MIN: usize = 32;

/// The length past which a clock of `len` entries (just pruned, or new) is pruned next.
/// Debug builds prune at every growth, so that the tests exercise it.
pub(crate) fn prune_at(len: usize) -> usize {
    if cfg!(debug_assertions) { len } else { (2 * len).max(PRUNE_MIN) }
}

/// How many destroyed streams whose worker has ended the registry keeps for the next
/// device synchronization to observe.
pub(crate) const FINISHED_KEPT: usize = 64;

/// The streams of a platform (see the module docs). Ordered by id, so that what is done
/// to every stream (closing them, a destroy's waits) goes in one order: the model check
/// (`tests/loom.rs`) needs every run of a program to take the same steps.
#[derive(Default)]
struct Streams {
    /// Streams alive, or destroyed with a worker still running.
    live: BTreeMap<u64, Arc<StreamShared>>,
    /// Destroyed streams whose worker has ended, with everything they ran, oldest first;
    /// at most [`FINISHED_KEPT`].
    finished: BTreeMap<u64, Arc<StreamShared>>,
    finished_order: VecDeque<u64>,
}

impl Streams {
    fn get(&self, id: u64) -> Option<&Arc<StreamShared>> {
        self.live.get(&id).or_else(|| self.finished.get(&id))
    }

    /// The worker of `s` has ended: it leaves the live streams; if it ran all its work,
    /// it waits for a device synchronization among the finished ones.
    fn worker_ended(&mut self, s: &Arc<StreamShared>) {
        self.live.remove(&s.id);
        if s.is_abandoned() {
            return;
        }
        self.finished.insert(s.id, Arc::clone(s));
        self.finished_order.push_back(s.id);
        while self.finished_order.len() > FINISHED_KEPT {
            if let Some(old) = self.finished_order.pop_front() {
                self.finished.remove(&old);
            }
        }
    }
}

/// Every stream of a platform by id, weakly: what [`Platform::prune`] asks about a stream
/// named in a clock. A stream that is gone stays until the map has doubled since the last
/// sweep, then leaves it (absent means gone: every stream enters when it is created).
#[derive(Default)]
struct AllStreams {
    streams: HashMap<u64, Weak<StreamShared>>,
    swept_at: usize,
}

impl AllStreams {
    fn insert(&mut self, s: &Arc<StreamShared>) {
        self.streams.insert(s.id, Arc::downgrade(s));
    }

    fn forget_gone(&mut self) {
        if self.streams.len() > 2 * self.swept_at.max(PRUNE_MIN) {
            self.streams.retain(|_, w| w.strong_count() > 0);
            self.swept_at = self.streams.len();
        }
    }
}

static NEXT_PLATFORM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

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
    streams: Arc<Mutex<Streams>>,
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
    /// Every stream of the platform by id, weakly, until it is gone ([`Platform::prune`]);
    /// taken alone, or innermost.
    all_streams: Mutex<AllStreams>,
    /// Tests: random delays of the stream workers.
    pub(crate) worker_delay: Option<WorkerDelay>,
    /// What the streams run when a task fails.
    pub(crate) hooks: Arc<crate::stream::Hooks>,
    /// The words of memory that value waits watch (`signal.rs`).
    pub(crate) words: crate::words::Words,
    /// The (device, peer) pairs whose peer access is enabled (`Device::enable_peer_access`).
    pub(crate) peers: Mutex<std::collections::HashSet<(u32, u32)>>,
}

impl Drop for Platform {
    fn drop(&mut self) {
        // Closed outside the registry's lock: closing a stream whose worker never started
        // takes it out of the registry at once.
        let live: Vec<_> = self.streams.lock().unwrap_or_else(PoisonError::into_inner).live.values().cloned().collect();
        for s in live {
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
            streams: Arc::new(Mutex::new(Streams::default())),
            registry: Arc::new(PoolRegistry::new(config.wait_timeout)),
            graveyard: Mutex::new(Vec::new()),
            faults: Arc::new(Faults::default()),
            memory: (0..config.devices).map(|_| Arc::new(DeviceMemory::new(config.device_memory))).collect(),
            host_fn_threads: Mutex::new(HashMap::new()),
            host: Arc::new(HostClock::default()),
            all_streams: Mutex::new(AllStreams::default()),
            worker_delay,
            hooks: Arc::default(),
            words: crate::words::Words::default(),
            peers: Mutex::new(std::collections::HashSet::new()),
        }
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, id: u64) -> Option<Arc<StreamShared>> {
        lock(&self.streams).get(id).cloned()
    }

    /// What a synchronization of `device` drains and observes: its streams, and the
    /// destroyed ones whose worker has ended since the last such synchronization (which
    /// leave the registry now).
    pub(crate) fn streams_to_sync(&self, device: u32) -> Vec<Arc<StreamShared>> {
        let mut r = lock(&self.streams);
        let mut out: Vec<_> = r.live.values().filter(|s| s.device == device).cloned().collect();
        let Streams { finished, finished_order, .. } = &mut *r;
        finished_order.retain(|id| match finished.get(id) {
            Some(s) if s.device == device => {
                out.extend(finished.remove(id));
                false
            }
            _ => true,
        });
        out
    }

    /// Every stream of the platform that is not destroyed, on any device.
    pub(crate) fn live_streams(&self) -> Vec<Arc<StreamShared>> {
        lock(&self.streams).live.values().filter(|s| !s.is_destroyed()).cloned().collect()
    }

    /// How many streams the registry holds (alive, running or kept for observation).
    pub(crate) fn registered_streams(&self) -> usize {
        let r = lock(&self.streams);
        r.live.len() + r.finished.len()
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
        self.observe_streams(clock);
    }

    /// Each registered stream's mark of what the host observed, raised to `clock`.
    fn observe_streams(&self, clock: &Clock) {
        for (sid, pos) in clock.iter() {
            if let Some(s) = self.stream(sid) {
                s.observe(pos);
            }
        }
    }

    /// [`Platform::observe_clock`] for an event's record: its clock and its own point.
    pub(crate) fn observe_record(&self, rec: &crate::event::Record) {
        self.host.observe_with(&rec.clock, rec.point());
        self.observe_streams(&rec.clock);
        rec.stream.observe(rec.pos);
    }

    /// Pools release above their threshold; destroyed pools whose streams have passed the
    /// destroy give their memory back.
    pub(crate) fn after_sync(&self, device: u32) {
        for p in self.registry.pools_of(device) {
            p.release_at_sync();
        }
        self.bury();
    }

    /// Creates a stream of `device` and registers it; it leaves the registry when its
    /// worker ends, or at its destroy when it never started one (module docs).
    pub(crate) fn add_stream(&self, device: u32) -> Result<Arc<StreamShared>> {
        let deferred = self.config.mode == crate::config::ExecutionMode::Deferred;
        let registry = Arc::downgrade(&self.streams);
        let on_exit: OnExit = Box::new(move |s| {
            if let Some(r) = registry.upgrade() {
                lock(&r).worker_ended(s);
            }
        });
        let mut r = lock(&self.streams);
        // Under the registry lock: the stream cannot leave the registry before it is
        // registered (it leaves only once destroyed, and nobody holds it yet).
        let s = StreamShared::create(
            self.next_id(),
            device,
            self.id,
            deferred,
            self.worker_delay,
            Arc::clone(&self.hooks),
            on_exit,
        );
        r.live.insert(s.id, Arc::clone(&s));
        lock(&self.all_streams).insert(&s);
        Ok(s)
    }

    /// Drops from a stream's `clock` the entries that no query can tell from the host's
    /// observations any more, so that clocks do not grow with every stream ever created:
    /// an entry (S, p) goes when S is destroyed, the host has observed S up to p, and
    /// either S itself is gone (no pool holds a block it freed, nothing refers to it) or
    /// its own mark of what the host observed (`host_known`, reuse rule b) has reached p.
    ///
    /// Nothing changes for anyone: the checker asks whether the stream's clock *or the
    /// host's* covers a point, and the host's clock only grows; reuse rule c asks the
    /// stream's clock about blocks freed on S, which exist only while S does, and every
    /// block the pruned entry let rule c take is taken by rule b first (rule b's set is
    /// then not empty, so rule c is never asked). A destroyed stream takes no new
    /// position, and each condition, once true, stays true.
    pub(crate) fn prune(&self, clock: &mut Clock) {
        let observed = self.host.observed_in(clock);
        if observed.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        // The streams still there, dropped after the lock (a last reference may go here).
        let mut there = Vec::new();
        {
            let mut all = lock(&self.all_streams);
            for (sid, pos) in observed {
                match all.streams.get(&sid).and_then(Weak::upgrade) {
                    Some(s) => {
                        if s.is_destroyed() && s.host_known() >= pos {
                            gone.push(sid);
                        }
                        there.push(s);
                    }
                    // Gone (or forgotten once gone).
                    None => gone.push(sid),
                }
            }
            all.forget_gone();
        }
        drop(there);
        if !gone.is_empty() {
            // `gone` is sorted, as the clock is.
            clock.retain(|sid, _| gone.binary_search(&sid).is_err());
        }
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
            .live
            .values()
            .map(|s| (Arc::clone(s), s.state().last_real()))
            .filter(|(s, pos)| s.completed() < *pos)
            .collect();
        if !waits.is_empty() {
            lock(&self.graveyard).push(Grave { _pool: Arc::clone(pool), waits });
        }
    }

    /// Drops the graveyard's pools whose streams have all passed their destroy.
    pub(crate) fn bury(&self) {
        // A stream that dropped its work never passes it; nothing of it can run there.
        lock(&self.graveyard).retain(|g| g.waits.iter().any(|(s, pos)| s.completed() < *pos && !s.is_abandoned()));
    }
}
