//! `thread_scaling`: 2 MiB `malloc_async` + `free_async` pairs (same-stream reuse, as in
//! `two_threads` of the `pool` bench) from 1, 2, 4 and 8 host threads started together,
//! each thread `iters` pairs; criterion's time is the wall time from the start to the last
//! thread's end, per round of one pair on every thread, and its throughput counts the
//! pairs of all threads (`Throughput::Elements`), so the report reads pairs per second.
//!
//! - `one-pool/T`: the T threads on one emulator pool, each on a stream of its own (the
//!   goal: no shared lock, no shared line).
//! - `independent/T`: each thread on an emulator and a pool of its own (nothing shared:
//!   the machine's ceiling for perfectly sharded work).
//! - `mutex/T`: one pool behind one `Mutex`, taken for each call, as PyTorch's caching
//!   allocator serializes a device's callers.
//! - `mixed/T`: one pool; of every 8 pairs a thread makes, 6 are on its own stream, one is
//!   on a stream all threads share, and one is a hand-off (allocated on one of the
//!   thread's two streams, an event recorded there and waited for by the other, freed
//!   there; the direction alternates, so each allocation reuses the block the last hand-off
//!   freed on its stream); meanwhile another thread reads the pool's statistics
//!   (`stats_snapshot`) in a loop that sleeps 20 µs between reads (longer in practice: the
//!   timer's slack), and at every fourth read synchronizes one of the streams
//!   (round-robin).
//!
//! On a machine with fewer cores than threads the larger points are oversubscribed: they
//! are reported, not judged.

#[path = "common/floors.rs"]
mod floors;
#[path = "common/setup.rs"]
mod setup;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{Device, MemPool, PoolProps};
use setup::run_threads;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const MIB: u64 = 1 << 20;
const SIZE: u64 = 2 * MIB;
const THREADS: [usize; 4] = [1, 2, 4, 8];

fn emulator() -> Emulator {
    Emulator::builder().granularity(2 * MIB).device_memory(4 << 30).build().expect("emulator")
}

fn pool(emu: &Emulator) -> EmuPool {
    emu.create_pool(&PoolProps::builder().max_size(1 << 30).build()).expect("pool")
}

/// A stream whose first allocation is made, so later pairs reuse it.
fn warm_stream(emu: &Emulator, p: &EmuPool) -> EmuStream {
    let s = emu.create_stream().expect("stream");
    let d = p.malloc_async(SIZE, &s).expect("malloc");
    p.free(d, &s).expect("free");
    s
}

fn pairs(p: &EmuPool, s: &EmuStream, n: u64) {
    for _ in 0..n {
        let d = p.malloc_async(black_box(SIZE), s).expect("malloc");
        p.free(d, s).expect("free");
    }
}

/// One thread's streams in `mixed`: its own two and the event ordering hand-offs.
struct Mixed {
    a: EmuStream,
    b: EmuStream,
    e: EmuEvent,
}

/// `n` steps of thread `m` in `mixed` (see the module docs).
fn mixed_worker(emu: &Emulator, p: &EmuPool, shared: &EmuStream, m: &Mixed, n: u64) {
    let mut forward = true;
    for k in 0..n {
        match k % 8 {
            3 => pairs(p, shared, 1),
            7 => {
                let (from, to) = if forward { (&m.a, &m.b) } else { (&m.b, &m.a) };
                let d = p.malloc_async(black_box(SIZE), from).expect("malloc");
                emu.record_event(&m.e, from).expect("record");
                emu.stream_wait_event(to, &m.e).expect("wait");
                p.free(d, to).expect("free");
                forward = !forward;
            }
            _ => pairs(p, &m.a, 1),
        }
    }
}

/// Until `running` reaches 0: a statistics snapshot, a 20 µs sleep, and at every fourth
/// snapshot a synchronization of the next stream of `streams`. Returns (snapshots, syncs).
fn observer(emu: &Emulator, p: &EmuPool, streams: &[&EmuStream], running: &AtomicUsize) -> (u64, u64) {
    let (mut snapshots, mut syncs) = (0u64, 0u64);
    let mut next = 0;
    while running.load(Ordering::Acquire) > 0 {
        black_box(p.stats_snapshot().expect("snapshot"));
        snapshots += 1;
        if snapshots % 4 == 0 {
            emu.synchronize_stream(streams[next]).expect("sync");
            next = (next + 1) % streams.len();
            syncs += 1;
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    (snapshots, syncs)
}

fn thread_scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("thread_scaling");
    for t in THREADS {
        g.throughput(Throughput::Elements(t as u64));
        let case = t.to_string();

        let emu = emulator();
        let p = pool(&emu);
        let streams: Vec<EmuStream> = (0..t).map(|_| warm_stream(&emu, &p)).collect();
        g.bench_function(BenchmarkId::new("one-pool", &case), |b| {
            b.iter_custom(|iters| run_threads(t, |i| pairs(&p, &streams[i], iters)))
        });

        let lock = Mutex::new(());
        g.bench_function(BenchmarkId::new("mutex", &case), |b| {
            b.iter_custom(|iters| {
                run_threads(t, |i| {
                    let s = &streams[i];
                    for _ in 0..iters {
                        let d = {
                            let _held = lock.lock().expect("not poisoned");
                            p.malloc_async(black_box(SIZE), s).expect("malloc")
                        };
                        let _held = lock.lock().expect("not poisoned");
                        p.free(d, s).expect("free");
                    }
                })
            })
        });
        println!("thread_scaling/{t} threads on one pool: {:?}", p.reuse_counts());

        let own: Vec<(Emulator, EmuPool, EmuStream)> = (0..t)
            .map(|_| {
                let emu = emulator();
                let p = pool(&emu);
                let s = warm_stream(&emu, &p);
                (emu, p, s)
            })
            .collect();
        g.bench_function(BenchmarkId::new("independent", &case), |b| {
            b.iter_custom(|iters| run_threads(t, |i| pairs(&own[i].1, &own[i].2, iters)))
        });
        drop(own);

        let shared = warm_stream(&emu, &p);
        let mixed: Vec<Mixed> = (0..t)
            .map(|_| Mixed {
                a: warm_stream(&emu, &p),
                b: warm_stream(&emu, &p),
                e: emu.create_event().expect("event"),
            })
            .collect();
        let mut all: Vec<&EmuStream> = vec![&shared];
        all.extend(mixed.iter().flat_map(|m| [&m.a, &m.b]));
        let (snapshots, syncs) = (AtomicUsize::new(0), AtomicUsize::new(0));
        g.bench_function(BenchmarkId::new("mixed", &case), |b| {
            b.iter_custom(|iters| {
                let running = AtomicUsize::new(t);
                run_threads(t + 1, |i| {
                    if i == t {
                        let (n, s) = observer(&emu, &p, &all, &running);
                        snapshots.fetch_add(n as usize, Ordering::Relaxed);
                        syncs.fetch_add(s as usize, Ordering::Relaxed);
                    } else {
                        mixed_worker(&emu, &p, &shared, &mixed[i], iters);
                        running.fetch_sub(1, Ordering::Release);
                    }
                })
            })
        });
        println!(
            "thread_scaling/mixed/{t}: {} snapshots, {} synchronizations; {:?}",
            snapshots.into_inner(),
            syncs.into_inner(),
            p.reuse_counts()
        );
        emu.synchronize_device().expect("sync");
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = floors::floors, thread_scaling
}
criterion_main!(benches);
