//! The device layer over the emulator, with its checker on: record-stream, stream-order
//! violations, the memory fraction, out of memory, empty cache and statistics.

use crate::config::{Choice, Settings};
use crate::device::{DevicePool, Pool};
use crate::error::AllocError;
use mempool_emu::Emulator;
use mempool_hal::{Device, DevicePtr};

const MIB: u64 = 1 << 20;

fn settings(small: Option<u64>) -> Settings {
    Settings {
        backend: Choice::Emulator,
        pool_size: Some(256 * MIB),
        release_threshold: None,
        small_threshold: small,
        reuse: None,
        memory_fraction: None,
        history: None,
    }
}

fn device(memory: u64, small: Option<u64>) -> DevicePool<Emulator> {
    let emu = Emulator::builder().device_memory(memory).checker(true).build().unwrap();
    DevicePool::open(0, emu, &settings(small)).unwrap()
}

/// Stream B, adopted as raw handle 0xB, ordered after everything on NULL so far.
fn side_stream(d: &DevicePool<Emulator>) -> (std::sync::Arc<Emulator>, mempool_emu::EmuStream) {
    let (emu, a) = d.parts();
    let b = emu.create_stream().unwrap();
    let ev = emu.create_event().unwrap();
    emu.record_event(&ev, &a).unwrap();
    emu.stream_wait_event(&b, &ev).unwrap();
    d.adopt(0xB, b.clone());
    (emu, b)
}

#[test]
fn a_use_announced_by_record_stream_holds_the_free_back_until_it_is_complete() {
    let d = device(1 << 30, Some(0));
    let p = d.alloc(4 * MIB, 0).unwrap();
    let (emu, b) = side_stream(&d);
    emu.memset_async(DevicePtr::from_addr(p), 7, 4 * MIB, &b).unwrap();
    assert!(d.record_stream(p, 0xB).unwrap());
    d.free(p, 4 * MIB, 0).unwrap();
    assert_eq!(d.stats().unwrap().pending_frees, 1, "the free waits for stream B");
    assert!(d.free(p, 4 * MIB, 0).unwrap_err().to_string().contains("waits for the streams"));
    emu.synchronize_stream(&b).unwrap();
    // The next call takes the free in: no violation, nothing pending.
    let q = d.alloc(MIB, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.pending_frees, s.stream_order_violations, s.allocations), (0, 0, 1));
    d.free(q, MIB, 0).unwrap();
}

#[test]
fn a_use_left_unannounced_is_a_counted_and_described_violation() {
    let d = device(1 << 30, Some(0));
    let p = d.alloc(4 * MIB, 0).unwrap();
    let (emu, b) = side_stream(&d);
    emu.memset_async(DevicePtr::from_addr(p), 7, 4 * MIB, &b).unwrap();
    crate::ffi::clear_last_error();
    d.free(p, 4 * MIB, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.stream_order_violations, s.allocations, s.used_current), (1, 0, 0));
    let why = crate::ffi::last_error().expect("the violation is described");
    assert!(why.contains("stream-order violation") && why.contains("mempool_record_stream"), "{why}");
}

#[test]
fn record_stream_of_the_allocation_stream_or_twice_adds_nothing() {
    let d = device(1 << 30, Some(0));
    let p = d.alloc(MIB, 0).unwrap();
    assert!(d.record_stream(p, 0).unwrap());
    assert!(!d.record_stream(p + 1, 0).unwrap(), "an interior pointer is not an allocation");
    let err = d.record_stream(p, 0x1234).unwrap_err();
    assert!(matches!(err, AllocError::Stream { stream: 0x1234, .. }), "{err}");
    d.free(p, MIB, 0).unwrap();
    assert_eq!(d.stats().unwrap().pending_frees, 0);
}

#[test]
fn bad_frees_change_nothing() {
    let d = device(1 << 30, None);
    let p = d.alloc(1000, 0).unwrap();
    assert!(matches!(d.free(p, 999, 0), Err(AllocError::WrongSize { allocated: 1000, given: 999, .. })));
    assert!(matches!(d.free(p + 512, 1000, 0), Err(AllocError::NotLive { .. })));
    assert!(matches!(d.free(0xdead_0000, 1000, 0), Err(AllocError::NotLive { .. })));
    assert_eq!(d.stats().unwrap().allocations, 1);
    d.free(p, 1000, 0).unwrap();
    assert!(matches!(d.free(p, 1000, 0), Err(AllocError::NotLive { .. })), "a second free");
    let s = d.stats().unwrap();
    assert_eq!((s.allocations, s.requested_current), (0, 0));
}

#[test]
fn the_memory_fraction_caps_reserved_bytes() {
    let d = device(1 << 30, Some(0));
    d.set_fraction(0.125); // 128 MiB of 1 GiB
    let mut held = Vec::new();
    let err = loop {
        match d.alloc(32 * MIB, 0) {
            Ok(p) => held.push(p),
            Err(e) => break e,
        }
        assert!(d.stats().unwrap().reserved_current <= 128 * MIB);
    };
    assert!(matches!(err, AllocError::OutOfMemory { .. }) && err.to_string().contains("fraction"), "{err}");
    let s = d.stats().unwrap();
    assert_eq!(held.len(), 4);
    assert!(s.reserved_current <= 128 * MIB && s.reserved_high <= 128 * MIB, "{s:?}");
    assert_eq!((s.memory_limit, s.oom_count, s.oom_retries), (128 * MIB, 1, 1));
    for p in held {
        d.free(p, 32 * MIB, 0).unwrap();
    }
    assert!(d.alloc(32 * MIB, 0).is_ok(), "room again");
}

#[test]
fn out_of_memory_retries_after_trimming_the_cache() {
    // 64 MiB cached on the stream, then a request that only fits once the cache is trimmed.
    let d = device(256 * MIB, Some(0));
    let ps: Vec<u64> = (0..4).map(|_| d.alloc(48 * MIB, 0).unwrap()).collect();
    for p in ps {
        d.free(p, 48 * MIB, 0).unwrap();
    }
    let big = d.alloc(250 * MIB, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.oom_retries, s.oom_count), (1, 0), "one retry, which succeeded: {s:?}");
    d.free(big, 250 * MIB, 0).unwrap();
    let err = d.alloc(1 << 62, 0).unwrap_err();
    assert!(matches!(err, AllocError::OutOfMemory { .. }), "{err}");
    assert_eq!(d.stats().unwrap().oom_count, 1);
}

#[test]
fn empty_cache_gives_every_unheld_byte_back_and_peaks_reset() {
    let d = device(1 << 30, None);
    let small: Vec<u64> = (0..100).map(|i| d.alloc(1000 + i, 0).unwrap()).collect();
    let big = d.alloc(40 * MIB, 0).unwrap();
    for (i, p) in small.into_iter().enumerate() {
        d.free(p, 1000 + i as u64, 0).unwrap();
    }
    d.free(big, 40 * MIB, 0).unwrap();
    assert!(d.stats().unwrap().reserved_current > 0, "cached until empty_cache");
    d.empty_cache(true).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.reserved_current, s.small_held_current, s.allocations), (0, 0, 0), "{s:?}");
    assert!(s.reserved_high >= 40 * MIB && s.requested_high >= 40 * MIB);
    d.reset_peak().unwrap();
    let s = d.stats().unwrap();
    assert!(s.requested_high == 0 && s.small_held_high == 0 && s.reserved_high == 0, "{s:?}");
}

#[test]
fn memory_is_host_addressable_on_the_emulator() {
    let d = device(1 << 30, None);
    let p = d.alloc(4096, 0).unwrap();
    // SAFETY: the emulator's device memory is host memory, 4096 bytes live at `p`.
    unsafe {
        std::ptr::write_bytes(p as *mut u8, 0x5a, 4096);
        assert_eq!(*(p as *const u8).add(4095), 0x5a);
    }
    d.free(p, 4096, 0).unwrap();
}

#[test]
fn through_the_layer_a_violation_is_found_when_the_block_goes_back_to_the_pool() {
    // The default layer: a 3 MiB request gets a block of its own, given back when freed.
    let d = device(1 << 30, None);
    let n = 3 * MIB + 100;
    let p = d.alloc(n, 0).unwrap();
    let (emu, b) = side_stream(&d);
    emu.memset_async(DevicePtr::from_addr(p), 7, n, &b).unwrap();
    d.free(p, n, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.stream_order_violations, s.allocations, s.requested_current), (1, 0, 0), "{s:?}");
    let q = d.alloc(n, 0).unwrap();
    d.free(q, n, 0).unwrap();
    d.empty_cache(true).unwrap();
    assert_eq!(d.stats().unwrap().reserved_current, 0, "nothing lost");
}

#[test]
fn a_free_waiting_for_streams_is_not_requested_and_highs_never_read_below_current() {
    let d = device(1 << 30, Some(0));
    let p = d.alloc(4 * MIB, 0).unwrap();
    let (emu, b) = side_stream(&d);
    emu.memset_async(DevicePtr::from_addr(p), 7, 4 * MIB, &b).unwrap();
    d.record_stream(p, 0xB).unwrap();
    let q = d.alloc(MIB, 0).unwrap();
    d.free(p, 4 * MIB, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.pending_frees, s.requested_current, s.allocations), (1, MIB, 1), "{s:?}");
    d.reset_peak().unwrap();
    let s = d.stats().unwrap();
    assert!(s.used_high >= s.used_current && s.reserved_high >= s.reserved_current, "{s:?}");
    emu.synchronize_stream(&b).unwrap();
    d.free(q, MIB, 0).unwrap();
    assert_eq!(d.stats().unwrap().pending_frees, 0);
}

#[test]
fn a_waiting_free_that_cannot_be_completed_stays_waiting() {
    // Allocated and freed on stream C, used on B; C is destroyed before the free completes.
    let d = device(1 << 30, Some(0));
    let (emu, b) = side_stream(&d);
    let c = emu.create_stream().unwrap();
    d.adopt(0xC, c.clone());
    let p = d.alloc(4 * MIB, 0xC).unwrap();
    let ev = emu.create_event().unwrap();
    emu.record_event(&ev, &c).unwrap();
    emu.stream_wait_event(&b, &ev).unwrap();
    emu.memset_async(DevicePtr::from_addr(p), 1, 4 * MIB, &b).unwrap();
    d.record_stream(p, 0xB).unwrap();
    d.free(p, 4 * MIB, 0xC).unwrap();
    emu.synchronize_device().unwrap();
    emu.destroy_stream(&c).unwrap();
    // The next allocation tries it, fails on the destroyed stream, and keeps it waiting.
    let q = d.alloc(MIB, 0).unwrap();
    let s = d.stats().unwrap();
    assert_eq!((s.pending_frees, s.allocations, s.requested_current), (1, 1, MIB), "{s:?}");
    assert!(d.empty_cache(true).is_err(), "the failure is reported");
    assert_eq!(d.stats().unwrap().pending_frees, 1, "and the free still waits");
    d.free(q, MIB, 0).unwrap();
}

#[test]
fn the_memory_fraction_does_not_refuse_what_fits_in_held_blocks() {
    let d = device(1 << 30, None);
    d.set_fraction(0.125); // 128 MiB of 1 GiB
    let first = d.alloc(512, 0).unwrap(); // a small block, with room left in it
    let mut held = Vec::new();
    while let Ok(p) = d.alloc(3 * MIB, 0) {
        held.push(p);
    }
    let before = d.stats().unwrap();
    assert!(before.reserved_current <= 128 * MIB && before.oom_count >= 1, "{before:?}");
    let small = d.alloc(512, 0).expect("carved from the small block the layer holds");
    let after = d.stats().unwrap();
    assert_eq!(after.oom_count, before.oom_count, "no out-of-memory answer for it");
    assert!(after.reserved_current <= 128 * MIB);
    for p in [first, small] {
        d.free(p, 512, 0).unwrap();
    }
    for p in held {
        d.free(p, 3 * MIB, 0).unwrap();
    }
}
