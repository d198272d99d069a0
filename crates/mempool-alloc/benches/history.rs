//! `history_switch`: what the allocation-history switch costs when it is off. One
//! allocation and its free (1000 bytes, NULL stream, on the emulator) through the library's
//! exports with the history off (`history-off`, the measured row) and on (`history-on`,
//! keeping 100,000 events), against the same pair on the small-block layer the library
//! wraps, called directly (`small-blocks`, the baseline: no library, no switch). Two more
//! rows isolate the switch itself: the check an allocation or a free makes when the
//! history is off (`check-off`, `mempool_alloc::history_enabled`) against no check at all
//! (`no-check`).

use criterion::{Criterion, criterion_group};
use mempool_alloc::{mempool_alloc, mempool_free, mempool_record_history};
use mempool_emu::Emulator;
use mempool_hal::{Device, MemPool, PoolProps};
use mempool_small::SmallBlocks;
use std::hint::black_box;
use std::ptr::null_mut;

const SIZE: usize = 1000;

fn pair() {
    // SAFETY: NULL is the default stream; the pointer is freed with its size and device.
    unsafe {
        let p = mempool_alloc(black_box(SIZE), 0, null_mut());
        assert!(!p.is_null());
        mempool_free(p, SIZE, 0, null_mut());
    }
}

fn history_switch(c: &mut Criterion) {
    let mut g = c.benchmark_group("history_switch");
    let emu = Emulator::builder().device_memory(1 << 30).checker(false).build().unwrap();
    let s = emu.create_stream().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build()).unwrap();
    let layer = SmallBlocks::new(&emu, &pool, 1 << 30).unwrap();
    g.bench_function("small-blocks", |b| {
        b.iter(|| {
            let p = layer.malloc_async(black_box(SIZE as u64), &s).unwrap();
            // SAFETY: allocated just now on `s`, never used.
            unsafe { layer.free_async(p, &s).unwrap() };
        })
    });
    mempool_record_history(0);
    g.bench_function("no-check", |b| b.iter(|| black_box(false)));
    g.bench_function("check-off", |b| b.iter(|| black_box(mempool_alloc::history_enabled())));
    g.bench_function("history-off", |b| b.iter(pair));
    mempool_record_history(100_000);
    g.bench_function("history-on", |b| b.iter(pair));
    mempool_record_history(0);
    g.finish();
}

criterion_group!(benches, history_switch);

fn main() {
    // SAFETY: `main` runs before any other thread exists; the library reads its settings at
    // its first call, below.
    unsafe {
        std::env::set_var(mempool_alloc::ENV_BACKEND, "emulator");
        std::env::set_var("MEMPOOL_EMU_DEVICE_MEMORY", "1G");
        std::env::set_var("MEMPOOL_EMU_CHECKER", "off");
        std::env::set_var(mempool_alloc::ENV_POOL_SIZE, "1G");
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
