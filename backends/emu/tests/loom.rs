//! The model check of the emulator's concurrency core (built only with `--cfg loom`; run it
//! with `cargo xtask loom`, docs/testing.md). Each test is a small program through the
//! public API, with two streams (so two stream workers), at most one event and one pool;
//! loom runs it once per interleaving of its threads (the host thread, the workers, and a
//! second host thread where one is spawned) up to the preemption bound in
//! `LOOM_MAX_PREEMPTIONS` (none: every interleaving), with the emulator's own locks,
//! condition variables and atomics (`src/sync.rs`), and checks after each run what must hold
//! in all of them. A deadlock, a lock taken against the lock order that deadlocks, or a
//! wait that could only end by its timeout fails the model.
//!
//! Each test prints `loom: NAME: N interleavings in T`, which `cargo xtask loom` sums.
//!
//! The rules it checks: contract §1 (`mempool_hal::contract::objects`), §4
//! (`mempool_hal::contract::allocation`), §6 (`mempool_hal::contract::release`), §7
//! (`mempool_hal::contract::statistics`).

#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use mempool_emu::{EmuPool, EmuStream, Emulator, ReuseRule};
use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, PoolStats, Result, attr};
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

const G: u64 = 64 << 10;

/// Runs `program` under loom in every interleaving up to the bound, prints how many it
/// explored, and returns that number.
fn model(name: &str, program: impl Fn() -> Result<()> + Send + Sync + 'static) -> usize {
    // Counted outside loom: one per execution of the program.
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    let mut builder = loom::model::Builder::new();
    // The emulator's calls take many locks and atomics; loom's default (1,000 branches per
    // run) is for small data structures.
    builder.max_branches = 100_000;
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        program().expect("every call of the program succeeds");
    });
    let n = runs.load(std::sync::atomic::Ordering::Relaxed);
    println!("loom: {name}: {n} interleavings in {:.1?}", start.elapsed());
    assert!(n > 0, "{name}: loom explored nothing");
    n
}

fn emulator() -> Result<Emulator> {
    Emulator::builder().granularity(G).device_memory(64 * G).build()
}

fn pool(emu: &Emulator) -> Result<EmuPool> {
    emu.create_pool(&PoolProps::builder().max_size(16 * G).build())
}

/// A flag set by a host function on `s` (real work of the stream, run by its worker).
fn mark(emu: &Emulator, s: &EmuStream) -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&flag);
    emu.launch_host_func(s, Box::new(move || f.store(true, Ordering::Release)))?;
    Ok(flag)
}

/// A host function on `s` that copies `flag` (as it reads it then) into the flag returned.
fn observe(emu: &Emulator, s: &EmuStream, flag: &Arc<AtomicBool>) -> Result<Arc<AtomicBool>> {
    let seen = Arc::new(AtomicBool::new(false));
    let (from, to) = (Arc::clone(flag), Arc::clone(&seen));
    emu.launch_host_func(s, Box::new(move || to.store(from.load(Ordering::Acquire), Ordering::Release)))?;
    Ok(seen)
}

fn assert_consistent(st: PoolStats) {
    assert!(st.reserved_current >= st.used_current, "a snapshot with RESERVED < USED: {st:?}");
    assert!(st.reserved_high >= st.reserved_current && st.used_high >= st.used_current, "{st:?}");
}

/// Rule c: a block freed on S, handed to T through an event. T's work after the
/// allocation runs after S's work before the free, in every interleaving of the workers.
#[test]
fn reuse_through_an_event_is_ordered_after_the_free() {
    model("event dependency", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        pool.set(attr::ReuseFollowEventDependencies, true)?;
        let e = emu.create_event()?;
        let p = pool.malloc_async(G, &s)?;
        let used_on_s = mark(&emu, &s)?;
        pool.free(p, &s)?;
        emu.record_event(&e, &s)?;
        emu.stream_wait_event(&t, &e)?;
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        assert_eq!((q, rule), (p, ReuseRule::EventDependency));
        let seen_on_t = observe(&emu, &t, &used_on_s)?;
        emu.synchronize_device()?;
        assert!(seen_on_t.load(Ordering::Acquire), "T used the block before S's work on it had run");
        assert_consistent(pool.stats()?);
        pool.free(q, &t)?;
        emu.synchronize_device()?;
        assert_eq!(pool.stats()?.used_current, 0);
        Ok(())
    });
}

/// Rule d: a block freed on S and allocated on T with no order between them is reused only
/// once its free has executed, and then what S's work did is visible; otherwise T gets
/// fresh memory. Both outcomes must occur among the interleavings.
#[test]
fn opportunistic_reuse_only_after_the_free_has_run() {
    static REUSED: AtomicUsize = AtomicUsize::new(0);
    static FRESH: AtomicUsize = AtomicUsize::new(0);
    model("opportunistic", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        pool.set(attr::ReuseAllowOpportunistic, true)?;
        let p = pool.malloc_async(G, &s)?;
        let used_on_s = mark(&emu, &s)?;
        pool.free(p, &s)?;
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        match rule {
            ReuseRule::Opportunistic => {
                assert_eq!(q, p);
                assert!(used_on_s.load(Ordering::Acquire), "reused before the free's earlier work completed");
                REUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            ReuseRule::Fresh => {
                assert_ne!(q, p);
                FRESH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            other => panic!("rule {other:?} cannot serve this allocation"),
        }
        assert_consistent(pool.stats()?);
        pool.free(q, &t)?;
        emu.synchronize_device()?;
        assert_eq!(pool.stats()?.used_current, 0);
        Ok(())
    });
    let (reused, fresh) =
        (REUSED.load(std::sync::atomic::Ordering::Relaxed), FRESH.load(std::sync::atomic::Ordering::Relaxed));
    assert!(reused > 0 && fresh > 0, "both outcomes explored: reused {reused}, fresh {fresh}");
}

/// Rule e: T takes S's cached block at once; the pool makes T wait for S's free, so T's
/// later work runs after S's.
#[test]
fn internal_dependency_makes_the_stream_wait() {
    model("internal dependency", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        pool.set(attr::ReuseAllowInternalDependencies, true)?;
        let p = pool.malloc_async(G, &s)?;
        let used_on_s = mark(&emu, &s)?;
        pool.free(p, &s)?;
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        assert_eq!((q, rule), (p, ReuseRule::InternalDependency));
        let seen_on_t = observe(&emu, &t, &used_on_s)?;
        emu.synchronize_stream(&t)?;
        assert!(seen_on_t.load(Ordering::Acquire), "T ran before the wait the pool inserted ended");
        assert!(emu.is_idle(&t)?);
        pool.free(q, &t)?;
        emu.synchronize_device()?;
        assert_eq!(pool.stats()?.used_current, 0);
        Ok(())
    });
}

/// A stream synchronization against its worker: when it returns, the stream's work has
/// run and the stream is idle; frees before it are known complete (rule b serves another
/// stream) and released.
#[test]
fn stream_synchronization_waits_for_the_worker() {
    model("stream synchronization", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        let p = pool.malloc_async(G, &s)?;
        let ran = mark(&emu, &s)?;
        pool.free(p, &s)?;
        pool.set(attr::ReleaseThreshold, 16 * G)?;
        emu.synchronize_stream(&s)?;
        assert!(ran.load(Ordering::Acquire));
        assert!(emu.is_idle(&s)?);
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        assert_eq!((q, rule), (p, ReuseRule::KnownComplete));
        pool.free(q, &t)?;
        Ok(())
    });
}

/// A device synchronization drains, observes and releases both streams, whatever the
/// workers are doing when it starts.
#[test]
fn device_synchronization_drains_both_streams() {
    model("device synchronization", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        let p = pool.malloc_async(G, &s)?;
        let q = pool.malloc_async(2 * G, &t)?;
        let (a, b) = (mark(&emu, &s)?, mark(&emu, &t)?);
        pool.free(p, &s)?;
        pool.free(q, &t)?;
        emu.synchronize_device()?;
        assert!(a.load(Ordering::Acquire) && b.load(Ordering::Acquire));
        assert!(emu.is_idle(&s)? && emu.is_idle(&t)?);
        let st = pool.stats()?;
        assert_eq!((st.used_current, st.reserved_current), (0, 0), "released at the synchronization: {st:?}");
        Ok(())
    });
}

/// A stream destroyed with work queued: the work still runs, the free after it takes
/// effect, and a device synchronization then observes it.
#[test]
fn destroy_while_work_is_queued() {
    model("destroy while queued", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = pool(&emu)?;
        let p = pool.malloc_async(G, &s)?;
        let ran = mark(&emu, &s)?;
        pool.free(p, &s)?;
        emu.destroy_stream(&s)?;
        emu.synchronize_device()?;
        assert!(ran.load(Ordering::Acquire), "work queued before the destroy did not run");
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        assert_eq!(rule, ReuseRule::Fresh, "the block was released at the synchronization");
        assert_eq!(pool.stats()?.used_current, G);
        pool.free(q, &t)?;
        Ok(())
    });
}

/// Statistics read by a second host thread while the first allocates, frees and
/// synchronizes: every snapshot is consistent (RESERVED ≥ USED).
#[test]
fn statistics_snapshots_are_consistent() {
    model("statistics", || {
        let emu = emulator()?;
        let s = emu.create_stream()?;
        let pool = Arc::new(pool(&emu)?);
        let reader = {
            let pool = Arc::clone(&pool);
            loom::thread::spawn(move || -> Result<()> {
                for _ in 0..2 {
                    assert_consistent(pool.stats()?);
                }
                Ok(())
            })
        };
        let p = pool.malloc_async(G, &s)?;
        pool.free(p, &s)?;
        emu.synchronize_stream(&s)?;
        reader.join().expect("the reader does not panic")?;
        assert_eq!(pool.stats()?.used_current, 0);
        Ok(())
    });
}

/// Two host threads on two streams at once, through every lock of the core: the first
/// frees on S and allocates S's block on T (pool state, then T's state: rule e inserts a
/// wait on T), while the second records an event on T, makes S wait for it, reads the
/// statistics and synchronizes S. Whatever the order, nothing deadlocks (the lock order
/// holds and no wait waits on itself), T gets S's block (by rule e, or rule b once the
/// synchronization of S has returned), and T's work after the allocation runs after S's.
#[test]
fn two_host_threads_keep_the_lock_order() {
    model("two host threads", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = Arc::new(pool(&emu)?);
        pool.set(attr::ReuseAllowInternalDependencies, true)?;
        // The synchronization of S keeps the block cached.
        pool.set(attr::ReleaseThreshold, 16 * G)?;
        let e = emu.create_event()?;
        let p = pool.malloc_async(G, &s)?;
        let used_on_s = mark(&emu, &s)?;
        pool.free(p, &s)?;
        let second = {
            let (emu, s, t, pool) = (emu.clone(), s.clone(), t.clone(), Arc::clone(&pool));
            loom::thread::spawn(move || -> Result<()> {
                emu.record_event(&e, &t)?;
                emu.stream_wait_event(&s, &e)?;
                assert_consistent(pool.stats()?);
                emu.synchronize_stream(&s)
            })
        };
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        // Rule b when the second thread's synchronization of S came first.
        assert_eq!(q, p);
        assert!(matches!(rule, ReuseRule::InternalDependency | ReuseRule::KnownComplete), "{rule:?}");
        let seen_on_t = observe(&emu, &t, &used_on_s)?;
        second.join().expect("the second host thread does not panic")?;
        emu.synchronize_device()?;
        assert!(seen_on_t.load(Ordering::Acquire), "T ran before the wait the pool inserted ended");
        pool.free(q, &t)?;
        Ok(())
    });
}

/// The same-stream fast paths (`src/pool/lanes.rs`): two host threads each run the
/// same-stream cycle on a stream of their own (their lanes: no pool lock), while each also
/// reads the statistics (a slow path, which shuts the lanes out and folds their
/// counters). Every snapshot is consistent and exact (USED is a sum of whole blocks, never
/// above USED_HIGH), and at the end the counters hold every allocation and free.
#[test]
fn same_stream_lanes_race_a_snapshot() {
    model("lanes and snapshots", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = Arc::new(pool(&emu)?);
        // Two blocks live at once (USED_HIGH = 2 blocks), twice: the second frees run on
        // the streams' lanes, after the last slow path, so each lane may take its block
        // back without one.
        let p = pool.malloc_async(G, &s)?;
        let q = pool.malloc_async(G, &t)?;
        pool.free(p, &s)?;
        pool.free(q, &t)?;
        assert_eq!((pool.malloc_async(G, &s)?, pool.malloc_async(G, &t)?), (p, q));
        pool.free(p, &s)?;
        pool.free(q, &t)?;
        let second = {
            let (t, pool) = (t.clone(), Arc::clone(&pool));
            loom::thread::spawn(move || -> Result<()> {
                assert_eq!(pool.malloc_async_traced(G, &t)?, (q, ReuseRule::SameStream));
                let st = pool.stats()?;
                assert_consistent(st);
                assert!(st.used_current >= G && st.used_high == 2 * G, "{st:?}");
                pool.free(q, &t)
            })
        };
        assert_eq!(pool.malloc_async_traced(G, &s)?, (p, ReuseRule::SameStream));
        pool.free(p, &s)?;
        let st = pool.stats()?;
        assert_consistent(st);
        assert!(st.used_current <= G && st.used_current % G == 0 && st.used_high == 2 * G, "{st:?}");
        second.join().expect("the second host thread does not panic")?;
        let st = pool.stats()?;
        assert_eq!((st.used_current, st.used_high, st.reserved_current), (0, 2 * G, 2 * G));
        let counts = pool.reuse_counts();
        assert_eq!((counts.same_stream, counts.fresh), (4, 2), "{counts:?}");
        Ok(())
    });
}

/// A cross-stream reuse (rule c, a slow path) on a second host thread races the first
/// thread's same-stream cycle (on its lane) and its synchronization (a release): each
/// block goes to exactly one of them (S by rule a, T by rule c, or by rule b once the
/// synchronization has observed the free, or T is served fresh after a release), and
/// every counter stays exact.
#[test]
fn cross_stream_reuse_races_a_release_and_a_lane() {
    model("reuse, release and a lane", || {
        let emu = emulator()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = Arc::new(pool(&emu)?);
        pool.set(attr::ReuseFollowEventDependencies, true)?;
        let e = emu.create_event()?;
        // Two blocks cached on S with a live one between (so nothing merges); S's cycle
        // has run on its lane once.
        let p = pool.malloc_async(G, &s)?;
        let between = pool.malloc_async(G, &s)?;
        let mine = pool.malloc_async(G, &s)?;
        pool.free(mine, &s)?;
        assert_eq!(pool.malloc_async(G, &s)?, mine);
        pool.free(mine, &s)?;
        pool.free(p, &s)?;
        emu.record_event(&e, &s)?;
        emu.stream_wait_event(&t, &e)?;
        let second = {
            let (t, pool) = (t.clone(), Arc::clone(&pool));
            loom::thread::spawn(move || -> Result<(mempool_hal::DevicePtr, ReuseRule)> {
                let got = pool.malloc_async_traced(G, &t)?;
                assert_consistent(pool.stats()?);
                Ok(got)
            })
        };
        let (x, rule) = pool.malloc_async_traced(G, &s)?;
        assert_eq!(rule, ReuseRule::SameStream);
        assert!(x == p || x == mine, "S served {x:?}");
        emu.synchronize_stream(&s)?;
        let (q, rule) = second.join().expect("the second host thread does not panic")?;
        match rule {
            ReuseRule::EventDependency | ReuseRule::KnownComplete => assert!(q != x && (q == p || q == mine)),
            ReuseRule::Fresh => {}
            other => panic!("T served by {other:?}"),
        }
        assert_eq!(pool.stats()?.used_current, 3 * G);
        pool.free(x, &s)?;
        pool.free(q, &t)?;
        pool.free(between, &s)?;
        emu.synchronize_device()?;
        let st = pool.stats()?;
        assert_consistent(st);
        assert_eq!(st.used_current, 0);
        Ok(())
    });
}

/// Lanes allocate within their share of the headroom below USED_HIGH (`src/pool/lanes.rs`):
/// each of two host threads takes back a block its stream cached before the last slow path
/// (no free of its own since, so only its allowance lets its lane serve it), while the
/// first thread also resets USED_HIGH (the CUDA profile: to USED) and both read the
/// statistics. No snapshot has USED above USED_HIGH or above what was allocated, and the
/// mark is exact at the end: a lane never lifts USED past the mark a slow path set.
#[test]
fn lane_allowances_race_a_reset() {
    model("allowances and a reset", || {
        let emu =
            Emulator::builder().granularity(G).device_memory(64 * G).profile(mempool_hal::Profile::Cuda).build()?;
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = Arc::new(pool(&emu)?);
        // Eight blocks live at once (USED_HIGH = 8 blocks), then four of them cached, two
        // on each stream, each between two that stay live (none merges).
        let mut cached = Vec::new();
        let mut live = Vec::new();
        for k in 0..4 {
            let on = if k < 2 { &s } else { &t };
            cached.push((pool.malloc_async(G, on)?, on.clone()));
            live.push(pool.malloc_async(G, &s)?);
        }
        for (p, on) in &cached {
            pool.free(*p, on)?;
        }
        // A slow path leaves USED at 4 blocks under a mark of 8: a share of 2 per lane.
        let st = pool.stats()?;
        assert_eq!((st.used_current, st.used_high), (4 * G, 8 * G));
        let second = {
            let (t, pool) = (t.clone(), Arc::clone(&pool));
            loom::thread::spawn(move || -> Result<mempool_hal::DevicePtr> {
                let (q, rule) = pool.malloc_async_traced(G, &t)?;
                assert_eq!(rule, ReuseRule::SameStream);
                let st = pool.stats()?;
                assert_consistent(st);
                assert!(st.used_current >= 5 * G && st.used_current <= 6 * G, "{st:?}");
                Ok(q)
            })
        };
        let (p, rule) = pool.malloc_async_traced(G, &s)?;
        assert_eq!(rule, ReuseRule::SameStream);
        pool.reset(attr::UsedMemHigh)?;
        let st = pool.stats()?;
        assert_consistent(st);
        assert!(st.used_current >= 5 * G && st.used_current <= 6 * G, "{st:?}");
        let q = second.join().expect("the second host thread does not panic")?;
        let st = pool.stats()?;
        assert_consistent(st);
        assert_eq!(st.used_current, 6 * G);
        assert_eq!(st.used_high, 6 * G, "the reset's USED, or the slow allocation after it");
        pool.free(p, &s)?;
        pool.free(q, &t)?;
        for p in live {
            pool.free(p, &s)?;
        }
        emu.synchronize_device()?;
        Ok(())
    });
}

/// A free's lock-free marker (`src/stream/published.rs`) races work another host thread
/// enqueues on the same stream. The second thread launches a host function on S, lets the
/// first thread go on, and launches another while the first frees a block on S's lane
/// (the block holds S's clock, so the free takes its position without S's lock). The free
/// comes after the first host function, so its block has executed only once that
/// function has run: T, which may reuse any block whose free has executed (rule d), gets
/// it only then. The free's position, taken beside the lock, never loses a position taken
/// under it: every free and every host function still runs, and the counters are exact.
#[test]
fn a_lock_free_marker_races_work_enqueued_on_its_stream() {
    static REUSED: AtomicUsize = AtomicUsize::new(0);
    model("lock-free marker", || {
        let emu = Arc::new(emulator()?);
        let (s, t) = (emu.create_stream()?, emu.create_stream()?);
        let pool = Arc::new(pool(&emu)?);
        pool.set(attr::ReuseAllowOpportunistic, true)?;
        // One cycle on S: the block keeps S's clock, and S has a lane.
        let p = pool.malloc_async(G, &s)?;
        pool.free(p, &s)?;
        assert_eq!(pool.malloc_async_traced(G, &s)?, (p, ReuseRule::SameStream));
        let enqueued = Arc::new(AtomicBool::new(false));
        let second = {
            let (emu, s, enqueued) = (Arc::clone(&emu), s.clone(), Arc::clone(&enqueued));
            loom::thread::spawn(move || -> Result<(Arc<AtomicBool>, Arc<AtomicBool>)> {
                let first = mark(&emu, &s)?;
                enqueued.store(true, Ordering::Release);
                let next = mark(&emu, &s)?;
                Ok((first, next))
            })
        };
        while !enqueued.load(Ordering::Acquire) {
            loom::thread::yield_now();
        }
        pool.free(p, &s)?;
        let (q, rule) = pool.malloc_async_traced(G, &t)?;
        let (first, next) = second.join().expect("the second host thread does not panic")?;
        match rule {
            ReuseRule::Opportunistic => {
                assert_eq!(q, p);
                assert!(
                    first.load(Ordering::Acquire),
                    "reused before the host function enqueued before the free had run"
                );
                REUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            ReuseRule::Fresh => assert_ne!(q, p),
            other => panic!("rule {other:?} cannot serve this allocation"),
        }
        pool.free(q, &t)?;
        emu.synchronize_device()?;
        assert!(first.load(Ordering::Acquire) && next.load(Ordering::Acquire), "both host functions ran");
        let st = pool.stats()?;
        assert_consistent(st);
        assert_eq!(st.used_current, 0);
        Ok(())
    });
    assert!(REUSED.load(std::sync::atomic::Ordering::Relaxed) > 0, "the reuse was explored");
}
