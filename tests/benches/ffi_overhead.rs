//! `ffi_overhead`: the same pool calls (an allocation and its free on one stream, served by
//! same-stream reuse) through the Ascend backend over the drop-in `libacl_rt.so`, and through
//! raw function pointers into the same library: the backend's added cost.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mempool_ascend::sys::{aclError, aclrtMemPool, aclrtStream};
use mempool_ascend::{Ascend, LoadOptions};
use mempool_hal::{Device, MemPool, PoolProps};
use mempool_tests::write_percentiles;
use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, aclrtMemPool, aclrtStream) -> aclError;
type Free = unsafe extern "C" fn(*mut c_void, aclrtStream) -> aclError;

const SIZE: u64 = 2 << 20;
const POOL: u64 = 1 << 30;

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

    // Alternating rounds, so that load from other processes hits both sides alike: the
    // median over rounds of each side's time per pair. Which side goes first swaps every
    // round, so neither always runs right after the other.
    const ROUNDS: usize = 300;
    const PAIRS: u32 = 2000;
    fn per_pair(pair: impl Fn()) -> u64 {
        let t = Instant::now();
        (0..PAIRS).for_each(|_| pair());
        t.elapsed().as_nanos() as u64 / u64::from(PAIRS)
    }
    let (mut backend_ns, mut raw_ns) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            backend_ns.push(per_pair(backend_pair));
            raw_ns.push(per_pair(raw_pair));
        } else {
            raw_ns.push(per_pair(raw_pair));
            backend_ns.push(per_pair(backend_pair));
        }
    }
    write_percentiles("ffi_overhead", "ascend-backend (rounds)", "pair", backend_ns);
    write_percentiles("ffi_overhead", "raw-ffi (rounds)", "pair", raw_ns);

    let mut g = c.benchmark_group("ffi_overhead");
    g.bench_function(BenchmarkId::new("ascend-backend", "2MiB"), |b| b.iter(backend_pair));
    g.bench_function(BenchmarkId::new("raw-ffi", "2MiB"), |b| b.iter(raw_pair));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = ffi_overhead
}
criterion_main!(benches);
