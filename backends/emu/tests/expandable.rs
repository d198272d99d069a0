//! An expandable segment, as PyTorch's and torch_npu's caching allocators build one: one
//! range reserved far larger than needed, grown a physical chunk at a time (create, map at
//! the end, set access) while copies and host functions run on two streams, then shrunk
//! by unmapping and releasing a chunk that queued work has not reached yet. Every byte is
//! checked against a model, with the checker on, in threaded and deferred modes, on
//! Ascend's profile (read-write at map) and CUDA's (no access until set). It never faults.

use mempool_emu::ExecutionMode::{self, Deferred, Threaded};
use mempool_emu::{Emulator, Profile};
use mempool_hal::{Access, Device, DevicePtr, HostBuffer, Mapping, Physical, Result, VirtualMemory};
use rstest::rstest;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const G: u64 = 2 << 20;
/// Chunks the segment grows to.
const N: u64 = 12;

fn pattern(i: u64) -> Vec<u8> {
    (0..G).map(|j| ((j * 31 + i * 17) % 251) as u8).collect()
}

/// A host function that blocks its stream until the test opens it (at most 20 s).
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn wait(&self) -> bool {
        let (m, cv) = &*self.0;
        let open = cv.wait_timeout_while(m.lock().unwrap(), Duration::from_secs(20), |open| !*open).unwrap();
        *open.0
    }

    fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }
}

#[rstest]
fn an_expandable_segment_grows_and_shrinks_under_work(
    #[values(Threaded, Deferred)] mode: ExecutionMode,
    #[values(Profile::Documented, Profile::Cuda)] profile: Profile,
) -> Result<()> {
    // Random delays of the stream workers shake the interleavings of the two streams.
    let emu = Emulator::builder()
        .device_memory(2 * N * G)
        .mode(mode)
        .profile(profile)
        .checker(true)
        .worker_delay_for_tests(Duration::from_micros(300), 0x5eed)
        .build()?;
    assert!(emu.config().checker);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let range = emu.reserve(1024 * G, 0, None)?;
    let base = range.base.addr();
    let at = |off: u64| DevicePtr::from_addr(base + off);
    let mut model = Vec::<u8>::new();
    let mut chunks: Vec<(Physical, Mapping)> = Vec::new();
    let mut expect: Vec<(HostBuffer, Vec<u8>)> = Vec::new();
    let bad_reads = Arc::new(AtomicBool::new(false));

    // Chunk 0 is stream b's scratch; stream a writes chunk i at step i, and b, ordered
    // after it by an event, copies across the boundary of chunks i - 1 and i into chunk 0
    // and reads chunk 0 back.
    for i in 0..N {
        let c = emu.create_physical(G)?;
        let m = emu.map(at(i * G), G, 0, c)?;
        emu.set_access(m.at, G, Access::ReadWrite)?;
        chunks.push((c, m));
        assert_eq!(emu.mem_info()?.free, 2 * N * G - (i + 1) * G, "every chunk counts");
        let p = pattern(i);
        model.extend_from_slice(&p);
        emu.memcpy_h2d_async(m.at, &p, &a)?;
        // A host function on a reads the chunk through its device address: a host address.
        let (want, bad) = (p[G as usize / 2], Arc::clone(&bad_reads));
        let addr = m.at.addr() + G / 2;
        emu.launch_host_func(
            &a,
            Box::new(move || {
                // SAFETY: the chunk is mapped read-write and stays mapped until the end.
                let got = unsafe { std::ptr::read_volatile(addr as *const u8) };
                bad.fetch_or(got != want, Ordering::Relaxed);
            }),
        )?;
        let ev = emu.create_event()?;
        emu.record_event(&ev, &a)?;
        emu.stream_wait_event(&b, &ev)?;
        emu.destroy_event(&ev)?;
        if i >= 2 {
            let src = i * G - G / 2;
            emu.memcpy_d2d_async(at(0), at(src), G, &b)?;
            let copied = model[src as usize..(src + G) as usize].to_vec();
            model[..G as usize].copy_from_slice(&copied);
            let out = HostBuffer::new(G as usize);
            emu.memcpy_d2h_async(&out, at(0), &b)?;
            expect.push((out, copied));
        }
        if mode == Deferred && i % 4 == 3 {
            emu.step(&a, 2)?;
        }
    }

    // Shrink: unmap and release the last chunk while work queued on it has not run (both
    // streams wait behind a gate): a copy from it on b, a raw read of it on a.
    let last = N - 1;
    let (c_last, m_last) = chunks.pop().expect("N chunks");
    let gate = Gate::default();
    for s in [&a, &b] {
        let g = gate.clone();
        let bad = Arc::clone(&bad_reads);
        emu.launch_host_func(
            s,
            Box::new(move || {
                bad.fetch_or(!g.wait(), Ordering::Relaxed);
            }),
        )?;
    }
    let out = HostBuffer::new(G as usize);
    emu.memcpy_d2h_async(&out, m_last.at, &b)?;
    expect.push((out, model[(last * G) as usize..].to_vec()));
    let seen = Arc::new(AtomicU8::new(0));
    let (raw, addr) = (Arc::clone(&seen), m_last.at.addr() + 5);
    emu.launch_host_func(
        &a,
        Box::new(move || {
            // SAFETY: the chunk was unmapped after this was queued, and the emulator keeps
            // its pages at the address until the work queued before the unmapping has run.
            raw.store(unsafe { std::ptr::read_volatile(addr as *const u8) }, Ordering::Relaxed)
        }),
    )?;
    emu.unmap(m_last)?;
    emu.release_physical(c_last)?;
    assert_eq!(emu.mapping_at(m_last.at), None);
    assert!(emu.memset_async(m_last.at, 0, 16, &a).is_err(), "work queued after the unmapping is refused");
    assert!(emu.memcpy_d2d_async(at(0), at(last * G - 16), 32, &b).is_err(), "partly unmapped");
    assert_eq!(emu.mem_info()?.free, 2 * N * G - N * G, "queued work still holds the chunk");
    gate.open();
    emu.synchronize_device()?;
    assert_eq!(seen.load(Ordering::Relaxed), pattern(last)[5], "the raw read saw the chunk, no fault");
    assert!(!bad_reads.load(Ordering::Relaxed), "every host function read what stream order says");
    for (k, (out, want)) in expect.iter().enumerate() {
        assert!(out.to_vec() == *want, "copy {k}");
    }
    assert_eq!(emu.mem_info()?.free, 2 * N * G - (N - 1) * G, "the released chunk went with its work");
    model.truncate((last * G) as usize);

    // Grow again into the hole: a fresh chunk, fresh bytes.
    let c = emu.create_physical(G)?;
    let m = emu.map(at(last * G), G, 0, c)?;
    emu.set_access(m.at, G, Access::ReadWrite)?;
    let p = pattern(100);
    emu.memcpy_h2d_async(m.at, &p, &b)?;
    model.extend_from_slice(&p);
    chunks.push((c, m));
    let whole = HostBuffer::new(model.len());
    emu.memcpy_d2h_async(&whole, range.base, &b)?;
    emu.synchronize_stream(&b)?;
    assert!(whole.to_vec() == model, "the whole segment, across every chunk boundary");

    for (c, m) in chunks {
        emu.unmap(m)?;
        emu.release_physical(c)?;
    }
    emu.release_reserved(range)?;
    emu.synchronize_device()?;
    assert_eq!(emu.mem_info()?.free, 2 * N * G);
    Ok(())
}
