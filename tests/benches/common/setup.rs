//! What several bench binaries of the tests crate share: an emulator and a pool of a
//! given shape, the ring step of `streams_scaling` (also the `ring` rows of `dense_graph`),
//! and threads released together. Each binary uses part of it.
#![allow(dead_code)]

use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{Device, MemPool, PoolProps};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// An emulator with granularity `gran` and `memory` bytes of device memory.
pub fn emulator(gran: u64, memory: u64) -> Emulator {
    Emulator::builder().granularity(gran).device_memory(memory).build().expect("emulator")
}

/// A pool of `size` bytes on `emu`.
pub fn pool(emu: &Emulator, size: u64) -> EmuPool {
    emu.create_pool(&PoolProps::builder().max_size(size).build()).expect("pool")
}

/// One operation of `streams_scaling` on stream `k` of `streams`: an allocation and its
/// free on it, an event recorded there, and the next stream waiting for that event.
pub fn scaling_op(emu: &Emulator, p: &EmuPool, streams: &[EmuStream], e: &EmuEvent, k: usize) {
    let s = &streams[k];
    let d = p.malloc_async(emu.pool_granularity(), s).expect("malloc");
    p.free(d, s).expect("free");
    emu.record_event(e, s).expect("record");
    emu.stream_wait_event(&streams[(k + 1) % streams.len()], e).expect("wait");
}

/// The ring of `streams_scaling` over `n` live streams, one page per allocation (every
/// stream keeps one block cached), after two rounds of [`scaling_op`], so that every
/// clock names every stream: the emulator, its pool, the streams and the event.
pub fn ring(n: usize) -> (Emulator, EmuPool, Vec<EmuStream>, EmuEvent) {
    let emu = emulator(rustix::param::page_size() as u64, 1 << 30);
    let p = pool(&emu, 1 << 30);
    let streams: Vec<EmuStream> = (0..n).map(|_| emu.create_stream().expect("stream")).collect();
    let e = emu.create_event().expect("event");
    for k in 0..2 * n {
        scaling_op(&emu, &p, &streams, &e, k % n);
    }
    (emu, p, streams, e)
}

/// Runs `work(i)` for `i` in `0..n` on `n` threads released together; the wall time from
/// their release to the last one's end.
pub fn run_threads(n: usize, work: impl Fn(usize) + Sync) -> Duration {
    let start = Barrier::new(n + 1);
    let mut t = None;
    std::thread::scope(|scope| {
        for i in 0..n {
            let (start, work) = (&start, &work);
            scope.spawn(move || {
                start.wait();
                work(i);
            });
        }
        start.wait();
        t = Some(Instant::now());
    });
    // The scope ends when every thread has.
    t.expect("started").elapsed()
}
