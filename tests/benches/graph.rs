//! Stream order on dense graphs of streams, in one run (`cargo xtask bench` runs this with
//! the other benchmarks).
//!
//! - `dense_graph`: the step of a pipeline with many copy and compute streams, on `N` live
//!   streams of the threaded emulator: a 2 MiB `malloc_async` + `free_async` on stream
//!   `a = k mod N`, an event recorded on `a`, and stream `b = (7k + 3) mod N` waiting for
//!   that event, so that over `N` steps the waits touch every stream and every clock
//!   comes to name every stream. Each stream has one event of its own, re-recorded at
//!   each of its steps (a program keeps an event per stream rather than creating one per
//!   hand-off). `emu/N` is that step; `ring/N` is `streams_scaling`'s step on the same
//!   number of streams (each stream waits for the previous one's event, one event in
//!   all), measured in the same run for comparison.
//!
//! Targets (issue 22): `emu/64` within 2 × `emu/4`, `emu/512` within 4 × `emu/4`.

#[path = "common/floors.rs"]
mod floors;
#[path = "common/setup.rs"]
mod setup;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{Device, MemPool};
use setup::{emulator, pool, ring, scaling_op};
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// The stream counts of both workloads.
const SIZES: [usize; 3] = [4, 64, 512];

/// Step `k` of the dense graph over `streams`, with `events[a]` the event of stream `a`.
fn dense_step(emu: &Emulator, p: &EmuPool, streams: &[EmuStream], events: &[EmuEvent], k: usize) {
    let n = streams.len();
    let a = k % n;
    let b = (7 * k + 3) % n;
    let d = p.malloc_async(2 * MIB, &streams[a]).expect("malloc");
    p.free(d, &streams[a]).expect("free");
    emu.record_event(&events[a], &streams[a]).expect("record");
    emu.stream_wait_event(&streams[b], &events[a]).expect("wait");
}

fn dense_graph(c: &mut Criterion) {
    let mut g = c.benchmark_group("dense_graph");
    for n in SIZES {
        // Every stream keeps one 2 MiB block cached: 1 GiB at 512 streams.
        let emu = emulator(2 * MIB, 4 << 30);
        let p = pool(&emu, 2 << 30);
        let streams: Vec<EmuStream> = (0..n).map(|_| emu.create_stream().expect("stream")).collect();
        let events: Vec<EmuEvent> = (0..n).map(|_| emu.create_event().expect("event")).collect();
        // Rounds first, so that every clock names every stream (b = 7k + 3 visits every
        // stream every n steps when n is coprime with 7, and n is a power of two).
        for k in 0..4 * n {
            dense_step(&emu, &p, &streams, &events, k);
        }
        let mut k = 4 * n;
        g.bench_function(BenchmarkId::new("emu", n), |b| {
            b.iter(|| {
                dense_step(&emu, &p, &streams, &events, k);
                k += 1;
            })
        });
        for s in &streams {
            emu.destroy_stream(s).expect("destroy");
        }
        emu.synchronize_device().expect("sync");
    }
    for n in SIZES {
        // The ring of `streams_scaling`.
        let (emu, p, streams, e) = ring(n);
        let mut k = 0;
        g.bench_function(BenchmarkId::new("ring", n), |b| {
            b.iter(|| {
                scaling_op(&emu, &p, &streams, &e, k);
                k = (k + 1) % n;
            })
        });
        for s in &streams {
            emu.destroy_stream(s).expect("destroy");
        }
        emu.synchronize_device().expect("sync");
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = floors::floors, dense_graph
}
criterion_main!(benches);
