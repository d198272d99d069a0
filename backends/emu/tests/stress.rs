//! Concurrency stress of the emulator: many host threads on many streams allocate from
//! pools with every combination of the three reuse flags, give each block a unique
//! signature, hand blocks between streams through events, read each block back and check
//! its signature in a host function before freeing it, and synchronize now and then.
//!
//! The programs are correct stream-ordered code: every access is ordered after the
//! allocation and before the free, across streams through an event. A block always has
//! one *current* stream, ordered after everything done to the block so far; moving it to
//! another stream records an event on the current one and makes the other wait on it.
//!
//! Afterwards: USED is 0, RESERVED is exactly what the release rule leaves cached, the
//! reuse counters match what the allocations reported, no block was ever live twice (the
//! signatures prove it on the device side, a map of live ranges on the host side) and
//! everything finished within a deadline.

#![forbid(unsafe_code)]

use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, ReuseCounts, ReuseRule};
use mempool_hal::{
    Device, DevicePtr, ErrorKind, HostBuffer, MemPool, MemPoolExt, PoolProps, ReuseFlags, attr, round_up,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The whole workload of one test must end within this, or the test fails as a deadlock.
const DEADLINE: Duration = Duration::from_secs(60);

/// The message of the host functions that panic on purpose.
const PANIC_MSG: &str = "deliberate host-function panic";

/// The pool granularity: the smallest the emulator accepts (one host page), so that
/// blocks are small and copies cheap.
fn gran() -> u64 {
    (rustix::param::page_size() as u64).max(4096)
}

type R<T = ()> = std::result::Result<T, String>;

trait Ctx<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> R<T>;
}

impl<T> Ctx<T> for mempool_hal::Result<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> R<T> {
        self.map_err(|e| format!("{}: {e}", what()))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// SplitMix64: deterministic, seedable, good enough for choosing operations.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(mix(seed))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The SplitMix64 finalizer: a bijection, so distinct counters give distinct tags.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How a block's signature is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sig {
    /// One host-to-device copy of the whole block: word `k` is `tag ^ k` in every byte.
    Copied,
    /// A memset of the whole block to a byte of the tag, then the tag copied to the
    /// start of every granule.
    Memset,
}

const BYTES: u64 = 0x0101_0101_0101_0101;

fn fill_byte(tag: u64) -> u8 {
    (tag >> 56) as u8 | 1
}

/// The expected little-endian word `k` of a block with this signature.
fn expected_word(tag: u64, sig: Sig, k: u64, gran: u64) -> u64 {
    match sig {
        Sig::Copied => tag ^ (u64::from(k as u8) * BYTES),
        Sig::Memset if (k * 8) % gran == 0 => tag,
        Sig::Memset => u64::from(fill_byte(tag)) * BYTES,
    }
}

/// Where the first word of `data` differs from the signature, with the word found.
fn first_mismatch(data: &[u8], tag: u64, sig: Sig, gran: u64) -> Option<(u64, u64)> {
    data.chunks_exact(8).enumerate().find_map(|(k, w)| {
        let found = u64::from_le_bytes(w.try_into().expect("an 8-byte chunk"));
        (found != expected_word(tag, sig, k as u64, gran)).then_some((k as u64 * 8, found))
    })
}

/// Operation counters of one worker (summed over workers and rounds).
#[derive(Debug, Default, Clone, Copy)]
struct Ops {
    allocs: u64,
    frees: u64,
    oom: u64,
    oom_skipped: u64,
    h2d: u64,
    memsets: u64,
    d2h: u64,
    host_fns: u64,
    verifies: u64,
    records: u64,
    waits: u64,
    stream_syncs: u64,
    event_syncs: u64,
    device_syncs: u64,
    queries: u64,
    stats_reads: u64,
    attr_sets: u64,
    trims: u64,
    trims_refused: u64,
    panics: u64,
    panics_reported: u64,
    /// Allocations per rule, in [`rule_index`] order.
    rules: [u64; 6],
}

impl Ops {
    fn add(&mut self, o: &Ops) {
        let fields = [
            (&mut self.allocs, o.allocs),
            (&mut self.frees, o.frees),
            (&mut self.oom, o.oom),
            (&mut self.oom_skipped, o.oom_skipped),
            (&mut self.h2d, o.h2d),
            (&mut self.memsets, o.memsets),
            (&mut self.d2h, o.d2h),
            (&mut self.host_fns, o.host_fns),
            (&mut self.verifies, o.verifies),
            (&mut self.records, o.records),
            (&mut self.waits, o.waits),
            (&mut self.stream_syncs, o.stream_syncs),
            (&mut self.event_syncs, o.event_syncs),
            (&mut self.device_syncs, o.device_syncs),
            (&mut self.queries, o.queries),
            (&mut self.stats_reads, o.stats_reads),
            (&mut self.attr_sets, o.attr_sets),
            (&mut self.trims, o.trims),
            (&mut self.trims_refused, o.trims_refused),
            (&mut self.panics, o.panics),
            (&mut self.panics_reported, o.panics_reported),
        ];
        for (mine, theirs) in fields {
            *mine += theirs;
        }
        for (mine, theirs) in self.rules.iter_mut().zip(o.rules) {
            *mine += theirs;
        }
    }

    /// Calls on a pool: allocations (failed ones included), frees, trims, attribute
    /// reads and writes.
    fn pool_ops(&self) -> u64 {
        self.allocs + self.oom + self.frees + self.trims + self.attr_sets + self.stats_reads
    }

    fn total(&self) -> u64 {
        self.pool_ops()
            + self.h2d
            + self.memsets
            + self.d2h
            + self.host_fns
            + self.records
            + self.waits
            + self.stream_syncs
            + self.event_syncs
            + self.device_syncs
            + self.queries
    }
}

impl fmt::Display for Ops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.rules;
        write!(
            f,
            "{} operations, {} on pools: {} allocs ({} out of memory, {} given up), {} frees, {} trims ({} refused), \
             {} attribute writes, {} statistics reads; copies: {} h2d, {} memsets, {} d2h; {} host functions \
             ({} signature checks, {} panics); {} event records, {} waits, {} queries; syncs: {} stream, {} event, \
             {} device; reuse: same stream {}, known complete {}, event dependency {}, opportunistic {}, \
             internal {}, fresh {}",
            self.total(),
            self.pool_ops(),
            self.allocs,
            self.oom,
            self.oom_skipped,
            self.frees,
            self.trims,
            self.trims_refused,
            self.attr_sets,
            self.stats_reads,
            self.h2d,
            self.memsets,
            self.d2h,
            self.host_fns,
            self.verifies,
            self.panics,
            self.records,
            self.waits,
            self.queries,
            self.stream_syncs,
            self.event_syncs,
            self.device_syncs,
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
        )
    }
}

fn rule_index(rule: ReuseRule) -> usize {
    match rule {
        ReuseRule::SameStream => 0,
        ReuseRule::KnownComplete => 1,
        ReuseRule::EventDependency => 2,
        ReuseRule::Opportunistic => 3,
        ReuseRule::InternalDependency => 4,
        ReuseRule::Fresh => 5,
    }
}

fn counts_array(c: ReuseCounts) -> [u64; 6] {
    [c.same_stream, c.known_complete, c.event_dependency, c.opportunistic, c.internal_dependency, c.fresh]
}

/// What every worker and every queued host function of a run shares.
#[derive(Debug)]
struct Shared {
    gran: u64,
    /// Tag counter: each block's tag is `mix` of a fresh value, so tags are unique.
    next_tag: AtomicU64,
    /// Live blocks on the host's side: start -> (length, tag).
    live: Mutex<BTreeMap<u64, (u64, u64)>>,
    /// Signature checks that failed, described.
    mismatches: Mutex<Vec<String>>,
    /// Signature checks that have run.
    verified: AtomicU64,
    /// Set by the first worker that fails, so the others stop early.
    abort: AtomicBool,
}

impl Shared {
    fn new() -> Arc<Shared> {
        Arc::new(Shared {
            gran: gran(),
            next_tag: AtomicU64::new(1),
            live: Mutex::new(BTreeMap::new()),
            mismatches: Mutex::new(Vec::new()),
            verified: AtomicU64::new(0),
            abort: AtomicBool::new(false),
        })
    }

    fn tag(&self) -> u64 {
        mix(self.next_tag.fetch_add(1, Ordering::Relaxed))
    }

    /// Notes a block handed out; an overlap with a live block is a double hand-out.
    fn register(&self, addr: u64, len: u64, tag: u64) -> R {
        let mut live = lock(&self.live);
        if let Some((&a, &(l, t))) = live.range(..addr + len).next_back() {
            if a + l > addr {
                return Err(format!(
                    "block [{addr:#x}, +{len}) (tag {tag:#x}) was handed out while [{a:#x}, +{l}) (tag {t:#x}) is live"
                ));
            }
        }
        live.insert(addr, (len, tag));
        Ok(())
    }

    /// Forgets a block about to be freed (before the free, so that nobody can be handed
    /// the block while it is still listed).
    fn unregister(&self, addr: u64, tag: u64) -> R {
        match lock(&self.live).remove(&addr) {
            Some((_, t)) if t == tag => Ok(()),
            other => Err(format!("live map lost block {addr:#x} (tag {tag:#x}): found {other:?}")),
        }
    }

    /// The host function that checks a block read back into `buf`.
    fn checker(self: &Arc<Shared>, buf: HostBuffer, addr: u64, tag: u64, sig: Sig) -> Box<dyn FnOnce() + Send> {
        let shared = Arc::clone(self);
        Box::new(move || {
            let data = buf.lock();
            if let Some((offset, found)) = first_mismatch(&data, tag, sig, shared.gran) {
                let want = expected_word(tag, sig, offset / 8, shared.gran);
                lock(&shared.mismatches).push(format!(
                    "block {addr:#x} (+{}, tag {tag:#x}, {sig:?}): word at offset {offset} is {found:#018x}, \
                     expected {want:#018x}: another owner wrote it",
                    data.len()
                ));
            }
            shared.verified.fetch_add(1, Ordering::Relaxed);
        })
    }
}

/// One pool of a round, with what the host knows about it.
#[derive(Debug)]
struct PoolSlot {
    pool: EmuPool,
    flags: ReuseFlags,
    /// Bytes of blocks the host holds: raised after each allocation returns, lowered
    /// before each free is called, so it never exceeds USED.
    host_used: AtomicU64,
    host_used_max: AtomicU64,
    /// Allocations per rule, as reported by `malloc_async_traced`.
    rules: Mutex<[u64; 6]>,
}

/// The shape of a stress run.
#[derive(Debug, Clone)]
struct Plan {
    name: &'static str,
    mode: ExecutionMode,
    threads: usize,
    shared_streams: usize,
    /// The flag combinations of the rounds' first pools (bit 0: event dependencies,
    /// bit 1: opportunistic, bit 2: internal); the second pool has the complement.
    rounds: Vec<u8>,
    iterations: usize,
    max_live: usize,
    pool_granules: u64,
    /// Percent of iterations that synchronize something.
    sync_percent: u64,
    device_syncs: bool,
    /// Worker 0 launches a panicking host function on its first stream now and then.
    panics: bool,
    seed: u64,
}

/// A block owned by a worker.
#[derive(Debug, Clone, Copy)]
struct Block {
    ptr: DevicePtr,
    len: u64,
    pool: usize,
    tag: u64,
    sig: Sig,
    /// The stream ordered after everything done to the block so far.
    at: usize,
}

struct Worker<'a> {
    id: usize,
    emu: &'a Emulator,
    plan: &'a Plan,
    pools: &'a [PoolSlot; 2],
    shared: Arc<Shared>,
    /// Own streams first, then the streams shared by every worker.
    streams: Vec<EmuStream>,
    own: usize,
    events: Vec<EmuEvent>,
    next_event: usize,
    /// The last event recorded, with the stream it was recorded on.
    last_event: Option<(usize, usize)>,
    rng: Rng,
    live: Vec<Block>,
    ops: Ops,
    /// The stream whose next synchronization must report a panic.
    panic_pending: Option<usize>,
}

impl Worker<'_> {
    fn err(&self, msg: String) -> String {
        format!("worker {}: {msg}", self.id)
    }

    fn stream_name(&self, i: usize) -> String {
        let kind = if i < self.own { "own" } else { "shared" };
        format!("{kind} stream {}", self.streams[i].id())
    }

    fn pick_stream(&mut self) -> usize {
        if self.streams.len() == self.own || self.rng.chance(70) {
            self.rng.index(self.own)
        } else {
            self.own + self.rng.index(self.streams.len() - self.own)
        }
    }

    fn pick_other(&mut self, not: usize) -> usize {
        let i = self.rng.index(self.streams.len() - 1);
        if i >= not { i + 1 } else { i }
    }

    fn run(mut self) -> R<Ops> {
        for _ in 0..self.plan.iterations {
            if self.shared.abort.load(Ordering::Relaxed) {
                break;
            }
            if let Err(e) = self.step() {
                self.shared.abort.store(true, Ordering::Relaxed);
                return Err(self.err(e));
            }
        }
        let end = self.finish();
        if end.is_err() {
            self.shared.abort.store(true, Ordering::Relaxed);
        }
        end.map_err(|e| self.err(e))?;
        Ok(self.ops)
    }

    fn step(&mut self) -> R {
        if self.plan.panics && self.id == 0 && self.panic_pending.is_none() && self.rng.chance(2) {
            return self.launch_panic();
        }
        if self.rng.chance(self.plan.sync_percent) {
            return self.sync_something();
        }
        match self.rng.below(100) {
            0..=39 if self.live.len() < self.plan.max_live => self.alloc(),
            0..=64 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                self.free(i)
            }
            65..=74 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                let to = self.pick_other(self.live[i].at);
                let mut b = self.live[i];
                self.hand_off(&mut b, to)?;
                self.live[i] = b;
                Ok(())
            }
            75..=84 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                let b = self.live[i];
                self.verify(&b)
            }
            85..=93 => self.link(),
            94..=96 => self.set_threshold(),
            97..=98 => self.trim(),
            _ => self.read_stats(),
        }
    }

    fn alloc(&mut self) -> R {
        let g = self.shared.gran;
        let p = self.rng.index(2);
        let at = self.pick_stream();
        let size = if self.rng.chance(10) { 1 + self.rng.below(8 * g) } else { 1 + self.rng.below(4 * g) };
        let Some((ptr, rule)) = self.try_alloc(p, size, at)? else { return Ok(()) };
        self.ops.allocs += 1;
        self.ops.rules[rule_index(rule)] += 1;
        lock(&self.pools[p].rules)[rule_index(rule)] += 1;
        let slot = &self.pools[p];
        if !rule.allowed_by(slot.flags) {
            return Err(format!("pool with flags {} served an allocation by the {rule} rule", slot.flags));
        }
        let len = round_up(size, g).expect("small sizes round");
        let (base, end) = (slot.pool.base().addr(), slot.pool.base().addr() + slot.pool.size());
        if ptr.addr() % g != 0 || ptr.addr() < base || ptr.addr() + len > end {
            return Err(format!("allocation {ptr} of {len} bytes is not a granule of the pool [{base:#x}, {end:#x})"));
        }
        let tag = self.shared.tag();
        self.shared.register(ptr.addr(), len, tag)?;
        let now = slot.host_used.fetch_add(len, Ordering::SeqCst) + len;
        slot.host_used_max.fetch_max(now, Ordering::SeqCst);
        let sig = if self.rng.chance(50) { Sig::Copied } else { Sig::Memset };
        let b = Block { ptr, len, pool: p, tag, sig, at };
        self.write_signature(&b)?;
        self.live.push(b);
        Ok(())
    }

    /// Allocates, relieving memory pressure on out-of-memory: first by synchronizing
    /// this worker's streams (their cached blocks become known complete), then by the
    /// device (or by freeing one of its own blocks); then it gives up on this one.
    fn try_alloc(&mut self, p: usize, size: u64, at: usize) -> R<Option<(DevicePtr, ReuseRule)>> {
        for attempt in 0..3 {
            match self.pools[p].pool.malloc_async_traced(size, &self.streams[at]) {
                Ok(x) => return Ok(Some(x)),
                Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                    self.ops.oom += 1;
                    let oom = e.oom().ok_or_else(|| format!("out-of-memory error without details: {e}"))?;
                    if oom.stats.reserved_current > self.pools[p].pool.size() {
                        return Err(format!("out-of-memory error with RESERVED above the pool size: {e}"));
                    }
                    match attempt {
                        0 => {
                            for i in 0..self.streams.len() {
                                self.sync_stream(i)?;
                            }
                        }
                        1 if self.plan.device_syncs => self.sync_device()?,
                        1 if !self.live.is_empty() => self.free(0)?,
                        _ => {}
                    }
                }
                Err(e) => return Err(format!("malloc_async({size}) on {}: {e}", self.stream_name(at))),
            }
        }
        self.ops.oom_skipped += 1;
        Ok(None)
    }

    fn write_signature(&mut self, b: &Block) -> R {
        let g = self.shared.gran;
        let s = &self.streams[b.at];
        match b.sig {
            Sig::Copied => {
                let data: Vec<u8> =
                    (0..b.len / 8).flat_map(|k| expected_word(b.tag, b.sig, k, g).to_le_bytes()).collect();
                self.emu.memcpy_h2d_async(b.ptr, &data, s).ctx(|| format!("h2d into {}", b.ptr))?;
                self.ops.h2d += 1;
            }
            Sig::Memset => {
                self.emu.memset_async(b.ptr, fill_byte(b.tag), b.len, s).ctx(|| format!("memset of {}", b.ptr))?;
                self.ops.memsets += 1;
                for k in 0..b.len / g {
                    let at = b.ptr.checked_add(k * g).expect("inside the block");
                    self.emu.memcpy_h2d_async(at, &b.tag.to_le_bytes(), s).ctx(|| format!("h2d into {at}"))?;
                    self.ops.h2d += 1;
                }
            }
        }
        Ok(())
    }

    /// Reads the block back on its current stream and checks it in a host function.
    fn verify(&mut self, b: &Block) -> R {
        let s = &self.streams[b.at];
        let buf = HostBuffer::new(b.len as usize);
        self.emu.memcpy_d2h_async(&buf, b.ptr, s).ctx(|| format!("d2h from {}", b.ptr))?;
        self.ops.d2h += 1;
        let check = self.shared.checker(buf, b.ptr.addr(), b.tag, b.sig);
        self.emu.launch_host_func(s, check).ctx(|| "launch_host_func".into())?;
        self.ops.host_fns += 1;
        self.ops.verifies += 1;
        Ok(())
    }

    fn next_event(&mut self) -> usize {
        self.next_event = (self.next_event + 1) % self.events.len();
        self.next_event
    }

    /// Records an event on `from` and makes `to` wait for it.
    fn order(&mut self, from: usize, to: usize) -> R {
        let e = self.next_event();
        let (ev, src, dst) = (&self.events[e], &self.streams[from], &self.streams[to]);
        self.emu.record_event(ev, src).ctx(|| format!("record_event on {}", self.stream_name(from)))?;
        self.emu.stream_wait_event(dst, ev).ctx(|| format!("stream_wait_event on {}", self.stream_name(to)))?;
        self.ops.records += 1;
        self.ops.waits += 1;
        self.last_event = Some((e, from));
        Ok(())
    }

    /// Moves a block to stream `to`, ordered after everything done to it so far.
    fn hand_off(&mut self, b: &mut Block, to: usize) -> R {
        self.order(b.at, to)?;
        b.at = to;
        Ok(())
    }

    /// An ordering edge between two streams that no block needs (it builds the chains
    /// the event-dependency rule follows).
    fn link(&mut self) -> R {
        let from = self.pick_stream();
        let to = self.pick_other(from);
        self.order(from, to)
    }

    /// Frees `live[i]`: sometimes moves it first, sometimes checks it on another stream
    /// and brings it back; always checks it on the stream that frees it.
    fn free(&mut self, i: usize) -> R {
        let mut b = self.live.swap_remove(i);
        if self.rng.chance(40) {
            let to = self.pick_other(b.at);
            self.hand_off(&mut b, to)?;
        }
        if self.rng.chance(20) {
            let (home, away) = (b.at, self.pick_other(b.at));
            self.hand_off(&mut b, away)?;
            self.verify(&b)?;
            self.hand_off(&mut b, home)?;
        }
        self.verify(&b)?;
        let slot = &self.pools[b.pool];
        self.shared.unregister(b.ptr.addr(), b.tag)?;
        slot.host_used.fetch_sub(b.len, Ordering::SeqCst);
        slot.pool
            .free(b.ptr, &self.streams[b.at])
            .ctx(|| format!("free of {} on {}", b.ptr, self.stream_name(b.at)))?;
        self.ops.frees += 1;
        Ok(())
    }

    fn sync_stream(&mut self, i: usize) -> R {
        let r = self.emu.synchronize_stream(&self.streams[i]);
        self.ops.stream_syncs += 1;
        if self.panic_pending == Some(i) {
            self.panic_pending = None;
            let e = match r {
                Ok(()) => return Err(format!("the sync of {} did not report the panic", self.stream_name(i))),
                Err(e) => e,
            };
            if e.kind() != ErrorKind::AsyncFailure || !e.message().contains(PANIC_MSG) {
                return Err(format!("the sync of {} reported {e}, not the panic", self.stream_name(i)));
            }
            self.ops.panics_reported += 1;
            return Ok(());
        }
        r.ctx(|| format!("synchronize_stream of {}", self.stream_name(i)))
    }

    fn sync_device(&mut self) -> R {
        self.ops.device_syncs += 1;
        self.emu.synchronize_device().ctx(|| "synchronize_device".into())
    }

    fn sync_something(&mut self) -> R {
        match (self.rng.below(10), self.last_event) {
            // A worker with a panic pending leaves events alone until its stream has
            // reported it: the report belongs to that stream's synchronization.
            (4..=5, Some((e, _))) if self.panic_pending.is_none() => {
                self.ops.event_syncs += 1;
                self.emu.synchronize_event(&self.events[e]).ctx(|| "synchronize_event".into())
            }
            (6..=7, Some((e, _))) => {
                self.ops.queries += 1;
                self.emu.query_event(&self.events[e]).ctx(|| "query_event".into()).map(|_| ())
            }
            (8, _) if self.plan.device_syncs => self.sync_device(),
            _ => {
                let i = self.rng.index(self.streams.len());
                self.sync_stream(i)
            }
        }
    }

    fn set_threshold(&mut self) -> R {
        let p = self.rng.index(2);
        let pool = &self.pools[p].pool;
        let granules = pool.size() / self.shared.gran;
        let t = match self.rng.below(4) {
            0 => 0,
            1 => pool.size(),
            _ => self.rng.below(granules + 1) * self.shared.gran,
        };
        self.ops.attr_sets += 1;
        pool.set(attr::ReleaseThreshold, t).ctx(|| format!("set ReleaseThreshold {t}"))
    }

    /// Trims to USED plus a little; USED may rise in between on another thread, and a
    /// trim below USED is refused (Ascend's rule).
    fn trim(&mut self) -> R {
        let p = self.rng.index(2);
        let pool = &self.pools[p].pool;
        let used = pool.get(attr::UsedMemCurrent).ctx(|| "get UsedMemCurrent".into())?;
        let keep = (used + self.rng.below(8) * self.shared.gran).min(pool.size());
        self.ops.stats_reads += 1;
        self.ops.trims += 1;
        match pool.trim_to(keep) {
            Err(e) if e.kind() == ErrorKind::InvalidParam && e.message().contains("below USED") => {
                self.ops.trims_refused += 1;
                Ok(())
            }
            r => r.ctx(|| format!("trim_to({keep})")),
        }
    }

    fn read_stats(&mut self) -> R {
        let pool = &self.pools[self.rng.index(2)].pool;
        let s = pool.stats().ctx(|| "stats".into())?;
        self.ops.stats_reads += 1;
        let size = pool.size();
        if s.used_current > size || s.reserved_current > size || s.used_high > size || s.reserved_high > size {
            return Err(format!("statistics above the pool size {size}: {s:?}"));
        }
        Ok(())
    }

    fn launch_panic(&mut self) -> R {
        self.emu.launch_host_func(&self.streams[0], Box::new(|| panic!("{PANIC_MSG}"))).ctx(|| "launch".into())?;
        self.ops.host_fns += 1;
        self.ops.panics += 1;
        self.panic_pending = Some(0);
        Ok(())
    }

    /// Frees every block left, synchronizes the own streams (a pending panic is
    /// reported there) and destroys them and the events.
    fn finish(&mut self) -> R {
        while !self.live.is_empty() {
            let i = self.live.len() - 1;
            self.free(i)?;
        }
        for i in 0..self.own {
            self.sync_stream(i)?;
        }
        if let Some(i) = self.panic_pending {
            return Err(format!("a panic on {} was never reported", self.stream_name(i)));
        }
        for s in &self.streams[..self.own] {
            self.emu.destroy_stream(s).ctx(|| "destroy_stream".into())?;
        }
        for e in &self.events {
            self.emu.destroy_event(e).ctx(|| "destroy_event".into())?;
        }
        Ok(())
    }
}

/// Runs `f` on a thread of its own and fails if it does not end within `limit`.
fn with_deadline<T: Send + 'static>(what: &str, limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(what.to_string())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("spawn the workload thread");
    match rx.recv_timeout(limit) {
        Ok(v) => {
            handle.join().expect("the workload thread ended after sending");
            v
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {limit:?}: something deadlocked")
        }
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => panic!("{what} ended without a result"),
        },
    }
}

/// One round: two pools (flag combinations `bits` and its complement), the shared
/// streams, every worker; then the checks.
fn round(emu: &Emulator, plan: &Plan, shared: &Arc<Shared>, r: usize) -> R<Ops> {
    let g = shared.gran;
    let bits = plan.rounds[r];
    let size = plan.pool_granules * g;
    let mut slots = Vec::new();
    for (p, bits) in [bits, !bits & 7].into_iter().enumerate() {
        let pool = emu.create_pool(&PoolProps::builder().max_size(size).build()).ctx(|| "create_pool".into())?;
        let flags = ReuseFlags::from_bits(bits);
        flags.apply(&pool).ctx(|| format!("set the reuse flags {flags}"))?;
        // The first pool's threshold climbs from 0 to the pool size over the rounds; the
        // second's falls. Workers change both now and then.
        let step = plan.pool_granules * r as u64 / (plan.rounds.len() as u64 - 1).max(1);
        let t = if p == 0 { step * g } else { size - step * g };
        pool.set(attr::ReleaseThreshold, t).ctx(|| "set threshold".into())?;
        slots.push(PoolSlot {
            pool,
            flags,
            host_used: AtomicU64::new(0),
            host_used_max: AtomicU64::new(0),
            rules: Mutex::new([0; 6]),
        });
    }
    let pools: [PoolSlot; 2] = slots.try_into().expect("two pools");
    let common: Vec<EmuStream> = (0..plan.shared_streams)
        .map(|_| emu.create_stream())
        .collect::<mempool_hal::Result<_>>()
        .ctx(|| "create a shared stream".into())?;
    let verified_before = shared.verified.load(Ordering::SeqCst);

    let results: Vec<R<Ops>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..plan.threads)
            .map(|id| {
                let (pools, common, shared) = (&pools, &common, Arc::clone(shared));
                std::thread::Builder::new()
                    .name(format!("stress-worker-{id}"))
                    .spawn_scoped(sc, move || -> R<Ops> {
                        let own = 2 + id % 2;
                        let mut streams = Vec::new();
                        for _ in 0..own {
                            streams.push(emu.create_stream().ctx(|| "create_stream".into())?);
                        }
                        streams.extend(common.iter().cloned());
                        let events = (0..4)
                            .map(|_| emu.create_event())
                            .collect::<mempool_hal::Result<Vec<_>>>()
                            .ctx(|| "create_event".into())?;
                        let seed = plan.seed ^ ((r as u64) << 32) ^ id as u64;
                        Worker {
                            id,
                            emu,
                            plan,
                            pools,
                            shared,
                            streams,
                            own,
                            events,
                            next_event: 0,
                            last_event: None,
                            rng: Rng::new(seed),
                            live: Vec::new(),
                            ops: Ops::default(),
                            panic_pending: None,
                        }
                        .run()
                    })
                    .expect("spawn a worker")
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut ops = Ops::default();
    let mut errors = Vec::new();
    for res in results {
        match res {
            Ok(o) => ops.add(&o),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(format!("round {r} (flags {bits:03b}): {}", errors.join("; ")));
    }

    // Every worker has freed its blocks: bookkeeping is done at call time.
    let before: Vec<_> = pools
        .iter()
        .map(|s| s.pool.stats())
        .collect::<mempool_hal::Result<_>>()
        .ctx(|| "stats before the final sync".into())?;
    emu.synchronize_device().ctx(|| "final synchronize_device".into())?;
    let mismatches = lock(&shared.mismatches);
    if !mismatches.is_empty() {
        return Err(format!("{} signature mismatches, first: {}", mismatches.len(), mismatches[0]));
    }
    drop(mismatches);
    let verified = shared.verified.load(Ordering::SeqCst) - verified_before;
    if verified != ops.verifies {
        return Err(format!("{} signature checks launched, {verified} ran", ops.verifies));
    }
    if !lock(&shared.live).is_empty() {
        return Err("blocks left in the live map".into());
    }
    let mut reserved_sum = 0;
    for (p, (slot, before)) in pools.iter().zip(&before).enumerate() {
        let pool = &slot.pool;
        let what = format!("round {r}, pool {p} (flags {})", slot.flags);
        let after = pool.stats().ctx(|| "stats".into())?;
        let t = pool.get(attr::ReleaseThreshold).ctx(|| "threshold".into())?;
        if before.used_current != 0 || after.used_current != 0 || pool.live_allocations() != 0 {
            return Err(format!("{what}: USED is not 0 with every block freed: {before:?}, {after:?}"));
        }
        if slot.host_used.load(Ordering::SeqCst) != 0 {
            return Err(format!("{what}: host-side accounting does not balance"));
        }
        if pool.pending_cached_bytes() != 0 {
            return Err(format!("{what}: frees still pending after a device sync"));
        }
        // With USED 0 everything reserved is cached, and every free has run: the sync
        // released down to the threshold (rounded up to a granule), or kept everything.
        let want = before.reserved_current.min(round_up(t, g).expect("small"));
        if after.reserved_current != want {
            return Err(format!(
                "{what}: RESERVED after the device sync is {}, expected min({}, threshold {t}) = {want}",
                after.reserved_current, before.reserved_current
            ));
        }
        reserved_sum += after.reserved_current;
        let host_max = slot.host_used_max.load(Ordering::SeqCst);
        if after.used_high < host_max || after.used_high > after.reserved_high || after.reserved_high > pool.size() {
            return Err(format!("{what}: high marks off (blocks held at once up to {host_max}): {after:?}"));
        }
        let counted = counts_array(pool.reuse_counts());
        let reported = *lock(&slot.rules);
        if counted != reported {
            return Err(format!("{what}: reuse counters {counted:?}, allocations reported {reported:?}"));
        }
        for rule in [ReuseRule::EventDependency, ReuseRule::Opportunistic, ReuseRule::InternalDependency] {
            if !rule.allowed_by(slot.flags) && counted[rule_index(rule)] != 0 {
                return Err(format!("{what}: the {rule} rule served {} allocations", counted[rule_index(rule)]));
            }
        }
    }
    let info = emu.mem_info().ctx(|| "mem_info".into())?;
    if info.total - info.free != reserved_sum {
        return Err(format!("mem_info {info:?} does not match the pools' RESERVED {reserved_sum}"));
    }
    for slot in &pools {
        slot.pool.set(attr::ReleaseThreshold, 0).ctx(|| "threshold 0".into())?;
    }
    emu.synchronize_device().ctx(|| "synchronize_device".into())?;
    for (p, slot) in pools.iter().enumerate() {
        let s = slot.pool.stats().ctx(|| "stats".into())?;
        if s.reserved_current != 0 {
            return Err(format!(
                "round {r}, pool {p}: RESERVED {} after a device sync with threshold 0",
                s.reserved_current
            ));
        }
        emu.destroy_pool(&slot.pool).ctx(|| "destroy_pool".into())?;
    }
    let info = emu.mem_info().ctx(|| "mem_info".into())?;
    if info.free != info.total {
        return Err(format!("device memory not all free at the end of the round: {info:?}"));
    }
    for s in &common {
        emu.destroy_stream(s).ctx(|| "destroy_stream".into())?;
    }
    Ok(ops)
}

/// Runs every round of `plan` under the deadline; returns the summed counters.
fn stress(plan: Plan) -> Ops {
    let name = plan.name;
    let started = Instant::now();
    let outcome = with_deadline(name, DEADLINE, move || -> R<Ops> {
        let g = gran();
        let emu = Emulator::builder()
            .granularity(g)
            .device_memory(4 * plan.pool_granules * g)
            .mode(plan.mode)
            .build()
            .ctx(|| "build the emulator".into())?;
        let shared = Shared::new();
        let mut ops = Ops::default();
        for r in 0..plan.rounds.len() {
            ops.add(&round(&emu, &plan, &shared, r)?);
        }
        Ok(ops)
    });
    let ops = outcome.unwrap_or_else(|e| panic!("{name}: {e}"));
    println!("{name}: {:.2} s, {ops}", started.elapsed().as_secs_f64());
    ops
}

fn all_flag_combinations() -> Vec<u8> {
    (0..8).collect()
}

#[test]
fn threaded_stress_with_every_reuse_flag_combination() {
    let ops = stress(Plan {
        name: "threaded stress",
        mode: ExecutionMode::Threaded,
        threads: 8,
        shared_streams: 3,
        rounds: all_flag_combinations(),
        iterations: 1200,
        max_live: 6,
        pool_granules: 160,
        sync_percent: 3,
        device_syncs: true,
        panics: false,
        seed: 0x5EED_0001,
    });
    assert!(ops.allocs > 10_000 && ops.frees == ops.allocs, "{ops}");
    assert_eq!(ops.panics, 0);
    // Every rule served some allocations over the run (each flag is on in half the pools).
    for (i, n) in ops.rules.iter().enumerate() {
        assert!(*n > 0, "rule {i} never served an allocation: {ops}");
    }
}

#[test]
fn deferred_stress_with_every_reuse_flag_combination() {
    let ops = stress(Plan {
        name: "deferred stress",
        mode: ExecutionMode::Deferred,
        threads: 4,
        shared_streams: 2,
        rounds: all_flag_combinations(),
        iterations: 500,
        max_live: 6,
        pool_granules: 96,
        sync_percent: 8,
        device_syncs: true,
        panics: false,
        seed: 0x5EED_0002,
    });
    assert!(ops.allocs > 2_000 && ops.frees == ops.allocs, "{ops}");
    for rule in [ReuseRule::SameStream, ReuseRule::KnownComplete, ReuseRule::Fresh] {
        assert!(ops.rules[rule_index(rule)] > 0, "the {rule} rule never served an allocation: {ops}");
    }
}

/// Worker 0 launches panicking host functions on its first stream in the middle of the
/// stress. Each is reported by the next synchronization of that stream only (the
/// workers synchronize streams and events, never the whole device here, since a device
/// sync reports every stream's failure); every other call of every worker succeeds, and
/// the stream with the panics keeps running checked work afterwards.
#[test]
fn a_panicking_host_function_mid_stress_breaks_nothing_else() {
    let ops = stress(Plan {
        name: "stress with panics",
        mode: ExecutionMode::Threaded,
        threads: 6,
        shared_streams: 2,
        rounds: vec![0b000, 0b101],
        iterations: 1000,
        max_live: 6,
        pool_granules: 160,
        sync_percent: 4,
        device_syncs: false,
        panics: true,
        seed: 0x5EED_0003,
    });
    assert!(ops.panics > 0, "no panic was launched: {ops}");
    assert_eq!(ops.panics, ops.panics_reported, "{ops}");
    assert_eq!(ops.device_syncs, 0);
}

/// The signature check is able to fail: a block written by a second "owner" is caught,
/// and the live map refuses an overlapping hand-out.
#[test]
fn the_signature_check_catches_a_block_with_two_owners() {
    let g = gran();
    let emu = Emulator::builder().granularity(g).device_memory(64 * g).build().expect("config");
    let s = emu.create_stream().expect("stream");
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * g).build()).expect("pool");
    let shared = Shared::new();
    let (tag, intruder) = (shared.tag(), shared.tag());
    assert_ne!(tag, intruder);
    let mut checked = Vec::new();
    for (sig, overwrite) in [(Sig::Copied, false), (Sig::Memset, false), (Sig::Copied, true), (Sig::Memset, true)] {
        let p = pool.malloc_async(2 * g, &s).expect("alloc");
        let mut data: Vec<u8> = (0..2 * g / 8).flat_map(|k| expected_word(tag, sig, k, g).to_le_bytes()).collect();
        if overwrite {
            // Another owner's tag in the second granule.
            data[g as usize..g as usize + 8].copy_from_slice(&intruder.to_le_bytes());
        }
        emu.memcpy_h2d_async(p, &data, &s).expect("h2d");
        let buf = HostBuffer::new(2 * g as usize);
        emu.memcpy_d2h_async(&buf, p, &s).expect("d2h");
        emu.launch_host_func(&s, shared.checker(buf, p.addr(), tag, sig)).expect("host fn");
        pool.free(p, &s).expect("free");
        emu.synchronize_stream(&s).expect("sync");
        checked.push(lock(&shared.mismatches).len());
    }
    assert_eq!(checked, vec![0, 0, 1, 2], "clean blocks pass, overwritten ones are caught");
    let first = lock(&shared.mismatches)[0].clone();
    assert!(first.contains(&format!("{intruder:#018x}")) && first.contains(&format!("offset {g}")), "{first}");
    assert_eq!(shared.verified.load(Ordering::SeqCst), 4);

    shared.register(0x10_000, 2 * g, tag).expect("first block");
    shared.register(0x10_000 + 2 * g, g, intruder).expect("its neighbour");
    assert!(shared.register(0x10_000 + g, g, 7).is_err(), "an overlap with a live block is refused");
    assert!(shared.register(0x10_000 - g, 2 * g, 7).is_err(), "an overlap from below is refused");
    shared.unregister(0x10_000, tag).expect("forget the first");
    shared.register(0x10_000 + g, g, 7).expect("free again");
}

/// A stream synchronization must observe only what it waited for. Here a wait on stream
/// `s` is enqueued (from another host thread) while `synchronize_stream(s)` is already
/// draining; the sync must not mark the waited-for point of stream `x` complete, since
/// neither that wait nor `x`'s work before it has run.
#[test]
fn a_wait_enqueued_during_a_stream_sync_is_not_observed_by_it() {
    let g = gran();
    let emu = Emulator::builder().granularity(g).device_memory(64 * g).build().expect("config");
    let (s, x, t) = (emu.create_stream().expect("s"), emu.create_stream().expect("x"), emu.create_stream().expect("t"));
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * g).build()).expect("pool");
    let (open_x, x_gate) = mpsc::channel::<()>();
    let (open_s, s_gate) = mpsc::channel::<()>();
    let (s_started, started) = mpsc::channel::<()>();
    // x is busy until `open_x`; a block is freed behind that work and an event recorded.
    emu.launch_host_func(&x, Box::new(move || x_gate.recv().expect("gate"))).expect("x work");
    let p = pool.malloc_async(g, &x).expect("alloc");
    pool.free(p, &x).expect("free");
    let ev = emu.create_event().expect("event");
    emu.record_event(&ev, &x).expect("record");
    // s is busy until `open_s`; another thread synchronizes it meanwhile.
    emu.launch_host_func(
        &s,
        Box::new(move || {
            s_started.send(()).expect("started");
            s_gate.recv().expect("gate");
        }),
    )
    .expect("s work");
    started.recv().expect("s runs");
    let (synced, sync_result) = mpsc::channel();
    {
        let (emu, s) = (emu.clone(), s.clone());
        std::thread::spawn(move || synced.send(emu.synchronize_stream(&s)));
    }
    std::thread::sleep(Duration::from_millis(200)); // the sync is now draining s
    emu.stream_wait_event(&s, &ev).expect("wait");
    open_s.send(()).expect("open s");
    let outcome = sync_result.recv_timeout(Duration::from_secs(20));
    if !matches!(outcome, Ok(Ok(()))) {
        open_x.send(()).expect("open x");
        panic!("the sync of s did not end with Ok once s's own work had run: {outcome:?}");
    }
    // x has not run its work, so its free has not executed: nothing observed it.
    let (q, rule) = pool.malloc_async_traced(g, &t).expect("alloc on t");
    open_x.send(()).expect("open x");
    emu.synchronize_device().expect("device sync");
    assert!(
        q != p && rule == ReuseRule::Fresh,
        "the block freed behind x's unfinished work was handed to t as {rule} ({q} vs {p})"
    );
}
