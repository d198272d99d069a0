//! A small reference model of contract §§2-7 in deferred execution (no threads).
//!
//! It is written to be read against the spec, not to be fast:
//!
//! - **Pools** keep three plain maps from offsets to blocks: live allocations, cached
//!   (freed, still reserved) blocks with the point where their free is ordered, and
//!   unreserved address space. Every rule of sections 4-6 is a filter and a minimum over
//!   these maps.
//! - **Streams** hand out positions. Allocations, frees and event records are markers (a
//!   position, nothing queued); host functions and waits are queued work. A marker has
//!   executed once the queued work before it has run. Nothing runs until the host steps,
//!   drains or synchronizes, as in the emulator's deferred mode.
//! - **Ordering** is a happens-before graph, not vector clocks: a wait (or an internal
//!   dependency the pool inserts) adds an edge from a *point* of another stream to the
//!   waiting stream. A point is a stream, a position and how many of that stream's incoming
//!   edges precede it. "The free at (X, p) is ordered before point Q" is a depth-first search
//!   from Q backwards over the edges, looking for a point of X at or after p.
//! - **Host observation** is the list of points the host has synchronized with; a free is
//!   known complete when it is ordered before one of them. Those points, and the points of
//!   event queries that answered complete, order everything called afterwards (contract
//!   §1) for the free's check.
//! - **The free's check** (contract §11): a free must be ordered after its allocation.
//!
//! Addresses are offsets from the pool's base. Error precedence where the spec names
//! several errors for one call follows the order of the checks in the emulator (the spec
//! does not fix it); every such choice is commented.

use mempool_hal::{AttrId, ErrorKind, EventStatus, OomInfo, PoolStats, RawAttrValue, ReuseFlags, code};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// Which rule of contract §4 (`mempool_hal::contract::allocation`) served an allocation (a-f): the emulator's label,
/// reused as a plain name (the model decides the rule on its own).
pub use mempool_emu::ReuseRule as Rule;

/// A refused call: the portable kind, the ACL code, and for out-of-memory the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    /// The portable kind.
    pub kind: ErrorKind,
    /// The ACL code.
    pub code: i32,
    /// For out-of-memory errors: what the pool knew at the failing call.
    pub oom: Option<OomInfo>,
}

/// The model's result type.
pub type Res<T> = Result<T, Fail>;

fn fail<T>(kind: ErrorKind, code: i32) -> Res<T> {
    Err(Fail { kind, code, oom: None })
}

fn bad_handle<T>() -> Res<T> {
    fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INVALID_HANDLE)
}

/// Where the emulator departs from the contract (for `record_is_queued_when_pending`: from the
/// stream model the emulator documents itself, in which records are markers). Each switch
/// reproduces one reported disagreement, so that the random sequences keep checking
/// everything else while it is open; the explicit replays in `model_props/` run with
/// every switch off. `Deviations::default()` is the spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deviations {
    /// An event recorded while real work is pending on its stream takes a queued
    /// operation (to stamp its time) instead of being a marker: `step` counts it, and the
    /// frees after it execute only once it has run.
    pub record_is_queued_when_pending: bool,
    /// A high-water mark follows only increases of its counter: after a reset to 0, a
    /// decrease (a free, a release) leaves it at 0 instead of raising it to the new value.
    pub high_follows_increases_only: bool,
    /// An internal dependency (rule e) orders the allocating stream after the freeing
    /// stream's position only, not after what that free was itself ordered after.
    pub internal_dependency_single_hop: bool,
}

/// A device address as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addr {
    /// The null pointer.
    Null,
    /// `offset` bytes from the base of pool `pool` (possibly past its end).
    Pool {
        /// Index of the pool, in creation order.
        pool: usize,
        /// Bytes from the pool's base.
        offset: u64,
    },
    /// An address no pool has ever covered.
    Unknown,
}

/// The properties of `aclrtMemPoolProps`, as plain numbers (contract §2 (`mempool_hal::contract::properties`)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Props {
    /// Allocation type (only 0 is valid).
    pub alloc_type: i32,
    /// Handle type (0 or 2).
    pub handle_type: i32,
    /// Location id (a device).
    pub device: u32,
    /// Location type (only 1, DEVICE, is valid).
    pub location_type: i32,
    /// Max size in bytes (0 = the whole device).
    pub max_size: u64,
    /// Whether a reserved byte is non-zero.
    pub reserved_dirty: bool,
}

/// A point of a stream: its position there, and how many of the stream's incoming
/// ordering edges precede it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Point {
    stream: usize,
    pos: u64,
    edges: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// A host function (does nothing here).
    Host,
    /// The time stamp of an event record (only with `record_is_queued_when_pending`).
    Stamp,
    /// Wait until `stream` has run its queued work up to position `target`.
    Wait { stream: usize, target: u64 },
}

#[derive(Debug, Clone, Default)]
struct Stream {
    destroyed: bool,
    /// The last position handed out.
    pos: u64,
    /// The position of the last queued operation.
    last_real: u64,
    /// The position of the last queued operation that has run.
    completed: u64,
    queue: VecDeque<(u64, Work)>,
    /// Incoming ordering: the points this stream waited for, in call order.
    edges: Vec<Point>,
}

#[derive(Debug, Clone, Copy)]
struct Record {
    at: Point,
    /// The last queued operation before the record: the record completes with it.
    dep_real: u64,
}

#[derive(Debug, Clone, Default)]
struct Event {
    destroyed: bool,
    record: Option<Record>,
}

#[derive(Debug, Clone, Copy)]
struct Cached {
    len: u64,
    /// Where the free is ordered: the freeing stream, its position, and its incoming edges.
    free: Point,
    /// The last queued operation before the free: the free has executed once it ran.
    dep_real: u64,
}

#[derive(Debug, Clone)]
struct Pool {
    destroyed: bool,
    size: u64,
    flags: ReuseFlags,
    threshold: u64,
    stats: PoolStats,
    live: BTreeMap<u64, u64>,
    /// Per live allocation: the allocating stream and the allocation's position there.
    alloc_at: BTreeMap<u64, (usize, u64)>,
    cached: BTreeMap<u64, Cached>,
    free: BTreeMap<u64, u64>,
}

/// How often the model took the less common paths (to check that random sequences reach
/// them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Frees merged with a cached neighbour freed on the same stream.
    pub merges: u32,
    /// Cached blocks (or low ends of them) released at synchronization or by a trim.
    pub releases: u32,
    /// Releases that split a block, keeping its high end cached.
    pub split_releases: u32,
    /// Waits queued on a stream (by `stream_wait_event` or an internal dependency).
    pub queued_waits: u32,
    /// Queued operations run.
    pub ran: u32,
}

/// The whole model: one device, its streams, events and pools.
#[derive(Debug, Clone)]
pub struct Model {
    gran: u64,
    devices: u32,
    device_memory: u64,
    streams: Vec<Stream>,
    events: Vec<Event>,
    pools: Vec<Pool>,
    /// Points the host has synchronized with.
    observed: Vec<Point>,
    /// Points the host saw complete in a query: they order later calls like `observed`,
    /// but reuse rule b counts synchronizations only.
    queried: Vec<Point>,
    dev: Deviations,
    /// How often the less common paths were taken.
    pub tally: Tally,
}

impl Model {
    /// A platform of `devices` devices of `device_memory` bytes, pool granularity `gran`
    /// (a power of two); the model covers device 0.
    pub fn new(gran: u64, devices: u32, device_memory: u64, dev: Deviations) -> Model {
        assert!(gran.is_power_of_two());
        Model {
            gran,
            devices,
            device_memory,
            streams: Vec::new(),
            events: Vec::new(),
            pools: Vec::new(),
            observed: Vec::new(),
            queried: Vec::new(),
            dev,
            tally: Tally::default(),
        }
    }

    // ----- handles -------------------------------------------------------------------

    /// Number of streams created so far (destroyed ones included).
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// Number of events created so far (destroyed ones included).
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Number of pools created so far (destroyed ones included).
    pub fn pool_count(&self) -> usize {
        self.pools.len()
    }

    /// Creates a stream; returns its index.
    pub fn create_stream(&mut self) -> usize {
        self.streams.push(Stream::default());
        self.streams.len() - 1
    }

    /// Creates an event; returns its index.
    pub fn create_event(&mut self) -> usize {
        self.events.push(Event::default());
        self.events.len() - 1
    }

    /// Adds a slot for a stream of another platform: every call answers it as a destroyed
    /// stream (107017). Returns its index.
    pub fn foreign_stream(&mut self) -> usize {
        self.streams.push(Stream { destroyed: true, ..Stream::default() });
        self.streams.len() - 1
    }

    /// Adds a slot for an event of another platform, answered as a destroyed event.
    pub fn foreign_event(&mut self) -> usize {
        self.events.push(Event { destroyed: true, record: None });
        self.events.len() - 1
    }

    fn live_stream(&self, s: usize) -> Res<()> {
        if self.streams[s].destroyed { bad_handle() } else { Ok(()) }
    }

    fn live_event(&self, e: usize) -> Res<()> {
        if self.events[e].destroyed { bad_handle() } else { Ok(()) }
    }

    /// Destroys a stream: work already enqueued still runs (all of it, here and now,
    /// with whatever it waits for).
    pub fn destroy_stream(&mut self, s: usize) -> Res<()> {
        self.live_stream(s)?;
        self.streams[s].destroyed = true;
        self.drain(s);
        Ok(())
    }

    /// Destroys an event. Waits already enqueued keep the record they saw.
    pub fn destroy_event(&mut self, e: usize) -> Res<()> {
        self.live_event(e)?;
        self.events[e].destroyed = true;
        Ok(())
    }

    // ----- streams and execution -----------------------------------------------------

    fn push(&mut self, s: usize, work: Work) -> u64 {
        if let Work::Wait { .. } = work {
            self.tally.queued_waits += 1;
        }
        let st = &mut self.streams[s];
        st.pos += 1;
        st.last_real = st.pos;
        st.queue.push_back((st.pos, work));
        st.pos
    }

    fn marker(&mut self, s: usize) -> (u64, u64) {
        let st = &mut self.streams[s];
        st.pos += 1;
        (st.pos, st.last_real)
    }

    /// The point at the current end of stream `s`, after every wait enqueued so far.
    fn tail(&self, s: usize) -> Point {
        Point { stream: s, pos: self.streams[s].pos, edges: self.streams[s].edges.len() }
    }

    /// Runs the queued work of `s` up to position `upto`, each wait first running what it
    /// waits for.
    fn run(&mut self, s: usize, upto: u64) {
        while let Some(&(pos, work)) = self.streams[s].queue.front() {
            if pos > upto {
                break;
            }
            self.streams[s].queue.pop_front();
            if let Work::Wait { stream, target } = work {
                self.run(stream, target);
            }
            self.streams[s].completed = pos;
            self.tally.ran += 1;
        }
    }

    fn drain(&mut self, s: usize) {
        let last = self.streams[s].last_real;
        self.run(s, last);
    }

    fn executed(&self, stream: usize, dep_real: u64) -> bool {
        self.streams[stream].completed >= dep_real
    }

    /// Whether the position `pos` of stream `x` is ordered before point `to`: a search
    /// backwards from `to` over the waits that precede it, and theirs, and so on.
    fn ordered_before(&self, x: usize, pos: u64, to: Point) -> bool {
        let mut stack = vec![to];
        let mut seen = HashSet::new();
        while let Some(p) = stack.pop() {
            if p.stream == x && p.pos >= pos {
                return true;
            }
            if !seen.insert(p) {
                continue;
            }
            stack.extend(self.streams[p.stream].edges[..p.edges].iter().copied());
        }
        false
    }

    /// Whether position `pos` of stream `x` is ordered before everything called from now
    /// on through what the host has observed (contract §1).
    fn host_ordered(&self, x: usize, pos: u64) -> bool {
        self.observed.iter().chain(&self.queried).any(|&o| self.ordered_before(x, pos, o))
    }

    /// The host saw the end of stream `s` complete (through a query of an event recorded
    /// there that answered complete).
    pub fn observe_end(&mut self, s: usize) {
        let end = self.tail(s);
        self.queried.push(end);
    }

    fn known_complete(&self, c: &Cached) -> bool {
        self.observed.iter().any(|&o| self.ordered_before(c.free.stream, c.free.pos, o))
    }

    /// Enqueues a host function.
    pub fn launch_host_func(&mut self, s: usize) -> Res<()> {
        self.live_stream(s)?;
        self.push(s, Work::Host);
        Ok(())
    }

    /// Records event `e` at the current end of stream `s`.
    pub fn record_event(&mut self, e: usize, s: usize) -> Res<()> {
        // Event first, then stream: both are 107017, so the order is invisible.
        self.live_event(e)?;
        self.live_stream(s)?;
        let st = &self.streams[s];
        let pending = st.completed < st.last_real;
        let edges = st.edges.len();
        let (pos, dep_real) = if pending && self.dev.record_is_queued_when_pending {
            let pos = self.push(s, Work::Stamp);
            (pos, pos)
        } else {
            self.marker(s)
        };
        self.events[e].record = Some(Record { at: Point { stream: s, pos, edges }, dep_real });
        Ok(())
    }

    /// Makes stream `s` wait for event `e`'s latest record (a no-op if never recorded).
    pub fn stream_wait_event(&mut self, s: usize, e: usize) -> Res<()> {
        self.live_stream(s)?;
        self.live_event(e)?;
        let Some(rec) = self.events[e].record else { return Ok(()) };
        self.streams[s].edges.push(rec.at);
        if rec.at.stream != s && !self.executed(rec.at.stream, rec.dep_real) {
            self.push(s, Work::Wait { stream: rec.at.stream, target: rec.dep_real });
        }
        Ok(())
    }

    /// Whether event `e`'s work has run (a never-recorded event is not ready, as in CANN);
    /// an answer "complete" orders later calls after the record.
    pub fn query_event(&mut self, e: usize) -> Res<EventStatus> {
        self.live_event(e)?;
        Ok(match self.events[e].record {
            Some(r) if self.executed(r.at.stream, r.dep_real) => {
                self.queried.push(r.at);
                EventStatus::Complete
            }
            _ => EventStatus::NotReady,
        })
    }

    /// The errors of `event_elapsed_ms` (the value itself is a time, not modelled).
    pub fn event_elapsed(&self, start: usize, end: usize) -> Res<()> {
        for e in [start, end] {
            self.live_event(e)?;
            // Never recorded: NotReady with CANN's 507000, as for work not complete.
            let Some(r) = self.events[e].record else {
                return fail(ErrorKind::NotReady, code::ACL_ERROR_RT_INTERNAL_ERROR);
            };
            if !self.executed(r.at.stream, r.dep_real) {
                return fail(ErrorKind::NotReady, code::ACL_ERROR_RT_INTERNAL_ERROR);
            }
        }
        Ok(())
    }

    /// Runs the next `n` queued operations of `s` without the host observing them.
    pub fn step(&mut self, s: usize, n: usize) -> Res<usize> {
        self.live_stream(s)?;
        let count = n.min(self.streams[s].queue.len());
        if count > 0 {
            let upto = self.streams[s].queue[count - 1].0;
            self.run(s, upto);
        }
        Ok(count)
    }

    /// Runs everything queued on `s` without the host observing it.
    pub fn run_pending(&mut self, s: usize) -> Res<()> {
        self.live_stream(s)?;
        self.drain(s);
        Ok(())
    }

    /// Whether everything queued on `s` has run.
    pub fn is_idle(&self, s: usize) -> Res<bool> {
        self.live_stream(s)?;
        Ok(self.streams[s].queue.is_empty())
    }

    /// Synchronizes with stream `s`: runs it, marks its end observed, releases.
    pub fn synchronize_stream(&mut self, s: usize) -> Res<()> {
        self.live_stream(s)?;
        self.drain(s);
        self.observed.push(self.tail(s));
        self.release_all();
        Ok(())
    }

    /// Synchronizes with event `e`: runs what it follows, marks the record observed,
    /// releases (also for an event never recorded).
    pub fn synchronize_event(&mut self, e: usize) -> Res<()> {
        self.live_event(e)?;
        if let Some(r) = self.events[e].record {
            self.run(r.at.stream, r.dep_real);
            self.observed.push(r.at);
        }
        self.release_all();
        Ok(())
    }

    /// Synchronizes with the device: runs every stream, marks every end observed,
    /// releases.
    pub fn synchronize_device(&mut self) -> Res<()> {
        for s in 0..self.streams.len() {
            self.drain(s);
            self.observed.push(self.tail(s));
        }
        self.release_all();
        Ok(())
    }

    // ----- pools ---------------------------------------------------------------------

    fn round_up(&self, n: u64) -> Option<u64> {
        n.checked_add(self.gran - 1).map(|v| v / self.gran * self.gran)
    }

    /// Creates a pool (contract §2 (`mempool_hal::contract::properties`)); returns its index.
    pub fn create_pool(&mut self, p: &Props) -> Res<usize> {
        let invalid = || fail(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM);
        if p.alloc_type != 0 || !matches!(p.handle_type, 0 | 2) || p.location_type != 1 || p.reserved_dirty {
            return invalid();
        }
        if p.device >= self.devices {
            return fail(ErrorKind::InvalidDevice, code::ACL_ERROR_RT_INVALID_DEVICEID);
        }
        let too_big = || fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID);
        let size = if p.max_size == 0 {
            self.device_memory / self.gran * self.gran
        } else {
            match self.round_up(p.max_size) {
                Some(s) => s,
                None => return too_big(),
            }
        };
        if size > self.device_memory || size == 0 {
            return too_big();
        }
        let mut free = BTreeMap::new();
        free.insert(0, size);
        self.pools.push(Pool {
            destroyed: false,
            size,
            flags: ReuseFlags::NONE,
            threshold: 0,
            stats: PoolStats::default(),
            live: BTreeMap::new(),
            alloc_at: BTreeMap::new(),
            cached: BTreeMap::new(),
            free,
        });
        Ok(self.pools.len() - 1)
    }

    /// Destroys a pool; its live allocations become unknown addresses.
    pub fn destroy_pool(&mut self, p: usize) -> Res<()> {
        if self.pools[p].destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INTERNAL_ERROR);
        }
        self.pools[p].destroyed = true;
        Ok(())
    }

    /// The pool's size in bytes.
    pub fn pool_size(&self, p: usize) -> u64 {
        self.pools[p].size
    }

    /// Whether pool `p` was destroyed.
    pub fn pool_destroyed(&self, p: usize) -> bool {
        self.pools[p].destroyed
    }

    /// The pool's statistics as read through attributes 5-8.
    pub fn stats(&self, p: usize) -> Res<PoolStats> {
        if self.pools[p].destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        Ok(self.pools[p].stats)
    }

    /// Number of live allocations of pool `p`.
    pub fn live_allocations(&self, p: usize) -> usize {
        self.pools[p].live.len()
    }

    /// Cached bytes of pool `p` whose free has not executed.
    pub fn pending_cached_bytes(&self, p: usize) -> u64 {
        self.pools[p].cached.values().filter(|c| !self.executed(c.free.stream, c.dep_real)).map(|c| c.len).sum()
    }

    /// Device memory not reserved by a live pool (`aclrtGetMemInfo`'s free).
    pub fn mem_free(&self) -> u64 {
        let reserved: u64 = self.pools.iter().filter(|p| !p.destroyed).map(|p| p.stats.reserved_current).sum();
        self.device_memory.saturating_sub(reserved)
    }

    fn set_used(&mut self, p: usize, used: u64) {
        let st = &mut self.pools[p].stats;
        let rose = used > st.used_current;
        st.used_current = used;
        if rose || !self.dev.high_follows_increases_only {
            st.used_high = st.used_high.max(used);
        }
    }

    fn set_reserved(&mut self, p: usize, reserved: u64) {
        let st = &mut self.pools[p].stats;
        let rose = reserved > st.reserved_current;
        st.reserved_current = reserved;
        if rose || !self.dev.high_follows_increases_only {
            st.reserved_high = st.reserved_high.max(reserved);
        }
    }

    /// `malloc_async(size, stream)` (contract §4 (`mempool_hal::contract::allocation`)): the offset and the rule.
    pub fn malloc(&mut self, p: usize, size: u64, s: usize) -> Res<(u64, Rule)> {
        // Precedence (not fixed by the spec): stream, size, pool.
        self.live_stream(s)?;
        if size == 0 {
            return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        let Some(len) = self.round_up(size) else {
            return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID);
        };
        if self.pools[p].destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INTERNAL_ERROR);
        }
        let here = self.tail(s);
        let pool = &self.pools[p];
        let best = |pred: &dyn Fn(&Cached) -> bool| -> Option<u64> {
            pool.cached
                .iter()
                .filter(|(_, c)| c.len >= len && pred(c))
                .min_by_key(|&(&o, c)| (c.len, o))
                .map(|(&o, _)| o)
        };
        let other = |c: &Cached| c.free.stream != s;
        let choice = best(&|c| c.free.stream == s)
            .map(|o| (o, Rule::SameStream))
            .or_else(|| best(&|c| other(c) && self.known_complete(c)).map(|o| (o, Rule::KnownComplete)))
            .or_else(|| {
                pool.flags
                    .follow_event_dependencies
                    .then(|| best(&|c| other(c) && self.ordered_before(c.free.stream, c.free.pos, here)))
                    .flatten()
                    .map(|o| (o, Rule::EventDependency))
            })
            .or_else(|| {
                pool.flags
                    .opportunistic
                    .then(|| best(&|c| other(c) && self.executed(c.free.stream, c.dep_real)))
                    .flatten()
                    .map(|o| (o, Rule::Opportunistic))
            })
            .or_else(|| {
                pool.flags.internal_dependencies.then(|| best(&other)).flatten().map(|o| (o, Rule::InternalDependency))
            });
        if let Some((off, rule)) = choice {
            let c = self.pools[p].cached.remove(&off).expect("chosen block is cached");
            if c.len > len {
                self.pools[p].cached.insert(off + len, Cached { len: c.len - len, ..c });
            }
            if rule == Rule::InternalDependency {
                // As if the caller had recorded an event right after the free and waited
                // on it: ordered after the free and after everything the free follows.
                let edges = if self.dev.internal_dependency_single_hop { 0 } else { c.free.edges };
                self.streams[s].edges.push(Point { edges, ..c.free });
                if !self.executed(c.free.stream, c.dep_real) {
                    self.push(s, Work::Wait { stream: c.free.stream, target: c.dep_real });
                }
            }
            let (at, _) = self.marker(s);
            self.pools[p].live.insert(off, len);
            self.pools[p].alloc_at.insert(off, (s, at));
            let used = self.pools[p].stats.used_current + len;
            self.set_used(p, used);
            return Ok((off, rule));
        }
        let fresh = pool.free.iter().filter(|&(_, &l)| l >= len).min_by_key(|&(&o, &l)| (l, o)).map(|(&o, &l)| (o, l));
        // Contract §2: a fresh reservation draws on the device's memory, shared by its pools.
        let device_free = self.mem_free();
        let device_full = fresh.is_some() && device_free < len;
        let (Some((off, flen)), false) = (fresh, device_full) else {
            let info = OomInfo {
                requested: len,
                stats: pool.stats,
                pool_size: pool.size,
                largest_free_range: pool.free.values().copied().max().unwrap_or(0),
                largest_cached_block: pool.cached.values().map(|c| c.len).max().unwrap_or(0),
                device_free: device_full.then_some(device_free),
            };
            return Err(Fail {
                kind: ErrorKind::OutOfMemory,
                code: code::ACL_ERROR_RT_INTERNAL_ERROR,
                oom: Some(info),
            });
        };
        let (at, _) = self.marker(s);
        let pool = &mut self.pools[p];
        pool.alloc_at.insert(off, (s, at));
        pool.free.remove(&off);
        if flen > len {
            pool.free.insert(off + len, flen - len);
        }
        pool.live.insert(off, len);
        let (reserved, used) = (pool.stats.reserved_current + len, pool.stats.used_current + len);
        self.set_reserved(p, reserved);
        self.set_used(p, used);
        Ok((off, Rule::Fresh))
    }

    /// `free_async(ptr, stream)` (contract §5 (`mempool_hal::contract::free`)).
    pub fn free(&mut self, addr: Addr, s: usize) -> Res<()> {
        self.live_stream(s)?;
        let bad = || fail(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID);
        let (p, off) = match addr {
            Addr::Null => return fail(ErrorKind::InvalidPointer, code::ACL_ERROR_INVALID_PARAM),
            Addr::Unknown => return bad(),
            Addr::Pool { pool, offset } => (pool, offset),
        };
        // A destroyed pool's addresses, and addresses past a pool's end, are unknown.
        if self.pools[p].destroyed || off >= self.pools[p].size {
            return bad();
        }
        let Some(&len) = self.pools[p].live.get(&off) else { return bad() };
        // The checker (contract §11): the free is ordered after the allocation.
        let (a, at) = self.pools[p].alloc_at[&off];
        if a != s && !self.ordered_before(a, at, self.tail(s)) && !self.host_ordered(a, at) {
            return fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        let (pos, dep_real) = self.marker(s);
        let edges = self.streams[s].edges.len();
        let pool = &mut self.pools[p];
        pool.live.remove(&off);
        pool.alloc_at.remove(&off);
        let mut block = Cached { len, free: Point { stream: s, pos, edges }, dep_real };
        let mut start = off;
        // Merge with cached neighbours freed on the same stream; the merged block carries
        // the later free (a later position of one stream also has at least its edges).
        let later =
            |a: &Cached, b: &Cached| if a.free.pos >= b.free.pos { (a.free, a.dep_real) } else { (b.free, b.dep_real) };
        if let Some((&po, pc)) = pool.cached.range(..off).next_back() {
            if po + pc.len == off && pc.free.stream == s {
                let pc = pool.cached.remove(&po).expect("neighbour");
                (block.free, block.dep_real) = later(&block, &pc);
                block.len += pc.len;
                start = po;
                self.tally.merges += 1;
            }
        }
        if let Some(nc) = pool.cached.get(&(start + block.len)).copied() {
            if nc.free.stream == s {
                pool.cached.remove(&(start + block.len));
                (block.free, block.dep_real) = later(&block, &nc);
                block.len += nc.len;
                self.tally.merges += 1;
            }
        }
        pool.cached.insert(start, block);
        let used = pool.stats.used_current - len;
        self.set_used(p, used);
        Ok(())
    }

    /// Releases executed cached blocks of pool `p`, smallest first (then lowest offset),
    /// the last one split at the granularity (its low end released), until RESERVED is
    /// down to `target` or nothing executed is left.
    fn release(&mut self, p: usize, target: u64) {
        let reserved = self.pools[p].stats.reserved_current;
        if reserved <= target {
            return;
        }
        let mut excess = (reserved - target) / self.gran * self.gran;
        let mut cands: Vec<(u64, u64)> = self.pools[p]
            .cached
            .iter()
            .filter(|(_, c)| self.executed(c.free.stream, c.dep_real))
            .map(|(&o, c)| (c.len, o))
            .collect();
        cands.sort_unstable();
        let mut released = 0;
        for (len, off) in cands {
            if excess == 0 {
                break;
            }
            let take = len.min(excess);
            excess -= take;
            released += take;
            let pool = &mut self.pools[p];
            let c = pool.cached.remove(&off).expect("candidate is cached");
            if len > take {
                pool.cached.insert(off + take, Cached { len: len - take, ..c });
                self.tally.split_releases += 1;
            }
            self.tally.releases += 1;
            // Back to the free address space, merged with free neighbours.
            let (mut start, mut flen) = (off, take);
            if let Some((&fo, &fl)) = pool.free.range(..off).next_back() {
                if fo + fl == off {
                    pool.free.remove(&fo);
                    start = fo;
                    flen += fl;
                }
            }
            if let Some(nl) = pool.free.remove(&(start + flen)) {
                flen += nl;
            }
            pool.free.insert(start, flen);
        }
        if released > 0 {
            self.set_reserved(p, reserved - released);
        }
    }

    fn release_all(&mut self) {
        for p in 0..self.pools.len() {
            if !self.pools[p].destroyed {
                let target = self.pools[p].threshold.max(self.pools[p].stats.used_current);
                self.release(p, target);
            }
        }
    }

    /// `trim_to(min_bytes_to_keep)` (contract §6 (`mempool_hal::contract::release`)).
    pub fn trim_to(&mut self, p: usize, keep: u64) -> Res<()> {
        let pool = &self.pools[p];
        if pool.destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INTERNAL_ERROR);
        }
        if keep > pool.size || keep < pool.stats.used_current {
            return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_INTERNAL_ERROR);
        }
        if keep >= pool.stats.reserved_current {
            return Ok(());
        }
        self.release(p, keep);
        Ok(())
    }

    /// Reads attribute `id` through the raw path (contract §3 (`mempool_hal::contract::attributes`)).
    pub fn get_attr(&self, p: usize, id: u32) -> Res<RawAttrValue> {
        // Precedence (not fixed by the spec): the id, then the pool.
        if !(1..=8).contains(&id) {
            return fail(ErrorKind::UnknownAttribute, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        let pool = &self.pools[p];
        if pool.destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        let s = pool.stats;
        Ok(match id {
            1..=3 => RawAttrValue::U32(u32::from(pool.flags.get(AttrId(id)).expect("a reuse flag"))),
            4 => RawAttrValue::U64(pool.threshold),
            5 => RawAttrValue::U64(s.reserved_current),
            6 => RawAttrValue::U64(s.reserved_high),
            7 => RawAttrValue::U64(s.used_current),
            _ => RawAttrValue::U64(s.used_high),
        })
    }

    /// Writes attribute `id` through the raw path (contract §3 (`mempool_hal::contract::attributes`)).
    pub fn set_attr(&mut self, p: usize, id: u32, value: RawAttrValue) -> Res<()> {
        // Precedence (not fixed by the spec): the id, the value's C width, the access
        // rule and the value, then the pool.
        if !(1..=8).contains(&id) {
            return fail(ErrorKind::UnknownAttribute, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        let v = match (id, value) {
            (1..=3, RawAttrValue::U32(v)) => u64::from(v),
            (4..=8, RawAttrValue::U64(v)) => v,
            _ => return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID),
        };
        match id {
            5 | 7 => return fail(ErrorKind::ReadOnly, code::ACL_ERROR_RT_PARAM_INVALID),
            6 | 8 if v != 0 => return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_INTERNAL_ERROR),
            4 if v > self.pools[p].size => return fail(ErrorKind::InvalidParam, code::ACL_ERROR_RT_INTERNAL_ERROR),
            _ => {}
        }
        let pool = &mut self.pools[p];
        if pool.destroyed {
            return fail(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        match id {
            1..=3 => {
                pool.flags.set(AttrId(id), v != 0);
            }
            4 => pool.threshold = v,
            6 => pool.stats.reserved_high = 0,
            _ => pool.stats.used_high = 0,
        }
        Ok(())
    }
}
