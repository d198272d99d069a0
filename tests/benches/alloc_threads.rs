//! `alloc_threads`: allocation + free pairs through the pluggable-allocator library's
//! exports (`mempool_alloc`, `mempool_free`, called in process through its rlib, as a
//! framework calls the `.so`), from one thread and from two threads started together,
//! each thread on a CUDA stream of its own, at 2 MiB and at 1000 bytes (defaults: every
//! request through the small-block layer). Each thread makes `iters` pairs; criterion's
//! time is the wall time per round of one pair on every thread, and its throughput counts
//! the pairs of all threads.
//!
//! The library's emulator backend takes only the NULL stream (one stream per device), so
//! the library runs on its CUDA backend over the project's CPU `libcuda.so.1`: the same
//! emulator underneath, with streams the threads create through the driver interface.
//! The checker is off (a real driver has none).

#[path = "common/floors.rs"]
mod floors;
#[path = "common/setup.rs"]
mod setup;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use mempool_alloc::{mempool_alloc, mempool_backend, mempool_free};
use mempool_cuda::{Cuda, LoadOptions};
use mempool_hal::Device;
use setup::run_threads;
use std::ffi::{CStr, c_void};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The CPU `libcuda.so.1` the library loads.
static LIBRARY: OnceLock<PathBuf> = OnceLock::new();

/// `n` pairs of `size` bytes on the raw stream `stream`.
fn pairs(size: usize, stream: usize, n: u64) {
    for _ in 0..n {
        // SAFETY: `stream` is a live stream of the driver the library loaded; the pointer
        // is freed once, with its size, device and stream.
        unsafe {
            let p = mempool_alloc(black_box(size), 0, stream as *mut c_void);
            assert!(!p.is_null(), "{:?}", mempool_alloc::last_error());
            mempool_free(p, size, 0, stream as *mut c_void);
        }
    }
}

fn alloc_threads(c: &mut Criterion) {
    let path = LIBRARY.get().expect("main lays the library out");
    let dev = Cuda::open_with(&LoadOptions::only(path), 0).expect("the CPU libcuda loads");
    let streams = [dev.create_stream().expect("stream"), dev.create_stream().expect("stream")];
    // Raw handles: plain integers, so the threads may share them.
    let raw: Vec<usize> = streams.iter().map(|s| s.as_raw() as usize).collect();
    let mut g = c.benchmark_group("alloc_threads");
    for (case, size) in [("2MiB", 2usize << 20), ("1000B", 1000)] {
        // The first pair on each stream makes the memory the later ones reuse.
        raw.iter().for_each(|&s| pairs(size, s, 1));
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("one-thread", case), |b| {
            b.iter_custom(|iters| run_threads(1, |_| pairs(size, raw[0], iters)))
        });
        g.throughput(Throughput::Elements(2));
        g.bench_function(BenchmarkId::new("two-threads", case), |b| {
            b.iter_custom(|iters| run_threads(2, |i| pairs(size, raw[i], iters)))
        });
    }
    g.finish();
    // SAFETY: the library's description is a NUL-terminated string it keeps for the process.
    let backend = unsafe { CStr::from_ptr(mempool_backend()) };
    println!("alloc_threads: the library ran on {}", backend.to_string_lossy());
    for s in &streams {
        dev.synchronize_stream(s).expect("sync");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = floors::floors, alloc_threads
}

fn main() {
    let home = mempool_tests::cuda_shim_home();
    LIBRARY.set(home.path().join("libcuda.so.1")).expect("set once");
    // SAFETY: `main` runs before any other thread exists; the library and the CPU libcuda
    // read their settings at their first call, below.
    unsafe {
        std::env::set_var(mempool_alloc::ENV_BACKEND, "cuda");
        std::env::set_var(mempool_cuda::ENV_LIBRARY, home.path());
        std::env::set_var(mempool_emu::ENV_GRANULARITY, (2u64 << 20).to_string());
        std::env::set_var(mempool_emu::ENV_DEVICE_MEMORY, (4u64 << 30).to_string());
        std::env::set_var(mempool_emu::ENV_CHECKER, "off");
        std::env::set_var(mempool_alloc::ENV_POOL_SIZE, "1G");
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    drop(home);
}
