//! `ExpandableSegment` on the emulator (contract §14): a range that grows and shrinks by
//! whole chunks at its end, with addresses that never move, and work in flight.

#![cfg(feature = "emu")]

use mempool::backend::{Emulator, ExecutionMode};
use mempool::prelude::*;
use mempool::{ErrorKind, ExpandableSegment, HostBuffer, Stream};

const MIB: u64 = 1 << 20;

fn emulator(mode: ExecutionMode) -> Emulator {
    Emulator::builder().device_memory(64 * MIB).granularity(2 * MIB).mode(mode).checker(true).build().expect("emulator")
}

#[test]
fn grows_keeps_its_bytes_and_shrinks_from_the_end() {
    for mode in [ExecutionMode::Threaded, ExecutionMode::Deferred] {
        let dev = emulator(mode);
        let stream = Stream::new(&dev).expect("stream");
        let mut seg = ExpandableSegment::new(&dev, 40 * MIB, Some(4 * MIB)).expect("segment");
        assert_eq!((seg.capacity(), seg.chunk(), seg.len()), (40 * MIB, 4 * MIB, 0));
        let base = seg.base();
        for k in 0..5u8 {
            seg.grow(1).expect("one more chunk");
            assert_eq!(seg.base(), base, "the base never moves");
            let at = base.checked_add(u64::from(k) * 4 * MIB + 100).expect("in range");
            dev.memcpy_h2d_async(at, &[k + 1; 64], stream.raw()).expect("copy in");
        }
        assert_eq!(seg.len(), 20 * MIB);
        // A copy across the border of two chunks.
        let border = base.checked_add(8 * MIB - 32).expect("in range");
        dev.memcpy_h2d_async(border, &[0xab; 64], stream.raw()).expect("copy across chunks");
        for k in 0..5u8 {
            let out = HostBuffer::new(64);
            let at = base.checked_add(u64::from(k) * 4 * MIB + 100).expect("in range");
            dev.memcpy_d2h_async(&out, at, stream.raw()).expect("copy out");
            stream.synchronize().expect("sync");
            assert_eq!(out.to_vec(), vec![k + 1; 64], "chunk {k} ({mode:?})");
        }
        let out = HostBuffer::new(64);
        dev.memcpy_d2h_async(&out, border, stream.raw()).expect("copy out across chunks");
        stream.synchronize().expect("sync");
        assert_eq!(out.to_vec(), vec![0xab; 64]);
        // The device's memory follows the mapped chunks.
        let free_before = dev.mem_info().expect("mem info").free;
        seg.shrink(6 * MIB).expect("one whole chunk (rounded down)");
        assert_eq!(seg.len(), 16 * MIB);
        assert_eq!(dev.mem_info().expect("mem info").free, free_before + 4 * MIB);
        // What was unmapped is refused now.
        let gone = base.checked_add(16 * MIB).expect("in range");
        assert!(dev.memcpy_h2d_async(gone, &[1; 8], stream.raw()).is_err(), "the unmapped chunk is refused");
        stream.synchronize().expect("sync");
    }
}

#[test]
fn refuses_what_does_not_fit_and_leaves_itself_unchanged() {
    let dev = emulator(ExecutionMode::Threaded);
    let mut seg = ExpandableSegment::new(&dev, 8 * MIB, None).expect("segment");
    let chunk = seg.chunk();
    assert_eq!(
        ExpandableSegment::new(&dev, 8 * MIB, Some(3 * MIB)).map(|_| ()).unwrap_err().kind(),
        ErrorKind::InvalidParam
    );
    assert_eq!(ExpandableSegment::new(&dev, 0, None).map(|_| ()).unwrap_err().kind(), ErrorKind::InvalidParam);
    assert_eq!(ExpandableSegment::new(&dev, u64::MAX, None).map(|_| ()).unwrap_err().kind(), ErrorKind::InvalidParam);
    assert_eq!(seg.grow(seg.capacity() + 1).unwrap_err().kind(), ErrorKind::InvalidParam);
    assert!(seg.is_empty());
    assert_eq!(seg.shrink(chunk).unwrap_err().kind(), ErrorKind::InvalidParam);
    // Out of device memory half way: the chunks this call mapped are given back.
    let big = ExpandableSegment::new(&dev, 128 * MIB, Some(2 * MIB));
    let mut big = big.expect("reserving address space takes no device memory");
    let free = dev.mem_info().expect("mem info").free;
    assert!(big.grow(128 * MIB).is_err(), "more than the device's 64 MiB");
    assert_eq!((big.len(), dev.mem_info().expect("mem info").free), (0, free), "nothing kept");
    seg.grow(chunk).expect("a chunk still fits");
}

#[test]
fn dropping_gives_everything_back_after_queued_work() {
    let dev = emulator(ExecutionMode::Threaded);
    let stream = Stream::new(&dev).expect("stream");
    let free = dev.mem_info().expect("mem info").free;
    let out = HostBuffer::new(16);
    {
        let mut seg = ExpandableSegment::new(&dev, 16 * MIB, Some(2 * MIB)).expect("segment");
        seg.grow(8 * MIB).expect("grow");
        let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
        let g = std::sync::Arc::clone(&gate);
        stream
            .launch_host_func(move || {
                g.wait();
            })
            .expect("host function");
        let at = seg.base().checked_add(6 * MIB).expect("in range");
        dev.memcpy_h2d_async(at, &[9; 16], stream.raw()).expect("queued copy in");
        dev.memcpy_d2h_async(&out, at, stream.raw()).expect("queued copy out");
        drop(seg); // unmapped and freed while both copies wait behind the host function
        gate.wait();
    }
    stream.synchronize().expect("the queued copies ran on the chunk they were queued on");
    assert_eq!(out.to_vec(), vec![9; 16]);
    assert_eq!(dev.mem_info().expect("mem info").free, free, "every chunk given back");
}
