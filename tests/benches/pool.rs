//! The emulator's pool and streams against baselines, in one run (`cargo xtask bench`
//! runs this and writes `target/bench-report.md`).
//!
//! - `same_stream_pair`: `malloc_async` + `free_async` on one stream, served by
//!   same-stream reuse, against `offset-allocator` (the same bookkeeping at the pool's
//!   granularity) and `std::alloc` at the same sizes.
//! - `small_blocks_pair`: the same pair through the small-block layer (`mempool-small`,
//!   threshold 64 MiB) at sizes it carves, against the pool's own pair and
//!   `offset-allocator`'s at 512-byte units, in the same run.
//! - `live_100k`: one free and one allocation of random sizes with 100,000 blocks live;
//!   besides criterion's estimate, a timed loop reports the median and p99 per operation.
//!   `offset-allocator+map` is `offset-allocator` behind a pointer API: its free names an
//!   address, found in a hash map, as a runtime's free (the pool's) names one.
//!   The `-1k-live` cases run the same pairs with 1,000 blocks live, where both
//!   structures stay in the caches: their ratio is the work per pair alone.
//! - `cross_stream`: an allocation on one stream of memory freed on another, per reuse rule.
//! - `stream_ops`: host-function launches, event record + wait, synchronization.
//! - `copy_contention`: `malloc_async` + `free_async` on a pool while 256 MiB copies into
//!   the same pool run back to back on another thread, against the same pair with no copy
//!   running.
//! - `streams_scaling`: malloc + free + record + wait, round-robin over 4 to 2,048 live
//!   streams (each waits for the previous one's event), and the same operation on two
//!   long-lived streams after 100 to 10,000 streams were created and destroyed (each a
//!   request: create, allocate, hand off through events, destroy, synchronize the main
//!   stream); a timed loop also reports the cost of such a request after that many.
//! - `two_threads`: `malloc_async` + `free_async` pairs on one pool, one thread against two
//!   threads each on a stream of its own: time per pair, so the ratio is the throughput
//!   one thread gets over what two get together.

#[path = "common/floors.rs"]
mod floors;
#[path = "common/setup.rs"]
mod setup;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mempool_emu::{CopySide, EmuEvent, EmuPool, EmuStream, Emulator, ReuseRule};
use mempool_hal::{Device, MemPool, MemPoolExt, attr};
use mempool_small::SmallBlocks;
use mempool_tests::write_percentiles;
use setup::{emulator, pool, ring, scaling_op};
use std::alloc::{Layout, alloc, dealloc};
use std::hint::black_box;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const LIVE: usize = 100_000;

/// A small xorshift generator: the same sequence for every implementation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Whether the command line's filter (criterion's regular expression, if any) selects one
/// of `ids`: the timed loops and checks outside criterion's benchmark functions honour it.
fn selected(ids: &[&str]) -> bool {
    // Criterion's options that take a value.
    const WITH_VALUE: &[&str] = &[
        "--profile-time",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--measurement-time",
        "--warm-up-time",
        "--sample-size",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--output-format",
        "--plotting-backend",
        "--color",
        "--format",
        "--logfile",
    ];
    let mut args = std::env::args().skip(1);
    let mut filter = None;
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            filter = Some(a);
        }
    }
    let Some(f) = filter else { return true };
    match regex::Regex::new(&f) {
        Ok(re) => ids.iter().any(|id| re.is_match(id)),
        Err(_) => ids.iter().any(|id| id.contains(f.as_str())),
    }
}

fn same_stream_pair(c: &mut Criterion) {
    let mut g = c.benchmark_group("same_stream_pair");
    let gran = 2 * MIB;
    for mib in [2u64, 8, 64] {
        let size = mib * MIB;
        let case = format!("{mib}MiB");
        let emu = emulator(gran, 4 << 30);
        let s = emu.create_stream().expect("stream");
        let p = pool(&emu, 1 << 30);
        // The first allocation is fresh; every later one reuses it on the same stream.
        let first = p.malloc_async(size, &s).expect("malloc");
        p.free(first, &s).expect("free");
        g.bench_function(BenchmarkId::new("emu", &case), |b| {
            b.iter(|| {
                let (d, rule) = p.malloc_async_traced(black_box(size), &s).expect("malloc");
                debug_assert_eq!(rule, ReuseRule::SameStream);
                p.free(d, &s).expect("free");
            })
        });
        let mut oa: offset_allocator::Allocator = offset_allocator::Allocator::new(((1u64 << 30) / gran) as u32);
        let units = (size / gran) as u32;
        g.bench_function(BenchmarkId::new("offset-allocator", &case), |b| {
            b.iter(|| {
                let a = oa.allocate(black_box(units)).expect("offset-allocator has room");
                oa.free(black_box(a));
            })
        });
        let layout = Layout::from_size_align(size as usize, 4096).expect("layout");
        g.bench_function(BenchmarkId::new("std-alloc", &case), |b| {
            b.iter(|| {
                // SAFETY: the layout has a non-zero size; the block is freed with the same layout.
                unsafe {
                    let m = black_box(alloc(black_box(layout)));
                    assert!(!m.is_null());
                    dealloc(m, layout);
                }
            })
        });
    }
    g.finish();
}

fn small_blocks_pair(c: &mut Criterion) {
    let mut g = c.benchmark_group("small_blocks_pair");
    let emu = emulator(2 * MIB, 4 << 30);
    let s = emu.create_stream().expect("stream");
    let p = pool(&emu, 1 << 30);
    let layer = SmallBlocks::new(&emu, &p, 64 * MIB).expect("layer");
    // Cases are named in bytes, so that the report sorts them by size.
    for size in [256u64, 64 << 10, MIB, 9 * MIB] {
        let case = format!("{size}B");
        // A live neighbour keeps the block in use, as in a running program.
        let keep = layer.malloc_async(size, &s).expect("malloc");
        g.bench_function(BenchmarkId::new("small-blocks", &case), |b| {
            b.iter(|| {
                let d = layer.malloc_async(black_box(size), &s).expect("malloc");
                // SAFETY: `d` is a live allocation of the layer with no work enqueued on it.
                unsafe { layer.free_async(d, &s).expect("free") };
            })
        });
        // SAFETY: as above.
        unsafe { layer.free_async(keep, &s).expect("free") };
        let first = p.malloc_async(size, &s).expect("malloc");
        p.free(first, &s).expect("free");
        g.bench_function(BenchmarkId::new("emu", &case), |b| {
            b.iter(|| {
                let d = p.malloc_async(black_box(size), &s).expect("malloc");
                p.free(d, &s).expect("free");
            })
        });
        let mut oa: offset_allocator::Allocator = offset_allocator::Allocator::new(((1u64 << 30) / 512) as u32);
        let units = size.div_ceil(512) as u32;
        g.bench_function(BenchmarkId::new("offset-allocator", &case), |b| {
            b.iter(|| {
                let a = oa.allocate(black_box(units)).expect("offset-allocator has room");
                oa.free(black_box(a));
            })
        });
    }
    g.finish();
    drop(layer);
    emu.synchronize_stream(&s).expect("sync");
}

/// One implementation of the `live_100k` workload: sizes in pages.
trait Live {
    fn alloc(&mut self, pages: u64) -> u64;
    fn free(&mut self, handle: u64);
}

struct EmuLive {
    pool: EmuPool,
    stream: EmuStream,
    page: u64,
    _emu: Emulator,
}

impl Live for EmuLive {
    fn alloc(&mut self, pages: u64) -> u64 {
        self.pool.malloc_async(pages * self.page, &self.stream).expect("malloc").addr()
    }
    fn free(&mut self, handle: u64) {
        self.pool.free(mempool_hal::DevicePtr::from_addr(handle), &self.stream).expect("free");
    }
}

struct OffsetLive {
    a: offset_allocator::Allocator,
    slots: Vec<Option<offset_allocator::Allocation>>,
    spare: Vec<u64>,
}

impl Live for OffsetLive {
    fn alloc(&mut self, pages: u64) -> u64 {
        let a = self.a.allocate(pages as u32).expect("offset-allocator has room");
        let slot = self.spare.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() as u64 - 1
        });
        self.slots[slot as usize] = Some(a);
        slot
    }
    fn free(&mut self, handle: u64) {
        let a = self.slots[handle as usize].take().expect("live slot");
        self.a.free(a);
        self.spare.push(handle);
    }
}

/// `offset-allocator` behind a pointer API, as a framework's allocator would wrap it for
/// a runtime whose free names an address (as the pool's does): the free finds the
/// allocation in a map by address.
struct OffsetMapLive {
    a: offset_allocator::Allocator,
    page: u64,
    by_addr: rustc_hash::FxHashMap<u64, offset_allocator::Allocation>,
}

impl Live for OffsetMapLive {
    fn alloc(&mut self, pages: u64) -> u64 {
        let a = self.a.allocate(pages as u32).expect("offset-allocator has room");
        let addr = u64::from(a.offset) * self.page;
        self.by_addr.insert(addr, a);
        addr
    }
    fn free(&mut self, addr: u64) {
        let a = self.by_addr.remove(&addr).expect("live address");
        self.a.free(a);
    }
}

struct StdLive {
    page: u64,
    sizes: std::collections::HashMap<u64, u64>,
}

impl Live for StdLive {
    fn alloc(&mut self, pages: u64) -> u64 {
        let layout = Layout::from_size_align((pages * self.page) as usize, 4096).expect("layout");
        // SAFETY: non-zero size.
        let p = unsafe { alloc(layout) };
        assert!(!p.is_null());
        self.sizes.insert(p as u64, pages);
        p as u64
    }
    fn free(&mut self, handle: u64) {
        let pages = self.sizes.remove(&handle).expect("live block");
        let layout = Layout::from_size_align((pages * self.page) as usize, 4096).expect("layout");
        // SAFETY: `handle` came from `alloc` with this layout and is freed once.
        unsafe { dealloc(handle as *mut u8, layout) };
    }
}

/// The workload's state: the implementation, its live handles and the generator.
struct LiveState<L> {
    imp: L,
    live: Vec<u64>,
    rng: Rng,
}

impl<L: Live> LiveState<L> {
    fn new(imp: L) -> Self {
        Self::with_live(imp, LIVE)
    }

    /// The workload with `n` blocks live (the pairs keep the count).
    fn with_live(mut imp: L, n: usize) -> Self {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let live = (0..n).map(|_| imp.alloc(1 + rng.next() % 16)).collect();
        LiveState { imp, live, rng }
    }

    /// One random operation, keeping the live count near 100,000.
    fn op(&mut self) {
        let r = self.rng.next();
        let n = self.live.len();
        let free = if n >= LIVE + 1000 {
            true
        } else if n <= LIVE - 1000 {
            false
        } else {
            r & 1 == 0
        };
        if free {
            let h = self.live.swap_remove((r >> 8) as usize % n);
            self.imp.free(h);
        } else {
            let h = self.imp.alloc(1 + (r >> 8) % 16);
            self.live.push(h);
        }
    }

    /// A free of a random block and an allocation of a random size.
    fn pair(&mut self) {
        let r = self.rng.next();
        let h = self.live.swap_remove((r >> 8) as usize % self.live.len());
        self.imp.free(h);
        let h = self.imp.alloc(1 + (r >> 40) % 16);
        self.live.push(h);
    }
}

fn live_100k(c: &mut Criterion) {
    let ids = [
        "live_100k/emu/free+alloc",
        "live_100k/offset-allocator/free+alloc",
        "live_100k/offset-allocator+map/free+alloc",
        "live_100k/std-alloc/free+alloc",
        "live_100k/emu/free+alloc-1k-live",
        "live_100k/offset-allocator/free+alloc-1k-live",
    ];
    if !selected(&ids) {
        return;
    }
    let page = rustix::param::page_size() as u64;
    let size = 64 << 30;
    let emu_imp = || {
        let emu = emulator(page, size);
        let stream = emu.create_stream().expect("stream");
        let pool = pool(&emu, size);
        EmuLive { pool, stream, page, _emu: emu }
    };
    // `offset-allocator` over the same range, in pages.
    let offset_alloc = || offset_allocator::Allocator::with_max_allocs((size / page) as u32, 1 << 20);
    let offset_imp = || OffsetLive { a: offset_alloc(), slots: Vec::new(), spare: Vec::new() };
    let emu_state = || LiveState::new(emu_imp());
    let offset_state = || LiveState::new(offset_imp());
    let offset_map_state =
        || LiveState::new(OffsetMapLive { a: offset_alloc(), page, by_addr: rustc_hash::FxHashMap::default() });
    let std_state = || LiveState::new(StdLive { page, sizes: std::collections::HashMap::new() });

    // Percentiles per operation, from a loop timing each one.
    const OPS: usize = 200_000;
    fn timed<L: Live>(mut st: LiveState<L>) -> (Vec<u64>, LiveState<L>) {
        for _ in 0..OPS / 4 {
            st.op();
        }
        let mut ns = Vec::with_capacity(OPS);
        for _ in 0..OPS {
            let t = Instant::now();
            st.op();
            ns.push(t.elapsed().as_nanos() as u64);
        }
        (ns, st)
    }
    let (ns, mut emu_st) = timed(emu_state());
    write_percentiles("live_100k", "emu", "operation", ns);
    println!("live_100k/emu: {:?}", emu_st.imp.pool.reuse_counts());
    let (ns, mut oa_st) = timed(offset_state());
    write_percentiles("live_100k", "offset-allocator", "operation", ns);
    let (ns, mut oam_st) = timed(offset_map_state());
    write_percentiles("live_100k", "offset-allocator+map", "operation", ns);
    let (ns, mut std_st) = timed(std_state());
    write_percentiles("live_100k", "std-alloc", "operation", ns);

    let mut g = c.benchmark_group("live_100k");
    g.bench_function(BenchmarkId::new("emu", "free+alloc"), |b| b.iter(|| emu_st.pair()));
    g.bench_function(BenchmarkId::new("offset-allocator", "free+alloc"), |b| b.iter(|| oa_st.pair()));
    g.bench_function(BenchmarkId::new("offset-allocator+map", "free+alloc"), |b| b.iter(|| oam_st.pair()));
    g.bench_function(BenchmarkId::new("std-alloc", "free+alloc"), |b| b.iter(|| std_st.pair()));
    drop((emu_st, oa_st, oam_st, std_st));
    // The same pairs with 1,000 blocks live: everything both structures touch stays in
    // the caches, so the ratio is their work per pair, and the gap to the 100,000-block
    // case is what their cache misses cost.
    let mut emu_st = LiveState::with_live(emu_imp(), 1000);
    let mut oa_st = LiveState::with_live(offset_imp(), 1000);
    g.bench_function(BenchmarkId::new("emu", "free+alloc-1k-live"), |b| b.iter(|| emu_st.pair()));
    g.bench_function(BenchmarkId::new("offset-allocator", "free+alloc-1k-live"), |b| b.iter(|| oa_st.pair()));
    g.finish();
}

/// How a block freed on stream `from` becomes reusable on stream `to`.
#[derive(Clone, Copy)]
enum Order {
    KnownComplete,
    EventDependency,
    Opportunistic,
    InternalDependency,
}

fn cross_stream(c: &mut Criterion) {
    const BATCH: u64 = 64;
    let mut g = c.benchmark_group("cross_stream");
    let cases = [
        ("known_complete", Order::KnownComplete, ReuseRule::KnownComplete),
        ("event_dependency", Order::EventDependency, ReuseRule::EventDependency),
        ("opportunistic", Order::Opportunistic, ReuseRule::Opportunistic),
        ("internal_dependency", Order::InternalDependency, ReuseRule::InternalDependency),
    ];
    for (name, order, rule) in cases {
        if !selected(&[&format!("cross_stream/emu/{name}")]) {
            continue;
        }
        let emu = emulator(2 * MIB, 4 << 30);
        let streams = [emu.create_stream().expect("stream"), emu.create_stream().expect("stream")];
        let p = pool(&emu, 1 << 30);
        // No release at synchronization: the cached blocks stay for the other stream.
        p.set(attr::ReleaseThreshold, 1 << 30).expect("threshold");
        match order {
            Order::EventDependency => p.set(attr::ReuseFollowEventDependencies, true).expect("flag"),
            Order::Opportunistic => p.set(attr::ReuseAllowOpportunistic, true).expect("flag"),
            Order::InternalDependency => p.set(attr::ReuseAllowInternalDependencies, true).expect("flag"),
            Order::KnownComplete => {}
        }
        let event = emu.create_event().expect("event");
        // Blocks freed on `from`, ordered as the rule needs before `to` allocates them.
        let order_after = |from: &EmuStream, to: &EmuStream| match order {
            Order::KnownComplete => emu.synchronize_stream(from).expect("sync"),
            Order::EventDependency => {
                emu.record_event(&event, from).expect("record");
                emu.stream_wait_event(to, &event).expect("wait");
            }
            Order::Opportunistic | Order::InternalDependency => {}
        };
        let mut ptrs = Vec::with_capacity(BATCH as usize);
        for _ in 0..BATCH {
            ptrs.push(p.malloc_async(2 * MIB, &streams[0]).expect("malloc"));
        }
        for d in ptrs.drain(..) {
            p.free(d, &streams[0]).expect("free");
        }
        order_after(&streams[0], &streams[1]);
        let mut from = 0;
        g.bench_function(BenchmarkId::new("emu", name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = left.min(BATCH);
                    left -= n;
                    let to = &streams[1 - from];
                    let t = Instant::now();
                    for _ in 0..n {
                        let (d, r) = p.malloc_async_traced(2 * MIB, to).expect("malloc");
                        debug_assert_eq!(r, rule);
                        ptrs.push(d);
                    }
                    total += t.elapsed();
                    // Untimed: cache the blocks on `to` and order them for the other stream.
                    for d in ptrs.drain(..) {
                        p.free(d, to).expect("free");
                    }
                    order_after(to, &streams[from]);
                    from = 1 - from;
                }
                total
            })
        });
        // The rule really served the allocations.
        let counts = p.reuse_counts();
        let served = match rule {
            ReuseRule::KnownComplete => counts.known_complete,
            ReuseRule::EventDependency => counts.event_dependency,
            ReuseRule::Opportunistic => counts.opportunistic,
            _ => counts.internal_dependency,
        };
        assert!(served > 0 && counts.fresh <= BATCH, "{name}: {counts:?}");
        emu.synchronize_device().expect("sync");
    }
    g.finish();
}

fn stream_ops(c: &mut Criterion) {
    let mut g = c.benchmark_group("stream_ops");
    let emu = Emulator::new();
    let a = emu.create_stream().expect("stream");
    let b = emu.create_stream().expect("stream");
    let e = emu.create_event().expect("event");
    g.bench_function(BenchmarkId::new("emu", "host_func_launch"), |bn| {
        bn.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                emu.launch_host_func(&a, Box::new(|| {})).expect("launch");
            }
            emu.synchronize_stream(&a).expect("sync");
            t.elapsed()
        })
    });
    g.bench_function(BenchmarkId::new("emu", "event_record_wait"), |bn| {
        bn.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                emu.record_event(&e, &a).expect("record");
                emu.stream_wait_event(&b, &e).expect("wait");
            }
            let d = t.elapsed();
            emu.synchronize_device().expect("sync");
            d
        })
    });
    g.bench_function(BenchmarkId::new("emu", "synchronize_idle"), |bn| {
        bn.iter(|| emu.synchronize_stream(&a).expect("sync"))
    });
    g.bench_function(BenchmarkId::new("emu", "launch_then_synchronize"), |bn| {
        bn.iter(|| {
            emu.launch_host_func(&a, Box::new(|| {})).expect("launch");
            emu.synchronize_stream(&a).expect("sync");
        })
    });
    g.finish();
}

fn copy_contention(c: &mut Criterion) {
    const COPY: u64 = 256 * MIB;
    let ids = ["copy_contention/during-copy/malloc+free", "copy_contention/no-copy/malloc+free"];
    if !selected(&ids) {
        return;
    }
    let emu = emulator(2 * MIB, 4 << 30);
    let s = emu.create_stream().expect("stream");
    let p = pool(&emu, 1 << 30);
    // The copy's destination: a synchronous allocation, so the host may copy into it.
    let dst = p.malloc_sync(COPY, &s).expect("malloc");
    let src = vec![0x5au8; COPY as usize];
    let first = p.malloc_async(2 * MIB, &s).expect("malloc");
    p.free(first, &s).expect("free");
    let pair = || {
        let d = p.malloc_async(black_box(2 * MIB), &s).expect("malloc");
        p.free(d, &s).expect("free");
    };
    let mut g = c.benchmark_group("copy_contention");
    g.sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs(1));
    g.bench_function(BenchmarkId::new("no-copy", "malloc+free"), |b| b.iter(&pair));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let copies = std::thread::scope(|scope| {
        let copier = scope.spawn(|| {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: `src` holds `COPY` readable bytes for the whole call.
                unsafe {
                    emu.memcpy_raw(CopySide::Device(dst), CopySide::Host(src.as_ptr().cast_mut()), COPY).expect("copy")
                };
                n += 1;
            }
            n
        });
        g.bench_function(BenchmarkId::new("during-copy", "malloc+free"), |b| b.iter(&pair));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        copier.join().expect("copier")
    });
    g.finish();
    println!("copy_contention: {copies} copies of 256 MiB ran during the measurement");
    p.free(dst, &s).expect("free");
    emu.synchronize_stream(&s).expect("sync");
}

/// A request of a long-running server: a stream of its own ordered after `main`, an
/// allocation there (reusing the block `main` freed before the last synchronization,
/// rule b), the result handed
/// back to `main` through an event, freed on `main`, the stream destroyed, and `main`
/// synchronized (the host reads the result).
fn request(emu: &Emulator, p: &EmuPool, main: &EmuStream, to_req: &EmuEvent, to_main: &EmuEvent) {
    let s = emu.create_stream().expect("stream");
    emu.stream_wait_event(&s, to_req).expect("wait");
    let d = p.malloc_async(emu.pool_granularity(), &s).expect("malloc");
    emu.record_event(to_main, &s).expect("record");
    emu.stream_wait_event(main, to_main).expect("wait");
    p.free(d, main).expect("free");
    emu.record_event(to_req, main).expect("record");
    emu.destroy_stream(&s).expect("destroy");
    emu.synchronize_stream(main).expect("sync");
}

fn streams_scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("streams_scaling");
    for n in [4usize, 64, 512, 2048] {
        let case = format!("{n}-live");
        if !selected(&[&format!("streams_scaling/emu/{case}")]) {
            continue;
        }
        let (emu, p, streams, e) = ring(n);
        let mut k = 0;
        g.bench_function(BenchmarkId::new("emu", &case), |b| {
            b.iter(|| {
                scaling_op(&emu, &p, &streams, &e, k);
                k = (k + 1) % n;
            })
        });
        for s in &streams {
            emu.destroy_stream(s).expect("destroy");
        }
    }
    let ever = [100usize, 2000, 10_000];
    let ids: Vec<String> = ever.iter().map(|n| format!("streams_scaling/emu/{n}-ever")).collect();
    if selected(&ids.iter().map(String::as_str).collect::<Vec<_>>()) {
        let emu = emulator(rustix::param::page_size() as u64, 1 << 30);
        let p = pool(&emu, 1 << 30);
        p.set(attr::ReuseFollowEventDependencies, true).expect("flag");
        // Blocks stay cached across the synchronizations.
        p.set(attr::ReleaseThreshold, 1 << 30).expect("threshold");
        let main = emu.create_stream().expect("stream");
        let other = emu.create_stream().expect("stream");
        let pair = [main.clone(), other.clone()];
        let (to_req, to_main, e) = (
            emu.create_event().expect("event"),
            emu.create_event().expect("event"),
            emu.create_event().expect("event"),
        );
        emu.record_event(&to_req, &main).expect("record");
        let mut created = 0;
        for n in ever {
            // Requests until `n` streams were created (and destroyed), the last 200 timed.
            let mut ns = Vec::new();
            while created < n {
                let t = Instant::now();
                request(&emu, &p, &main, &to_req, &to_main);
                if n - created <= 200 {
                    ns.push(t.elapsed().as_nanos() as u64);
                }
                created += 1;
            }
            write_percentiles("streams_scaling", &format!("request after {n} streams"), "request", ns);
            let mut k = 0;
            g.bench_function(BenchmarkId::new("emu", format!("{n}-ever")), |b| {
                b.iter(|| {
                    scaling_op(&emu, &p, &pair, &e, k);
                    k ^= 1;
                })
            });
        }
        emu.synchronize_device().expect("sync");
    }
    g.finish();
}

fn two_threads(c: &mut Criterion) {
    let ids = ["two_threads/one-thread/malloc+free", "two_threads/two-threads/malloc+free"];
    if !selected(&ids) {
        return;
    }
    let emu = emulator(2 * MIB, 4 << 30);
    let p = pool(&emu, 1 << 30);
    let streams = [emu.create_stream().expect("stream"), emu.create_stream().expect("stream")];
    for s in &streams {
        let d = p.malloc_async(2 * MIB, s).expect("malloc");
        p.free(d, s).expect("free");
    }
    let pairs = |s: &EmuStream, n: u64| {
        for _ in 0..n {
            let d = p.malloc_async(black_box(2 * MIB), s).expect("malloc");
            p.free(d, s).expect("free");
        }
    };
    let mut g = c.benchmark_group("two_threads");
    // Time per pair: `iters` pairs on one thread, or `iters` pairs split over two threads
    // started together.
    g.bench_function(BenchmarkId::new("one-thread", "malloc+free"), |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            pairs(&streams[0], iters);
            t.elapsed()
        })
    });
    g.bench_function(BenchmarkId::new("two-threads", "malloc+free"), |b| {
        b.iter_custom(|iters| {
            let start = std::sync::Barrier::new(3);
            let mut t = None;
            std::thread::scope(|scope| {
                for (i, s) in streams.iter().enumerate() {
                    let (start, pairs) = (&start, &pairs);
                    let n = iters / 2 + if i == 0 { iters % 2 } else { 0 };
                    scope.spawn(move || {
                        start.wait();
                        pairs(s, n);
                    });
                }
                start.wait();
                t = Some(Instant::now());
            });
            // The scope ends when both threads have.
            t.expect("started").elapsed()
        })
    });
    g.finish();
    println!("two_threads: {:?}", p.reuse_counts());
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = floors::floors, same_stream_pair, small_blocks_pair, live_100k, cross_stream, stream_ops, copy_contention, streams_scaling, two_threads
}
criterion_main!(benches);
