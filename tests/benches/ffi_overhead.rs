//! `ffi_overhead`: the same pool calls (an allocation and its free on one stream, served by
//! same-stream reuse) through a backend and through raw function pointers into the same
//! library: the backend's added cost. Two pairs: the Ascend backend over the drop-in
//! `libacl_rt.so` (group `ffi_overhead`), and the CUDA backend over the project's CPU
//! `libcuda.so.1` (group `ffi_overhead_cuda`).

#[path = "common/floors.rs"]
mod floors;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mempool_ascend::sys::{aclError, aclrtMemPool, aclrtStream};
use mempool_ascend::{Ascend, LoadOptions};
use mempool_cuda::sys::{CUdeviceptr, fns};
use mempool_cuda::{Cuda, LoadOptions as CudaLoadOptions};
use mempool_hal::{Device, MemPool, PoolProps};
use mempool_tests::write_percentiles;
use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, aclrtMemPool, aclrtStream) -> aclError;
type Free = unsafe extern "C" fn(*mut c_void, aclrtStream) -> aclError;

const SIZE: u64 = 2 << 20;
const POOL: u64 = 1 << 30;

/// Alternating rounds, so that load from other processes hits both sides alike: each
/// side's time per pair in every round. Which side goes first swaps every round, so
/// neither always runs right after the other.
fn alternating_rounds(backend_pair: impl Fn(), raw_pair: impl Fn()) -> (Vec<u64>, Vec<u64>) {
    const ROUNDS: usize = 300;
    const PAIRS: u32 = 2000;
    fn per_pair(pair: &impl Fn()) -> u64 {
        let t = Instant::now();
        (0..PAIRS).for_each(|_| pair());
        t.elapsed().as_nanos() as u64 / u64::from(PAIRS)
    }
    let (mut backend_ns, mut raw_ns) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            backend_ns.push(per_pair(&backend_pair));
            raw_ns.push(per_pair(&raw_pair));
        } else {
            raw_ns.push(per_pair(&raw_pair));
            backend_ns.push(per_pair(&backend_pair));
        }
    }
    (backend_ns, raw_ns)
}

/// Writes both sides' rounds as `<backend> (rounds)` and `raw-ffi (rounds)` in `group`,
/// and prints the backend's added cost: the ratio of the medians over rounds.
fn report_rounds(group: &str, backend: &str, backend_ns: Vec<u64>, raw_ns: Vec<u64>) {
    let median = |ns: &[u64]| {
        let mut v = ns.to_vec();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    };
    if let (Some(b), Some(raw)) = (median(&backend_ns), median(&raw_ns)) {
        if raw > 0 {
            println!(
                "{group}: the {backend}'s added cost (medians of alternating rounds): {:+.1} % ({b} ns against {raw} ns per pair)",
                (b as f64 / raw as f64 - 1.0) * 100.0
            );
        }
    }
    write_percentiles(group, &format!("{backend} (rounds)"), "pair", backend_ns);
    write_percentiles(group, "raw-ffi (rounds)", "pair", raw_ns);
}

fn ffi_overhead(c: &mut Criterion) {
    let home = mempool_tests::shim_home();
    let dev = Ascend::open_with(&LoadOptions::only(home.path().join("lib64")), 0).expect("the drop-in library loads");
    let stream = dev.create_stream().expect("stream");
    let pool = dev.create_pool(&PoolProps::builder().max_size(POOL).build()).expect("pool");

    // SAFETY: the drop-in library has no initialization code beyond Rust statics; this
    // opens the same library the backend loaded.
    let lib = unsafe { libloading::Library::new(home.path().join("lib64").join("libacl_rt.so")) }.expect("dlopen");
    // SAFETY: the signatures are those of contract §8 (`mempool_hal::contract::c_abi`), as the library exports them.
    let (malloc, free) = unsafe {
        (
            *lib.get::<Malloc>(b"aclrtMemPoolMallocAsync").expect("symbol"),
            *lib.get::<Free>(b"aclrtMemPoolFreeAsync").expect("symbol"),
        )
    };
    // Both sides call the same pool on the same stream, so the runtime does the same work
    // and only the backend's own cost differs.
    let (raw_stream, raw_pool) = (stream.as_raw(), pool.as_raw());

    let backend_pair = || {
        let p = pool.malloc_async(black_box(SIZE), &stream).expect("malloc");
        // SAFETY: `p` is live and nothing uses it.
        unsafe { pool.free_async(p, &stream) }.expect("free");
    };
    let raw_pair = || {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, live pool and stream handles; `p` is freed once.
        unsafe {
            assert_eq!(malloc(&mut p, black_box(SIZE as usize), raw_pool, raw_stream), 0);
            assert_eq!(free(p, raw_stream), 0);
        }
    };

    let (backend_ns, raw_ns) = alternating_rounds(backend_pair, raw_pair);
    report_rounds("ffi_overhead", "ascend-backend", backend_ns, raw_ns);

    let mut g = c.benchmark_group("ffi_overhead");
    g.bench_function(BenchmarkId::new("ascend-backend", "2MiB"), |b| b.iter(backend_pair));
    g.bench_function(BenchmarkId::new("raw-ffi", "2MiB"), |b| b.iter(raw_pair));
    g.finish();
}

/// The same pair through the CUDA backend over the CPU `libcuda.so.1`, against
/// `cuMemAllocFromPoolAsync` and `cuMemFreeAsync` called through raw function pointers
/// into that library, on the backend's pool and stream.
fn ffi_overhead_cuda(c: &mut Criterion) {
    let home = mempool_tests::cuda_shim_home();
    let path = home.path().join("libcuda.so.1");
    let dev = Cuda::open_with(&CudaLoadOptions::only(&path), 0).expect("the CPU libcuda loads");
    let stream = dev.create_stream().expect("stream");
    let pool = dev.create_pool(&PoolProps::builder().max_size(POOL).build()).expect("pool");

    // SAFETY: the CPU libcuda has no initialization code beyond Rust statics; this opens
    // the same library the backend loaded (and initialized with `cuInit`).
    let lib = unsafe { libloading::Library::new(&path) }.expect("dlopen");
    // SAFETY: the types are the backend's declarations of the driver's calls
    // (`mempool_cuda::sys::fns`), which the CPU libcuda's exports are checked against.
    let (malloc, free) = unsafe {
        (
            *lib.get::<fns::cuMemAllocFromPoolAsync>(b"cuMemAllocFromPoolAsync").expect("symbol"),
            *lib.get::<fns::cuMemFreeAsync>(b"cuMemFreeAsync").expect("symbol"),
        )
    };
    // Both sides call the same pool on the same stream (a pool or stream call needs no
    // current context on the CPU libcuda, and the backend made its context current here
    // anyway), so only the backend's own cost differs.
    let (raw_stream, raw_pool) = (stream.as_raw(), pool.as_raw());

    let backend_pair = || {
        let p = pool.malloc_async(black_box(SIZE), &stream).expect("malloc");
        // SAFETY: `p` is live and nothing uses it.
        unsafe { pool.free_async(p, &stream) }.expect("free");
    };
    let raw_pair = || {
        let mut p: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, live pool and stream handles; `p` is freed once.
        unsafe {
            assert_eq!(malloc(&mut p, black_box(SIZE as usize), raw_pool, raw_stream), 0);
            assert_eq!(free(p, raw_stream), 0);
        }
    };

    let (backend_ns, raw_ns) = alternating_rounds(backend_pair, raw_pair);
    report_rounds("ffi_overhead_cuda", "cuda-backend", backend_ns, raw_ns);

    let mut g = c.benchmark_group("ffi_overhead_cuda");
    g.bench_function(BenchmarkId::new("cuda-backend", "2MiB"), |b| b.iter(backend_pair));
    g.bench_function(BenchmarkId::new("raw-ffi", "2MiB"), |b| b.iter(raw_pair));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = floors::floors, ffi_overhead, ffi_overhead_cuda
}
criterion_main!(benches);
