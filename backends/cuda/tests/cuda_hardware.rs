//! The backend on a real CUDA driver and device, behind a switch: with
//! `MEMPOOL_TEST_CUDA=1` (on a machine with an NVIDIA driver and a device that supports
//! memory pools) this test binary opens device 0 with the backend's normal search
//! (`MEMPOOL_CUDA_LIBRARY`, the system loader, the driver folders) and runs each trial
//! below on it. Without the switch every trial is reported as ignored ("not run"), never
//! as passed.
//!
//! `cargo test -p mempool-cuda --test cuda_hardware` with the switch set; add
//! `-- --nocapture` to see the driver version and the library used.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_cuda::{Cuda, CudaPool};
use mempool_hal::attr::{self, AttrId};
use mempool_hal::{
    Device, DevicePtr, ErrorKind, EventStatus, HostBuffer, MemPool, MemPoolExt, PoolProps, RawAttrValue, StreamStatus,
    Vendor,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The switch.
const SWITCH: &str = "MEMPOOL_TEST_CUDA";
const NOT_RUN: &str = "not run: set MEMPOOL_TEST_CUDA=1 on a machine with a CUDA driver and device";
const MIB: u64 = 1 << 20;

type Check = fn(&Cuda) -> Result<(), Failed>;

const TRIALS: &[(&str, Check)] = &[
    ("open_and_mem_info", open_and_mem_info),
    ("streams_and_events", streams_and_events),
    ("host_functions_run_in_stream_order", host_functions_run_in_stream_order),
    ("pool_alloc_free_and_statistics", pool_alloc_free_and_statistics),
    ("copies_round_trip", copies_round_trip),
    ("attributes", attributes),
    ("out_of_memory_names_the_pool", out_of_memory_names_the_pool),
    ("trim_releases_cached_memory", trim_releases_cached_memory),
    ("default_and_current_pools", default_and_current_pools),
    ("stale_handles_are_refused", stale_handles_are_refused),
];

fn main() {
    let args = Arguments::from_args();
    if std::env::var(SWITCH).as_deref() != Ok("1") {
        println!("{NOT_RUN}");
        let trials = TRIALS
            .iter()
            .map(|(name, _)| {
                Trial::test(format!("cuda_hw::{name}"), || Err(NOT_RUN.into()))
                    .with_ignored_flag(true)
                    .with_kind("not-run")
            })
            .collect();
        libtest_mimic::run(&args, trials).exit();
    }
    let dev = Cuda::open(0).unwrap_or_else(|e| panic!("{SWITCH}=1 but device 0 cannot be opened: {e}"));
    println!("CUDA driver {} at {}", dev.driver_version(), dev.runtime().path().display());
    let dev = Arc::new(dev);
    let trials = TRIALS
        .iter()
        .map(|&(name, check)| {
            let dev = Arc::clone(&dev);
            Trial::test(format!("cuda_hw::{name}"), move || check(&dev))
        })
        .collect();
    let mut args = args;
    args.test_threads = Some(1); // one device, and statistics that other trials would move
    let conclusion = libtest_mimic::run(&args, trials);
    drop(dev);
    if let Some(e) = mempool_cuda::take_drop_error() {
        eprintln!("the device's end failed: {e}");
    }
    conclusion.exit()
}

/// `Err` with `what` unless `ok`.
fn ensure(ok: bool, what: impl Into<String>) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what.into().into()) }
}

fn pool_of(dev: &Cuda, max_size: u64) -> Result<CudaPool, Failed> {
    Ok(dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(max_size).build())?)
}

/// Frees `p` of `pool` on `stream`, where every use of it was enqueued before.
fn free(pool: &CudaPool, p: DevicePtr, stream: &mempool_cuda::CudaStream) -> Result<(), Failed> {
    // SAFETY: the trials free only their own live allocations, used only on `stream` before.
    Ok(unsafe { pool.free_async(p, stream) }?)
}

fn open_and_mem_info(dev: &Cuda) -> Result<(), Failed> {
    let info = dev.mem_info()?;
    ensure(info.total > 0 && info.free <= info.total, format!("{info:?}"))?;
    ensure(dev.driver_version() >= 11_020, format!("driver {} has no pools", dev.driver_version()))?;
    ensure(dev.pool_granularity() == 2 * MIB, "granularity")
}

fn streams_and_events(dev: &Cuda) -> Result<(), Failed> {
    let (s, t) = (dev.create_stream()?, dev.create_stream()?);
    let (a, b) = (dev.create_event()?, dev.create_event()?);
    let e = dev.event_elapsed_ms(&a, &b).expect_err("never recorded");
    ensure(e.kind() == ErrorKind::NotReady, format!("elapsed before any record: {e}"))?;
    dev.record_event(&a, &s)?;
    dev.stream_wait_event(&t, &a)?;
    dev.record_event(&b, &t)?;
    dev.synchronize_event(&b)?;
    ensure(dev.query_event(&b)? == EventStatus::Complete, "b complete after its synchronization")?;
    ensure(dev.query_stream(&t)? == StreamStatus::Complete, "t complete")?;
    let ms = dev.event_elapsed_ms(&a, &b)?;
    ensure(ms >= 0.0, format!("elapsed {ms}"))?;
    dev.synchronize_device()?;
    for e in [&a, &b] {
        dev.destroy_event(e)?;
    }
    for s in [&s, &t] {
        dev.destroy_stream(s)?;
    }
    Ok(())
}

fn host_functions_run_in_stream_order(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let (release, blocked) = mpsc::channel::<()>();
    dev.launch_host_func(
        &s,
        Box::new(move || {
            let _ = blocked.recv_timeout(Duration::from_secs(10));
        }),
    )?;
    let ran = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&ran);
    dev.launch_host_func(&s, Box::new(move || flag.store(true, Ordering::SeqCst)))?;
    let pending = dev.query_stream(&s)?;
    ensure(pending == StreamStatus::NotReady, "a blocked host function keeps the stream busy")?;
    ensure(!ran.load(Ordering::SeqCst), "the second function waited for the first")?;
    release.send(()).map_err(|e| e.to_string())?;
    dev.synchronize_stream(&s)?;
    ensure(ran.load(Ordering::SeqCst), "the second function ran")?;
    Ok(dev.destroy_stream(&s)?)
}

fn pool_alloc_free_and_statistics(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let pool = pool_of(dev, 64 * MIB)?;
    ensure(pool.size() == 64 * MIB, "size")?;
    let p = pool.malloc_async(MIB, &s)?;
    let used = pool.get(attr::UsedMemCurrent)?;
    ensure(used >= MIB, format!("USED {used} after 1 MiB"))?;
    let st = pool.stats()?;
    ensure(st.reserved_current >= st.used_current, format!("{st:?}"))?;
    dev.memset_async(p, 0, MIB, &s)?;
    free(&pool, p, &s)?;
    dev.synchronize_stream(&s)?;
    let used = pool.get(attr::UsedMemCurrent)?;
    ensure(used == 0, format!("USED {used} after the free"))?;
    // Threshold 0: the synchronization released the cached memory.
    let reserved = pool.get(attr::ReservedMemCurrent)?;
    ensure(reserved == 0, format!("RESERVED {reserved} after a synchronization with threshold 0"))?;
    dev.destroy_pool(&pool)?;
    Ok(dev.destroy_stream(&s)?)
}

fn copies_round_trip(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let pool = pool_of(dev, 64 * MIB)?;
    let (p, q) = (pool.malloc_async(4096, &s)?, pool.malloc_async(4096, &s)?);
    dev.memset_async(p, 0xab, 4096, &s)?;
    dev.memcpy_h2d_async(p, b"hello", &s)?;
    dev.memcpy_d2d_async(q, p, 4096, &s)?;
    let out = HostBuffer::new(8);
    dev.memcpy_d2h_async(&out, q, &s)?;
    dev.synchronize_stream(&s)?;
    ensure(out.to_vec() == b"hello\xab\xab\xab", format!("{:?}", out.to_vec()))?;
    let big: Vec<u8> = (0..(8 << 20)).map(|i: u32| (i % 251) as u8).collect();
    let r = pool.malloc_async(big.len() as u64, &s)?;
    dev.memcpy_h2d_async(r, &big, &s)?;
    let back = HostBuffer::new(big.len());
    dev.memcpy_d2h_async(&back, r, &s)?;
    dev.synchronize_stream(&s)?;
    ensure(back.to_vec() == big, "8 MiB round trip")?;
    let st = dev.staging();
    ensure(st.in_flight == 0 && st.cached > 0, format!("{st:?}"))?;
    for x in [p, q, r] {
        free(&pool, x, &s)?;
    }
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    Ok(dev.destroy_stream(&s)?)
}

fn attributes(dev: &Cuda) -> Result<(), Failed> {
    let pool = pool_of(dev, 64 * MIB)?;
    for id in 1..=3 {
        let v = pool.get_attr_raw(AttrId(id))?;
        ensure(v == RawAttrValue::U32(1), format!("flag {id} of a fresh pool: {v:?}"))?;
    }
    pool.set(attr::ReuseAllowOpportunistic, false)?;
    ensure(!pool.get(attr::ReuseAllowOpportunistic)?, "flag off")?;
    pool.set(attr::ReleaseThreshold, 32 * MIB)?;
    ensure(pool.get(attr::ReleaseThreshold)? == 32 * MIB, "threshold")?;
    let e = pool.set(attr::ReleaseThreshold, 64 * MIB + 1).expect_err("above the size");
    ensure((e.kind(), e.code(), e.vendor()) == (ErrorKind::InvalidParam, 1, Vendor::Cuda), e.to_string())?;
    let e = pool.set_attr_raw(AttrId::USED_MEM_CURRENT, RawAttrValue::U64(0)).expect_err("read-only");
    ensure(e.kind() == ErrorKind::ReadOnly, e.to_string())?;
    pool.reset(attr::UsedMemHigh)?;
    pool.reset(attr::ReservedMemHigh)?;
    Ok(dev.destroy_pool(&pool)?)
}

fn out_of_memory_names_the_pool(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let pool = pool_of(dev, 4 * MIB)?;
    let e = pool.malloc_async(8 * MIB, &s).expect_err("8 MiB from a 4 MiB pool");
    ensure((e.kind(), e.code()) == (ErrorKind::OutOfMemory, 2), e.to_string())?;
    let oom = e.oom().ok_or("out of memory without the pool's numbers")?;
    ensure(oom.pool_size == 4 * MIB && oom.requested == 8 * MIB, format!("{oom:?}"))?;
    dev.destroy_pool(&pool)?;
    Ok(dev.destroy_stream(&s)?)
}

fn trim_releases_cached_memory(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let pool = pool_of(dev, 64 * MIB)?;
    pool.set(attr::ReleaseThreshold, 64 * MIB)?;
    let p = pool.malloc_async(16 * MIB, &s)?;
    free(&pool, p, &s)?;
    dev.synchronize_stream(&s)?;
    let kept = pool.get(attr::ReservedMemCurrent)?;
    ensure(kept >= 16 * MIB, format!("RESERVED {kept} kept under the threshold"))?;
    pool.trim_to(0)?;
    let left = pool.get(attr::ReservedMemCurrent)?;
    ensure(left == 0, format!("RESERVED {left} after trim_to(0)"))?;
    dev.destroy_pool(&pool)?;
    Ok(dev.destroy_stream(&s)?)
}

fn default_and_current_pools(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    let default = dev.default_pool()?;
    ensure(!default.is_owned(), "the default pool is the driver's")?;
    ensure(dev.current_pool()?.as_raw() == default.as_raw(), "the default is current")?;
    let pool = pool_of(dev, 64 * MIB)?;
    dev.set_current_pool(&pool)?;
    ensure(dev.current_pool()?.as_raw() == pool.as_raw(), "set_current_pool")?;
    let p = dev.malloc_async_current(MIB, &s)?;
    let used = pool.get(attr::UsedMemCurrent)?;
    ensure(used >= MIB, format!("cuMemAllocAsync used the current pool: USED {used}"))?;
    free(&pool, p, &s)?;
    dev.synchronize_stream(&s)?;
    dev.set_current_pool(&default)?;
    dev.destroy_pool(&pool)?;
    let e = dev.destroy_pool(&default).expect_err("the default pool is not ours");
    ensure(e.kind() == ErrorKind::InvalidParam, e.to_string())?;
    Ok(dev.destroy_stream(&s)?)
}

fn stale_handles_are_refused(dev: &Cuda) -> Result<(), Failed> {
    let s = dev.create_stream()?;
    dev.destroy_stream(&s)?;
    let e = dev.synchronize_stream(&s).expect_err("destroyed");
    ensure((e.kind(), e.code()) == (ErrorKind::InvalidHandle, 400), e.to_string())?;
    let pool = pool_of(dev, 4 * MIB)?;
    dev.destroy_pool(&pool)?;
    let e = pool.get(attr::UsedMemCurrent).expect_err("destroyed pool");
    ensure((e.kind(), e.code()) == (ErrorKind::InvalidHandle, 400), e.to_string())
}
