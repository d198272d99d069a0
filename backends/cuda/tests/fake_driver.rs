//! The backend over a CPU stand-in for the driver (`tests/fake/driver.c`): the calls it
//! makes, in order, with the driver's types; the codes it maps; the primary context and
//! the staging buffers it gives back; and its own rules where the driver has none (the
//! pool size on drivers before 12.2, the retry after out of memory).
//!
//! Each test loads a fresh copy of the fake, so tests running side by side share nothing.

mod common;

use common::{Counters, fake_driver};
use mempool_cuda::{Cuda, LoadOptions, POOL_GRANULARITY};
use mempool_hal::attr::{self, AttrId};
use mempool_hal::{
    AllocationType, Device, DevicePtr, ErrorKind, EventStatus, HandleType, HostBuffer, MemPool, MemPoolExt, PoolProps,
    RawAttrValue, StreamStatus, Vendor,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const MIB: u64 = 1 << 20;

fn open(defines: &[&str]) -> (Cuda, Counters, PathBuf) {
    let lib = fake_driver(defines);
    let dev = Cuda::open_with(&LoadOptions::only(&lib), 0).expect("the fake driver opens");
    let counters = Counters::of(&lib);
    (dev, counters, lib)
}

fn pool_of(dev: &Cuda, max_size: u64) -> mempool_cuda::CudaPool {
    dev.create_pool(&PoolProps::builder().device(0).max_size(max_size).build()).expect("a pool")
}

/// Frees `p` of `pool` on `s`: every use of it in these tests is ordered before, on `s`.
fn free(pool: &mempool_cuda::CudaPool, p: DevicePtr, s: &mempool_cuda::CudaStream) {
    // SAFETY: `p` is a live allocation of `pool`, used only on `s` before this.
    unsafe { pool.free_async(p, s) }.expect("the free")
}

#[test]
fn open_retains_the_primary_context_and_the_last_handle_releases_it() {
    let (dev, counters, lib) = open(&[]);
    assert_eq!(dev.driver_version(), 12_060);
    assert!(dev.driver_limits_pool_size());
    assert_eq!(dev.runtime().path(), lib);
    assert_eq!(dev.id(), 0);
    assert_eq!(dev.pool_granularity(), 2 * MIB);
    assert_eq!(POOL_GRANULARITY, 2 * MIB);
    let info = dev.mem_info().unwrap();
    assert_eq!((info.free, info.total), (1 << 30, 1 << 30));
    assert_eq!(counters.primary_refs(), 1);
    let second = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap();
    assert_eq!(counters.primary_refs(), 2);
    assert_eq!(second.context_raw(), dev.context_raw());
    drop(second);
    assert_eq!(counters.primary_refs(), 1);
    let pool = pool_of(&dev, 4 * MIB);
    drop(dev);
    assert_eq!(counters.primary_refs(), 1, "the pool keeps the instance");
    drop(pool);
    assert_eq!(counters.primary_refs(), 0);
}

#[test]
fn a_device_that_does_not_exist_is_invalid_device_with_the_drivers_words() {
    let lib = fake_driver(&[]);
    let err = Cuda::open_with(&LoadOptions::only(&lib), 3).unwrap_err();
    assert_eq!(
        (err.kind(), err.code(), err.vendor(), err.op()),
        (ErrorKind::InvalidDevice, 101, Vendor::Cuda, "cuDeviceGet")
    );
    assert_eq!(err.message(), "CUDA_ERROR_INVALID_DEVICE: invalid device ordinal");
    assert_eq!(
        err.to_string(),
        "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE: invalid device ordinal (invalid device, CUDA code 101)"
    );
    assert_eq!(Counters::of(&lib).primary_refs(), 0);
}

#[test]
fn a_device_without_pools_is_not_supported() {
    let lib = fake_driver(&["FAKE_POOLS=0"]);
    let err = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 801, "cuDeviceGetAttribute"));
    assert!(err.message().contains("does not support stream-ordered memory pools"), "{}", err.message());
    assert_eq!(Counters::of(&lib).primary_refs(), 0, "nothing retained");
    // A driver that does not know the attribute has no pools either.
    let lib = fake_driver(&["FAKE_POOLS=-1"]);
    let err = Cuda::open_with(&LoadOptions::only(&lib), 0).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::NotSupported, 801));
}

#[test]
fn a_driver_without_the_pool_calls_is_not_supported_naming_the_symbol() {
    let (dev, _counters, _) = open(&["FAKE_NO_POOL_CALLS"]);
    let s = dev.create_stream().expect("the stream calls exist");
    let err = dev.create_pool(&PoolProps::builder().max_size(4 * MIB).build()).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 801, "cuMemPoolCreate"));
    assert!(err.message().contains("has no symbol `cuMemPoolCreate`"), "{}", err.message());
    let err = dev.default_pool().unwrap_err();
    assert_eq!(err.op(), "cuDeviceGetDefaultMemPool");
    let err = dev.malloc_async_current(16, &s).unwrap_err();
    assert_eq!((err.kind(), err.op()), (ErrorKind::NotSupported, "cuMemAllocAsync"));
    dev.destroy_stream(&s).unwrap();
}

#[test]
fn streams_events_and_host_functions() {
    let (dev, _counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let t = dev.create_stream().unwrap();
    let (a, b) = (dev.create_event().unwrap(), dev.create_event().unwrap());
    let err = dev.event_elapsed_ms(&a, &b).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::NotReady, 400), "never recorded: {err}");
    dev.record_event(&a, &s).unwrap();
    dev.stream_wait_event(&t, &a).unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&ran);
    dev.launch_host_func(&t, Box::new(move || flag.store(true, Ordering::SeqCst))).unwrap();
    dev.record_event(&b, &t).unwrap();
    dev.synchronize_event(&b).unwrap();
    assert!(ran.load(Ordering::SeqCst));
    assert_eq!(dev.query_event(&b).unwrap(), EventStatus::Complete);
    assert_eq!(dev.query_stream(&t).unwrap(), StreamStatus::Complete);
    assert_eq!(dev.event_elapsed_ms(&a, &b).unwrap(), 0.5);
    // A panicking host function does not unwind into the driver.
    dev.launch_host_func(&s, Box::new(|| panic!("inside a host function"))).unwrap();
    dev.synchronize_stream(&s).unwrap();
    dev.synchronize_device().unwrap();
    dev.destroy_event(&a).unwrap();
    let err = dev.record_event(&a, &s).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.vendor()), (ErrorKind::InvalidHandle, 400, Vendor::Cuda));
    let err = dev.destroy_event(&a).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidHandle, 400));
    dev.destroy_stream(&s).unwrap();
    assert_eq!(dev.synchronize_stream(&s).unwrap_err().kind(), ErrorKind::InvalidHandle);
    // A handle of another instance is foreign.
    let (other, _c, _) = open(&[]);
    let foreign = other.create_stream().unwrap();
    let err = dev.synchronize_stream(&foreign).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidHandle, 400));
    assert_eq!(foreign, foreign.clone());
    assert_ne!(foreign, t);
    dev.destroy_event(&b).unwrap();
    dev.destroy_stream(&t).unwrap();
    other.destroy_stream(&foreign).unwrap();
}

#[test]
fn copies_go_through_reused_page_locked_buffers_given_back_at_the_end() {
    let (dev, counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let pool = pool_of(&dev, 128 * MIB);
    let p = pool.malloc_async(4096, &s).unwrap();
    let q = pool.malloc_async(4096, &s).unwrap();
    dev.memset_async(p, 0xab, 4096, &s).unwrap();
    dev.memcpy_h2d_async(p, b"hello", &s).unwrap();
    dev.memcpy_d2d_async(q, p, 4096, &s).unwrap();
    let out = HostBuffer::new(8);
    dev.memcpy_d2h_async(&out, q, &s).unwrap();
    dev.synchronize_stream(&s).unwrap();
    assert_eq!(out.to_vec(), b"hello\xab\xab\xab");
    let st = dev.staging();
    assert_eq!((st.allocations, st.in_flight, st.cached), (1, 0, 1), "one 4 KiB buffer, reused: {st:?}");
    assert_eq!(counters.host_live(), 1);
    // Nothing copies to or from an address the driver does not know; the buffer comes back.
    let bad = DevicePtr::from_addr(0x10);
    let err = dev.memcpy_h2d_async(bad, b"x", &s).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::InvalidPointer, 1, "cuMemcpyHtoDAsync_v2"));
    assert_eq!(dev.memcpy_d2h_async(&out, bad, &s).unwrap_err().kind(), ErrorKind::InvalidPointer);
    assert_eq!(dev.memcpy_d2d_async(q, bad, 8, &s).unwrap_err().kind(), ErrorKind::InvalidPointer);
    assert_eq!(dev.memset_async(bad, 0, 8, &s).unwrap_err().kind(), ErrorKind::InvalidPointer);
    assert_eq!(dev.staging().in_flight, 0);
    // Empty copies enqueue nothing.
    dev.memcpy_h2d_async(bad, b"", &s).unwrap();
    dev.memcpy_d2d_async(bad, bad, 0, &s).unwrap();
    // A copy larger than the cache keeps is freed once it has run (on the next copy).
    let big = vec![7u8; (64 << 20) + 1];
    let r = pool.malloc_async(big.len() as u64, &s).unwrap_or_else(|e| panic!("{e}"));
    dev.memcpy_h2d_async(r, &big, &s).unwrap();
    dev.memcpy_h2d_async(p, b"x", &s).unwrap();
    let st = dev.staging();
    assert_eq!((st.allocations, st.frees), (2, 1), "{st:?}");
    for x in [p, q, r] {
        free(&pool, x, &s);
    }
    dev.destroy_pool(&pool).unwrap();
    drop(pool);
    drop(dev);
    assert_eq!(counters.host_live(), 0, "the cache is freed at the end");
    assert_eq!(counters.pools_live(), 0);
}

#[test]
fn attributes_travel_as_the_drivers_int_and_cuuint64() {
    let (dev, _counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let pool = pool_of(&dev, 8 * MIB);
    assert_eq!(pool.size(), 8 * MIB);
    // The driver's defaults: every reuse flag on.
    for id in 1..=3 {
        assert_eq!(pool.get_attr_raw(AttrId(id)).unwrap(), RawAttrValue::U32(1), "flag {id}");
    }
    pool.set(attr::ReuseAllowOpportunistic, false).unwrap();
    assert!(!pool.get(attr::ReuseAllowOpportunistic).unwrap());
    pool.set_attr_raw(AttrId::REUSE_ALLOW_OPPORTUNISTIC, RawAttrValue::U32(7)).unwrap();
    assert_eq!(pool.get_attr_raw(AttrId::REUSE_ALLOW_OPPORTUNISTIC).unwrap(), RawAttrValue::U32(1), "stored as 1");
    pool.set(attr::ReleaseThreshold, 6 * MIB).unwrap();
    assert_eq!(pool.get(attr::ReleaseThreshold).unwrap(), 6 * MIB);
    // The contract's rules, in the driver's numbering.
    let check = |r: mempool_hal::Result<()>, kind| {
        let e = r.unwrap_err();
        assert_eq!((e.kind(), e.code(), e.vendor(), e.op()), (kind, 1, Vendor::Cuda, "cuMemPoolSetAttribute"), "{e}");
    };
    check(pool.set(attr::ReleaseThreshold, 8 * MIB + 1), ErrorKind::InvalidParam);
    check(pool.set_attr_raw(AttrId::USED_MEM_CURRENT, RawAttrValue::U64(0)), ErrorKind::ReadOnly);
    check(pool.set_attr_raw(AttrId::USED_MEM_HIGH, RawAttrValue::U64(5)), ErrorKind::InvalidParam);
    check(pool.set_attr_raw(AttrId(1), RawAttrValue::U64(1)), ErrorKind::InvalidParam);
    check(pool.set_attr_raw(AttrId(9), RawAttrValue::U64(1)), ErrorKind::UnknownAttribute);
    let e = pool.get_attr_raw(AttrId(0)).unwrap_err();
    assert_eq!((e.kind(), e.code(), e.op()), (ErrorKind::UnknownAttribute, 1, "cuMemPoolGetAttribute"));
    // Statistics; a high-water mark resets to the current value (the driver's rule).
    let a = pool.malloc_async(3 * MIB, &s).unwrap();
    let b = pool.malloc_async(MIB, &s).unwrap();
    let st = pool.stats().unwrap();
    assert_eq!((st.used_current, st.reserved_current, st.used_high), (6 * MIB, 6 * MIB, 6 * MIB));
    free(&pool, a, &s);
    pool.reset(attr::UsedMemHigh).unwrap();
    assert_eq!(pool.get(attr::UsedMemHigh).unwrap(), 2 * MIB);
    free(&pool, b, &s);
    dev.synchronize_stream(&s).unwrap();
    assert_eq!(pool.get(attr::ReservedMemCurrent).unwrap(), 6 * MIB, "kept: threshold 6 MiB");
    // Trim below USED is no error on CUDA: the driver releases what it can.
    let c = pool.malloc_async(MIB, &s).unwrap();
    pool.trim_to(0).unwrap();
    let st = pool.stats().unwrap();
    assert_eq!((st.used_current, st.reserved_current), (2 * MIB, 2 * MIB), "{st:?}");
    free(&pool, c, &s);
    dev.destroy_pool(&pool).unwrap();
    let e = pool.get(attr::UsedMemCurrent).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidHandle, 400));
    let e = pool.malloc_async(1, &s).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidHandle, 400));
    assert_eq!(pool.trim_to(0).unwrap_err().kind(), ErrorKind::InvalidHandle);
    assert_eq!(dev.destroy_pool(&pool).unwrap_err().kind(), ErrorKind::InvalidHandle);
}

#[test]
fn pool_properties_are_validated_and_renumbered() {
    let (dev, counters, _) = open(&["FAKE_HANDLE_TYPES=0"]);
    let s = dev.create_stream().unwrap();
    let check = |props: PoolProps, kind, code| {
        let e = dev.create_pool(&props).unwrap_err();
        assert_eq!((e.kind(), e.code(), e.vendor()), (kind, code, Vendor::Cuda), "{props:?}: {e}");
    };
    check(PoolProps::builder().alloc_type(AllocationType(1)).build(), ErrorKind::InvalidParam, 1);
    check(PoolProps::builder().max_size(2 << 30).build(), ErrorKind::InvalidParam, 1);
    check(PoolProps::builder().device(1).build(), ErrorKind::InvalidDevice, 101);
    check(PoolProps::builder().handle_type(HandleType::POSIX).build(), ErrorKind::NotSupported, 801);
    assert_eq!(counters.pools_live(), 0);
    // Max size 0 is the whole device, rounded down.
    let whole = dev.create_pool(&PoolProps::default()).unwrap();
    assert_eq!(whole.size(), 1 << 30);
    // Size 0 and sizes that overflow when rounded are refused before the driver.
    for size in [0, u64::MAX - 1] {
        let e = whole.malloc_async(size, &s).unwrap_err();
        assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidParam, 1), "{size}");
    }
    // SAFETY: a null pointer is refused before the driver sees it.
    let e = unsafe { whole.free_async(DevicePtr::NULL, &s) }.unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidPointer, 1));
    // SAFETY: the fake driver checks every pointer: an unknown one is refused.
    let e = unsafe { whole.free_async(DevicePtr::from_addr(0x1000), &s) }.unwrap_err();
    assert_eq!((e.kind(), e.code(), e.op()), (ErrorKind::InvalidPointer, 1, "cuMemFreeAsync"));
    dev.destroy_pool(&whole).unwrap();
}

#[test]
fn out_of_memory_with_cached_bytes_is_retried_after_a_trim() {
    let (dev, _counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let pool = pool_of(&dev, 8 * MIB);
    pool.set(attr::ReleaseThreshold, 8 * MIB).unwrap(); // keep everything at synchronizations
    let a = pool.malloc_async(4 * MIB, &s).unwrap();
    free(&pool, a, &s);
    // 4 MiB cached, not reusable for 6 MiB: the driver says out of memory, the trim makes room.
    let b = pool.malloc_async(6 * MIB, &s).unwrap();
    assert_eq!(pool.oom_retries(), 1);
    assert_eq!(pool.stats().unwrap().reserved_current, 6 * MIB);
    // No room even trimmed to USED: no retry, the pool's numbers in the error.
    let e = pool.malloc_async(6 * MIB, &s).unwrap_err();
    assert_eq!((e.kind(), e.code(), e.vendor()), (ErrorKind::OutOfMemory, 2, Vendor::Cuda));
    let oom = e.oom().expect("the pool's numbers");
    assert_eq!((oom.requested, oom.pool_size, oom.stats.used_current), (6 * MIB, 8 * MIB, 6 * MIB));
    assert_eq!(oom.device_free, None, "the pool, not the device, is full");
    assert!(e.message().contains("CUDA_ERROR_OUT_OF_MEMORY: out of memory; no cached bytes"), "{}", e.message());
    assert_eq!(pool.oom_retries(), 1);
    free(&pool, b, &s);
    dev.destroy_pool(&pool).unwrap();
}

#[test]
fn drivers_before_12_2_get_the_pool_size_enforced_by_the_backend() {
    let (dev, _counters, _) = open(&["FAKE_VERSION=12000"]);
    assert!(!dev.driver_limits_pool_size());
    let s = dev.create_stream().unwrap();
    // The fake refuses a non-zero maxSize as a reserved byte: the backend passes 0.
    let pool = pool_of(&dev, 4 * MIB);
    pool.set(attr::ReleaseThreshold, 4 * MIB).unwrap();
    let a = pool.malloc_async(2 * MIB, &s).unwrap();
    let b = pool.malloc_async(2 * MIB, &s).unwrap();
    let e = pool.malloc_async(MIB, &s).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::OutOfMemory, 2), "{e}");
    assert!(e.message().contains("does not read maxSize"), "{}", e.message());
    assert_eq!(pool.oom_retries(), 1);
    let st = pool.stats().unwrap();
    assert_eq!((st.used_current, st.reserved_current), (4 * MIB, 4 * MIB), "the refused block was given back");
    // 2 MiB live and 4 MiB asked: above the pool, whatever is trimmed.
    free(&pool, a, &s);
    let e = pool.malloc_async(3 * MIB, &s).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
    assert_eq!(pool.oom_retries(), 2);
    // Nothing live: a cached block that only a trim releases makes way for the retry.
    free(&pool, b, &s);
    let d = pool.malloc_async(4 * MIB, &s).unwrap();
    assert_eq!(pool.oom_retries(), 3);
    assert_eq!(pool.stats().unwrap().reserved_current, 4 * MIB);
    free(&pool, d, &s);
    dev.destroy_pool(&pool).unwrap();
    // Unlimited pools (max size 0) and the device's own pools are not checked.
    let whole = dev.create_pool(&PoolProps::default()).unwrap();
    let p = whole.malloc_async(8 * MIB, &s).unwrap();
    free(&whole, p, &s);
    dev.destroy_pool(&whole).unwrap();
}

#[test]
fn the_default_and_current_pools() {
    let (dev, counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let default = dev.default_pool().unwrap();
    assert!(!default.is_owned());
    assert_eq!(default.size(), 1 << 30);
    let e = dev.destroy_pool(&default).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidParam, 1));
    assert_eq!(dev.current_pool().unwrap().as_raw(), default.as_raw());
    let pool = pool_of(&dev, 8 * MIB);
    assert!(pool.is_owned());
    dev.set_current_pool(&pool).unwrap();
    let current = dev.current_pool().unwrap();
    assert_eq!(current.as_raw(), pool.as_raw());
    assert!(!current.is_owned());
    let p = dev.malloc_async_current(MIB, &s).unwrap();
    assert_eq!(pool.get(attr::UsedMemCurrent).unwrap(), 2 * MIB);
    free(&dev.current_pool().unwrap(), p, &s);
    assert_eq!(pool.get(attr::UsedMemCurrent).unwrap(), 0);
    assert_eq!(dev.malloc_async_current(0, &s).unwrap_err().kind(), ErrorKind::InvalidParam);
    dev.destroy_pool(&pool).unwrap();
    assert_eq!(counters.pools_live(), 0);
    assert_eq!(dev.current_pool().unwrap().as_raw(), default.as_raw(), "the default is current again");
    let e = dev.set_current_pool(&pool).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidHandle, 400));
    // The handle of the current pool went stale with the pool it named.
    let e = current.get(attr::UsedMemCurrent).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidHandle, 400));
    // The default pool allocates too.
    let q = default.malloc_async(16, &s).unwrap();
    free(&default, q, &s);
}

#[test]
fn errors_at_the_end_of_an_instance_are_kept() {
    let (dev, _counters, _) = open(&["FAKE_NO_RELEASE"]);
    drop(dev);
    let e = mempool_cuda::take_drop_error().expect("the missing release is kept");
    assert_eq!((e.kind(), e.code(), e.op()), (ErrorKind::NotSupported, 801, "cuDevicePrimaryCtxRelease_v2"));
    assert!(e.message().starts_with("at the end of the instance of device 0: "), "{}", e.message());
    assert!(mempool_cuda::take_drop_error().is_none(), "taken once");
}

#[test]
fn the_backend_works_from_any_thread() {
    let (dev, _counters, _) = open(&[]);
    let s = dev.create_stream().unwrap();
    let pool = Arc::new(pool_of(&dev, 64 * MIB));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let (dev, pool, s) = (dev.clone(), Arc::clone(&pool), s.clone());
            std::thread::spawn(move || {
                let p = pool.malloc_async(MIB, &s).unwrap();
                dev.memcpy_h2d_async(p, &[i; 16], &s).unwrap();
                let out = HostBuffer::new(16);
                dev.memcpy_d2h_async(&out, p, &s).unwrap();
                dev.synchronize_stream(&s).unwrap();
                free(&pool, p, &s);
                out.to_vec()
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        assert_eq!(t.join().unwrap(), vec![i as u8; 16]);
    }
    dev.destroy_pool(&pool).unwrap();
}

#[test]
fn a_driver_without_the_virtual_memory_calls_is_not_supported_naming_the_symbol() {
    use mempool_hal::{Granularity, Physical, VirtualMemory};
    let (dev, _, _) = open(&[]);
    let err = dev.granularity(Granularity::Minimum).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 801, "cuMemGetAllocationGranularity"));
    let err = dev.reserve(2 * MIB, 0, None).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 801, "cuMemAddressReserve"));
    let err = dev.create_physical(2 * MIB).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.op()), (ErrorKind::NotSupported, 801, "cuMemCreate"));
    // A handle the instance never created is refused before any driver call.
    let err = dev.release_physical(Physical { handle: 0x1234, size: 2 * MIB }).unwrap_err();
    assert_eq!((err.kind(), err.code(), err.vendor()), (ErrorKind::InvalidParam, 1, Vendor::Cuda));
    // The rest of the backend still works.
    let s = dev.create_stream().expect("a stream");
    dev.synchronize_stream(&s).expect("synchronized");
}
