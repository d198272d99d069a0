//! A small reference model of contract §§1-7, §11 and §12 in deferred execution (no
//! threads).
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
//! - **Synchronous allocations** (`EmuPool::malloc_sync`, as `aclrtMalloc` makes; contract
//!   §1 rule 4): served by the same rules as `malloc_async` on their stream, which then
//!   runs what it has queued; the allocation is ordered before everything enqueued
//!   afterwards, on any stream, and nothing else is observed.
//! - **The checker** (contract §11): an access (an asynchronous copy, memset or kernel on
//!   a stream, or a synchronous copy or memset by the host) must be ordered after the allocation of the memory
//!   it touches, and must not touch freed memory (cached, or freed and released since); a
//!   free must be ordered after its allocation and after every access to the block
//!   enqueued before it, on any stream. Each access is noted on its allocation (the
//!   stream and the position of the queued work) for the free's check.
//! - **Race mode** (contract §11, off unless asked for): an access also must not overlap an
//!   access noted on the allocation by another stream, one of the two a write, unless
//!   that one is ordered before it (through events or what the host observed).
//! - **Devices** (contract §1): every stream, event and pool belongs to one device. An
//!   allocation on a stream of another device than its pool's is refused (107003, as the
//!   emulator answers), and so is a free on such a stream; copies and events across
//!   devices are accepted and ordered like any other. A synchronization releases the pools of its own device only, and
//!   a device synchronization covers the streams of that device only.
//! - **Profiles** (contract §12): `documented` is sections 4-7; on `cann-open` reuse rules
//!   a-e are off, nothing is released at synchronization (trim still releases), and a
//!   destroy does not wait: work queued before it that touches the pool fails when it
//!   runs, and the next synchronization of its stream reports that.
//!
//! Addresses are offsets from the pool's base. Error precedence where the spec names
//! several errors for one call follows the order of the checks in the emulator (the spec
//! does not fix it); every such choice is commented.

use mempool_hal::{AttrId, ErrorKind, EventStatus, OomInfo, PoolStats, Profile, RawAttrValue, ReuseFlags, code};
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

/// The "stream" of a synchronous allocation in `Pool::alloc_at`: everything enqueued
/// after the call is ordered after it (contract §1 rule 4).
const SYNC_OWNER: usize = usize::MAX;

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
/// everything else while it is open; the explicit replays in `model_props/replays.rs` run
/// with every switch off for the fixed ones, and show the departure for the open ones.
/// `Deviations::default()` is the spec.
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
    /// A stream query answering "complete" counts as a synchronization for reuse rule b
    /// (known complete): a block freed on that stream is then reused on another stream.
    /// Contract §4 lists only synchronizations for rule b, and contract §1 says a query
    /// orders later work but rule b counts synchronizations only.
    pub stream_query_counts_for_rule_b: bool,
    /// A device synchronization counts for reuse rule b only for the frees on the device's
    /// own streams, not for frees on streams (of another device) that those streams were
    /// ordered after through events: the host observed them complete too (contract §1,
    /// applied transitively; §4 rule b), and a stream synchronization counts them.
    pub device_sync_rule_b_own_streams_only: bool,
    /// A device synchronization forgets the destroyed streams of every device, but
    /// observes only its own device's; once forgotten, a destroyed stream's frees count for
    /// rule b no further than the host had observed them then: a later observation through
    /// other streams (a synchronization whose stream was ordered after the free) no longer
    /// counts, only a synchronization of an event recorded on that stream itself. By
    /// contract §1 (transitive) and §4 rule b the later observation counts.
    pub forgotten_stream_unobserved: bool,
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
    /// A copy or a memset on the memory of these pools (one or two).
    Access { pools: [Option<usize>; 2] },
}

#[derive(Debug, Clone, Default)]
struct Stream {
    device: u32,
    destroyed: bool,
    /// Destroyed and forgotten by a device synchronization: no later one covers it.
    forgotten: bool,
    /// With `forgotten_stream_unobserved`, once forgotten: how far the host had observed
    /// the stream for rule b then, and how many points `observed` held then (later ones
    /// count only when they lie on this stream itself).
    frozen: Option<(Option<u64>, usize)>,
    /// The first failure of queued work since the last synchronization of the stream.
    failure: Option<Fail>,
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
    device: u32,
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

/// An access noted on an allocation for race mode: the stream and position of its
/// queued work, its range (offsets in the pool) and whether it writes.
#[derive(Debug, Clone, Copy)]
struct Note {
    stream: usize,
    pos: u64,
    off: u64,
    len: u64,
    write: bool,
}

impl Note {
    /// Whether this note makes `other` redundant: same stream, a range that contains
    /// `other`'s, and a write if `other` is one (the emulator's `Access::covers`).
    fn covers(&self, other: &Note) -> bool {
        self.stream == other.stream
            && self.off <= other.off
            && other.off + other.len <= self.off + self.len
            && (self.write || !other.write)
    }
}

#[derive(Debug, Clone)]
struct Pool {
    device: u32,
    destroyed: bool,
    size: u64,
    flags: ReuseFlags,
    threshold: u64,
    stats: PoolStats,
    live: BTreeMap<u64, u64>,
    /// Per live allocation: the allocating stream and the allocation's position there
    /// (`SYNC_OWNER` for a synchronous allocation).
    alloc_at: BTreeMap<u64, (usize, u64)>,
    cached: BTreeMap<u64, Cached>,
    free: BTreeMap<u64, u64>,
    /// Per live allocation: the position of the last access enqueued by each stream.
    accesses: BTreeMap<u64, BTreeMap<usize, u64>>,
    /// Race mode: per live allocation, the accesses noted on it (one that a later access
    /// of the same stream covers is dropped).
    race_notes: BTreeMap<u64, Vec<Note>>,
    /// Per granule: whether it was ever allocated (an access there, once freed, is a use
    /// after free even after a release).
    ever: Vec<bool>,
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
    /// Copies and memsets enqueued.
    pub accesses: u32,
    /// Queued work that failed when it ran (memory of a pool destroyed on `cann-open`).
    pub failed_work: u32,
    /// Accesses refused in race mode as a data race.
    pub race_refusals: u32,
}

/// The whole model: the devices of one platform, their streams, events and pools.
#[derive(Debug, Clone)]
pub struct Model {
    profile: Profile,
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
    /// Race mode of the checker (contract §11, `EmulatorBuilder::race_check`).
    races: bool,
    /// How often the less common paths were taken.
    pub tally: Tally,
}

impl Model {
    /// A platform of `devices` devices of `device_memory` bytes each, pool granularity
    /// `gran` (a power of two), whose pools behave as `profile` says (contract §12).
    pub fn new(gran: u64, devices: u32, device_memory: u64, profile: Profile, dev: Deviations) -> Model {
        assert!(gran.is_power_of_two());
        Model {
            profile,
            gran,
            devices,
            device_memory,
            streams: Vec::new(),
            events: Vec::new(),
            pools: Vec::new(),
            observed: Vec::new(),
            queried: Vec::new(),
            dev,
            races: false,
            tally: Tally::default(),
        }
    }

    /// The same model with the checker's race mode on or off (off by default).
    pub fn with_races(self, races: bool) -> Model {
        Model { races, ..self }
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

    /// Number of devices.
    pub fn devices(&self) -> u32 {
        self.devices
    }

    /// Creates a stream on device 0; returns its index.
    pub fn create_stream(&mut self) -> usize {
        self.create_stream_on(0)
    }

    /// Creates a stream on device `device` (one that exists); returns its index.
    pub fn create_stream_on(&mut self, device: u32) -> usize {
        assert!(device < self.devices);
        self.streams.push(Stream { device, ..Stream::default() });
        self.streams.len() - 1
    }

    /// Creates an event on device 0; returns its index.
    pub fn create_event(&mut self) -> usize {
        self.create_event_on(0)
    }

    /// Creates an event on device `device` (one that exists); returns its index.
    pub fn create_event_on(&mut self, device: u32) -> usize {
        assert!(device < self.devices);
        self.events.push(Event { device, ..Event::default() });
        self.events.len() - 1
    }

    /// Adds a slot for a stream of another platform: every call answers it as a destroyed
    /// stream (107017), and no synchronization of this platform covers it. Returns its
    /// index.
    pub fn foreign_stream(&mut self) -> usize {
        self.streams.push(Stream { destroyed: true, forgotten: true, ..Stream::default() });
        self.streams.len() - 1
    }

    /// Adds a slot for an event of another platform, answered as a destroyed event.
    pub fn foreign_event(&mut self) -> usize {
        self.events.push(Event { destroyed: true, ..Event::default() });
        self.events.len() - 1
    }

    /// The device of stream `s`.
    pub fn stream_device(&self, s: usize) -> u32 {
        self.streams[s].device
    }

    /// The device of event `e`.
    pub fn event_device(&self, e: usize) -> u32 {
        self.events[e].device
    }

    /// Whether stream `s` was destroyed (or is another platform's).
    pub fn stream_destroyed(&self, s: usize) -> bool {
        self.streams[s].destroyed
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
            match work {
                Work::Wait { stream, target } => self.run(stream, target),
                Work::Access { pools } => {
                    // cann-open: a destroy gave the pool's memory back at once, so the
                    // work fails when it runs (the emulator's `with_memory`).
                    let gone = pools.iter().flatten().any(|&p| self.pools[p].destroyed);
                    if gone && !self.profile.destroy_waits() {
                        self.tally.failed_work += 1;
                        self.streams[s].failure.get_or_insert(Fail {
                            kind: ErrorKind::InvalidPointer,
                            code: code::ACL_ERROR_RT_PARAM_INVALID,
                            oom: None,
                        });
                    }
                }
                Work::Host | Work::Stamp => {}
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
        x == SYNC_OWNER || self.observed.iter().chain(&self.queried).any(|&o| self.ordered_before(x, pos, o))
    }

    /// The host saw the end of stream `s` complete (through a query of an event recorded
    /// there that answered complete).
    pub fn observe_end(&mut self, s: usize) {
        let end = self.tail(s);
        self.queried.push(end);
    }

    /// Whether work enqueued now on stream `s` is ordered after position `pos` of stream
    /// `x`: the same stream, through events, or through what the host has observed.
    fn stream_ordered_after(&self, s: usize, x: usize, pos: u64) -> bool {
        x == SYNC_OWNER || x == s || self.ordered_before(x, pos, self.tail(s)) || self.host_ordered(x, pos)
    }

    fn known_complete(&self, c: &Cached) -> bool {
        let (x, pos) = (c.free.stream, c.free.pos);
        if let Some((limit, since)) = self.streams[x].frozen {
            return limit.is_some_and(|l| l >= pos)
                || self.observed[since..].iter().any(|o| o.stream == x && o.pos >= pos);
        }
        self.observed.iter().any(|&o| self.ordered_before(x, pos, o))
    }

    /// The last position of stream `x` ordered before point `to`, if any.
    fn last_before(&self, x: usize, to: Point) -> Option<u64> {
        let mut stack = vec![to];
        let mut seen = HashSet::new();
        let mut last = None;
        while let Some(p) = stack.pop() {
            if !seen.insert(p) {
                continue;
            }
            if p.stream == x {
                last = last.max(Some(p.pos));
            }
            stack.extend(self.streams[p.stream].edges[..p.edges].iter().copied());
        }
        last
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

    /// Whether everything queued on `s` has run (`query_stream`). An answer "complete" is
    /// a host observation of the stream's end, as an event query's is (contract §1): it
    /// orders later calls, releases nothing, and counts for no reuse rule (rule b counts
    /// synchronizations only, contract §4).
    pub fn query_stream(&mut self, s: usize) -> Res<bool> {
        self.live_stream(s)?;
        if !self.streams[s].queue.is_empty() {
            return Ok(false);
        }
        let end = self.tail(s);
        self.queried.push(end);
        if self.dev.stream_query_counts_for_rule_b {
            self.observed.push(end);
        }
        Ok(true)
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

    /// Synchronizes with stream `s`: runs it, marks its end observed, releases the pools
    /// of its device, then reports the first failure of its work since its last
    /// synchronization.
    pub fn synchronize_stream(&mut self, s: usize) -> Res<()> {
        self.live_stream(s)?;
        self.drain(s);
        self.observed.push(self.tail(s));
        self.release_all(self.streams[s].device);
        self.streams[s].failure.take().map_or(Ok(()), Err)
    }

    /// Synchronizes with event `e`: runs what it follows, marks the record observed,
    /// releases the pools of the event's device (also for an event never recorded).
    /// Failures wait for a synchronization of their stream.
    pub fn synchronize_event(&mut self, e: usize) -> Res<()> {
        self.live_event(e)?;
        // The pools released are those of the device of the stream the event was recorded
        // on (the event's own device when it was never recorded), as for a stream
        // synchronization.
        let mut device = self.events[e].device;
        if let Some(r) = self.events[e].record {
            self.run(r.at.stream, r.dep_real);
            self.observed.push(r.at);
            device = self.streams[r.at.stream].device;
        }
        self.release_all(device);
        Ok(())
    }

    /// Synchronizes with device `device`: runs each of its streams (destroyed ones that
    /// no synchronization of the device has covered yet included), marks every end
    /// observed and takes their failures; then forgets the device's destroyed streams (a
    /// later synchronization of the device does not cover them again; with
    /// `forgotten_stream_unobserved`, those of every device), releases the device's pools,
    /// and reports the first failure.
    pub fn synchronize_device(&mut self, device: u32) -> Res<()> {
        let mut first = None;
        for s in 0..self.streams.len() {
            if self.streams[s].device != device || self.streams[s].forgotten {
                continue;
            }
            self.drain(s);
            let end = self.tail(s);
            if self.dev.device_sync_rule_b_own_streams_only {
                // Ordering follows the edges; rule b sees the stream's own frees only.
                self.queried.push(end);
                self.observed.push(Point { edges: 0, ..end });
            } else {
                self.observed.push(end);
            }
            if let Some(f) = self.streams[s].failure.take() {
                first.get_or_insert(f);
            }
        }
        for s in 0..self.streams.len() {
            // A destroyed stream has run its work (`destroy_stream`). Those of other
            // devices wait for a synchronization of their own device (contract §1, §4
            // rule b: it observes them).
            let other_device = self.streams[s].device != device && !self.dev.forgotten_stream_unobserved;
            if !self.streams[s].destroyed || self.streams[s].forgotten || other_device {
                continue;
            }
            if self.dev.forgotten_stream_unobserved {
                let limit = self.observed.iter().filter_map(|&o| self.last_before(s, o)).max();
                self.streams[s].frozen = Some((limit, self.observed.len()));
            }
            self.streams[s].forgotten = true;
        }
        self.release_all(device);
        first.map_or(Ok(()), Err)
    }

    /// Runs everything queued on every stream, without the host observing anything: what
    /// the pair does in threaded mode before a call whose result depends on what has run.
    pub fn settle(&mut self) {
        for s in 0..self.streams.len() {
            self.drain(s);
        }
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
            device: p.device,
            destroyed: false,
            size,
            flags: ReuseFlags::NONE,
            threshold: 0,
            stats: PoolStats::default(),
            live: BTreeMap::new(),
            alloc_at: BTreeMap::new(),
            cached: BTreeMap::new(),
            free,
            accesses: BTreeMap::new(),
            race_notes: BTreeMap::new(),
            ever: vec![false; (size / self.gran) as usize],
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

    /// Memory of device `device` not reserved by a live pool (`aclrtGetMemInfo`'s free).
    pub fn mem_free(&self, device: u32) -> u64 {
        let reserved: u64 =
            self.pools.iter().filter(|p| !p.destroyed && p.device == device).map(|p| p.stats.reserved_current).sum();
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
        self.malloc_on(p, size, s, false)
    }

    /// A synchronous allocation (`EmuPool::malloc_sync`, as `aclrtMalloc` makes): served
    /// like `malloc_async` on stream `s`, by the same rules, but complete when the call
    /// returns: `s` runs what it has queued (a wait rule e inserted included), and the
    /// allocation is ordered before everything enqueued afterwards, on any stream
    /// (contract §1 rule 4), with nothing else observed.
    pub fn malloc_sync(&mut self, p: usize, size: u64, s: usize) -> Res<(u64, Rule)> {
        let r = self.malloc_on(p, size, s, true)?;
        self.drain(s);
        Ok(r)
    }

    fn malloc_on(&mut self, p: usize, size: u64, s: usize, sync: bool) -> Res<(u64, Rule)> {
        // A synchronous allocation has no position any stream must be ordered after.
        let owner = |at: u64| if sync { (SYNC_OWNER, 0) } else { (s, at) };
        // Precedence (not fixed by the spec): stream, its device, size, pool.
        self.live_stream(s)?;
        if self.streams[s].device != self.pools[p].device {
            // The emulator's answer (the C ABI's for a stream of another context).
            return fail(ErrorKind::WrongContext, code::ACL_ERROR_RT_STREAM_CONTEXT);
        }
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
        // cann-open (contract §12): rules a-e are off, every allocation is fresh.
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
            })
            // cann-open (contract §12): rules a-e are off, every allocation is fresh.
            .filter(|_| self.profile.reuses());
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
            self.pools[p].alloc_at.insert(off, owner(at));
            self.mark_allocated(p, off, len);
            let used = self.pools[p].stats.used_current + len;
            self.set_used(p, used);
            return Ok((off, rule));
        }
        let fresh = pool.free.iter().filter(|&(_, &l)| l >= len).min_by_key(|&(&o, &l)| (l, o)).map(|(&o, &l)| (o, l));
        // Contract §2: a fresh reservation draws on the device's memory, shared by its pools.
        let device_free = self.mem_free(pool.device);
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
        pool.alloc_at.insert(off, owner(at));
        pool.free.remove(&off);
        if flen > len {
            pool.free.insert(off + len, flen - len);
        }
        pool.live.insert(off, len);
        self.mark_allocated(p, off, len);
        let pool = &self.pools[p];
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
        // A stream of another device is refused before the pointer is looked at, as a
        // stream of another context is on CANN.
        if self.streams[s].device != self.pools[p].device {
            return fail(ErrorKind::WrongContext, code::ACL_ERROR_RT_STREAM_CONTEXT);
        }
        let Some(&len) = self.pools[p].live.get(&off) else { return bad() };
        // The checker (contract §11): the free is ordered after the allocation.
        let (a, at) = self.pools[p].alloc_at[&off];
        if !self.stream_ordered_after(s, a, at) {
            return fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        // ... and after every access enqueued before it, on any stream, whether or not it
        // has run.
        let accesses = self.pools[p].accesses.get(&off).cloned().unwrap_or_default();
        if accesses.iter().any(|(&x, &pos)| !self.stream_ordered_after(s, x, pos)) {
            return fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID);
        }
        self.pools[p].accesses.remove(&off);
        self.pools[p].race_notes.remove(&off);
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

    fn mark_allocated(&mut self, p: usize, off: u64, len: u64) {
        let g = self.gran;
        for flag in &mut self.pools[p].ever[(off / g) as usize..((off + len) / g) as usize] {
            *flag = true;
        }
    }

    // ----- the checker: copies and memsets ------------------------------------------

    /// The pool of an access's address (the emulator's `resolve`): memory of a live pool,
    /// or of a destroyed one (a stream-order violation); anything else is no device
    /// memory.
    fn resolve(&self, a: Addr) -> Res<(usize, u64)> {
        match a {
            Addr::Pool { pool, offset } if offset < self.pools[pool].size => {
                if self.pools[pool].destroyed {
                    fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID)
                } else {
                    Ok((pool, offset))
                }
            }
            _ => fail(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID),
        }
    }

    /// The checker's verdict on `len` bytes at `off` of pool `p`, touched by work enqueued
    /// now on stream `s` (`None`: by the host, synchronously): the range must lie in one
    /// live allocation (else `InvalidPointer`), ordered after it (else a violation);
    /// freed memory, cached or released since, is a use after free. Returns the
    /// allocation's offset.
    fn check_access(&self, p: usize, off: u64, len: u64, s: Option<usize>) -> Res<u64> {
        let pool = &self.pools[p];
        let violation = || fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID);
        let invalid = || fail(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID);
        if let Some((&o, &l)) = pool.live.range(..=off).next_back() {
            if off < o + l {
                if off.checked_add(len).is_none_or(|end| end > o + l) {
                    return invalid();
                }
                let (a, at) = pool.alloc_at[&o];
                let ordered = match s {
                    Some(s) => self.stream_ordered_after(s, a, at),
                    None => self.host_ordered(a, at),
                };
                return if ordered { Ok(o) } else { violation() };
            }
        }
        if let Some((&o, c)) = pool.cached.range(..=off).next_back() {
            if off < o + c.len {
                return violation();
            }
        }
        if pool.ever[(off / self.gran) as usize] { violation() } else { invalid() }
    }

    /// An asynchronous copy or memset of `len` bytes on stream `s`, touching the device
    /// ranges at `ranges` (the destination first, written; then the source, read):
    /// `memset_async` and `memcpy_h2d_async` (one range, written), `memcpy_d2h_async` (one,
    /// read; use [`Model::access_rw`]) or `memcpy_d2d_async` (two). Precedence (the
    /// emulator's): the stream; a length of 0 does nothing; every address is resolved to
    /// its pool, then every range is checked, in order.
    pub fn access(&mut self, s: usize, ranges: &[Addr], len: u64) -> Res<()> {
        let rw: Vec<_> = ranges.iter().enumerate().map(|(i, &a)| (a, i == 0)).collect();
        self.access_rw(s, &rw, len)
    }

    /// [`Model::access`] with each range saying whether it is written.
    pub fn access_rw(&mut self, s: usize, ranges: &[(Addr, bool)], len: u64) -> Res<()> {
        self.live_stream(s)?;
        if len == 0 {
            return Ok(());
        }
        let ranges: Vec<_> = ranges.iter().map(|&(a, write)| (a, len, write)).collect();
        self.enqueue_access(s, &ranges)
    }

    /// `launch_kernel` on stream `s` declaring the device ranges `ranges` (an address, a
    /// length and whether it is written; at most two, none is a kernel that touches no
    /// device memory): checked as a copy's ranges are, in order, after every address is
    /// resolved to its pool (contract §11). Lengths are not 0.
    pub fn launch_kernel(&mut self, s: usize, ranges: &[(Addr, u64, bool)]) -> Res<()> {
        self.live_stream(s)?;
        self.enqueue_access(s, ranges)
    }

    /// Checks and enqueues work on stream `s` touching `ranges` (at most two): each must
    /// lie in a live allocation the work is ordered after, and in race mode must not race
    /// with an earlier access (`check_races`); each range is checked completely before
    /// the next. The access is noted on its allocation.
    fn enqueue_access(&mut self, s: usize, ranges: &[(Addr, u64, bool)]) -> Res<()> {
        let resolved = ranges.iter().map(|&(a, _, _)| self.resolve(a)).collect::<Res<Vec<_>>>()?;
        let mut starts = Vec::with_capacity(ranges.len());
        for (&(p, off), &(_, len, write)) in resolved.iter().zip(ranges) {
            let start = self.check_access(p, off, len, Some(s))?;
            self.check_races(p, start, off, len, write, Some(s)).inspect_err(|_| self.tally.race_refusals += 1)?;
            starts.push(start);
        }
        let pools = [resolved.first().map(|r| r.0), resolved.get(1).map(|r| r.0)];
        let pos = self.push(s, Work::Access { pools });
        self.tally.accesses += 1;
        for ((&(p, off), &(_, len, write)), start) in resolved.iter().zip(ranges).zip(starts) {
            self.pools[p].accesses.entry(start).or_default().insert(s, pos);
            if self.races {
                let note = Note { stream: s, pos, off, len, write };
                let notes = self.pools[p].race_notes.entry(start).or_default();
                notes.retain(|n| !note.covers(n));
                notes.push(note);
            }
        }
        Ok(())
    }

    /// Race mode (contract §11): an access of `len` bytes at `off` (inside the allocation
    /// at `start` of pool `p`) by stream `s` (`None`: the host) races with an earlier
    /// access noted there by another stream when the two overlap, one of them writes, and
    /// the earlier one is not ordered before this one.
    fn check_races(&self, p: usize, start: u64, off: u64, len: u64, write: bool, s: Option<usize>) -> Res<()> {
        if !self.races {
            return Ok(());
        }
        let notes = self.pools[p].race_notes.get(&start).map_or(&[][..], Vec::as_slice);
        for n in notes {
            let overlaps = n.off < off + len && off < n.off + n.len;
            let ordered = match s {
                Some(s) => self.stream_ordered_after(s, n.stream, n.pos),
                None => self.host_ordered(n.stream, n.pos),
            };
            if Some(n.stream) != s && overlaps && (n.write || write) && !ordered {
                return fail(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID);
            }
        }
        Ok(())
    }

    /// A synchronous copy or memset by the host (`memset_now`, `memcpy_raw`) of `len`
    /// bytes at the device ranges `ranges` (each saying whether it is written): each must
    /// be ordered after its allocation by what the host has observed (contract §11), and
    /// in race mode must not race with an access noted there. Nothing is queued or noted:
    /// the access is complete when the call returns.
    pub fn host_access(&mut self, ranges: &[(Addr, bool)], len: u64) -> Res<()> {
        if len == 0 {
            return Ok(());
        }
        let resolved = ranges.iter().map(|&(a, _)| self.resolve(a)).collect::<Res<Vec<_>>>()?;
        for (&(p, off), &(_, write)) in resolved.iter().zip(ranges) {
            let start = self.check_access(p, off, len, None)?;
            self.check_races(p, start, off, len, write, None).inspect_err(|_| self.tally.race_refusals += 1)?;
        }
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

    /// The release at synchronization of the pools of `device`; none on `cann-open`.
    fn release_all(&mut self, device: u32) {
        if !self.profile.releases_at_sync() {
            return;
        }
        for p in 0..self.pools.len() {
            if !self.pools[p].destroyed && self.pools[p].device == device {
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
