//! The `cann-open` profile (contract §12): no reuse, no release at synchronization, and a
//! destroy that does not wait for queued work, against the same programs on `documented`.

use mempool_emu::ExecutionMode::{self, Deferred, Threaded};
use mempool_emu::Profile::{self, CannOpen, Documented};
use mempool_emu::{Emulator, ReuseRule};
use mempool_hal::{Device, ErrorKind, HostBuffer, MemPool, MemPoolExt, PoolProps, Result, ReuseFlags, attr};
use rstest::rstest;

const G: u64 = 64 << 10;

fn emu(profile: Profile, mode: ExecutionMode) -> Emulator {
    Emulator::builder().granularity(G).device_memory(256 * G).mode(mode).profile(profile).build().expect("valid config")
}

fn props(granules: u64) -> PoolProps {
    PoolProps::builder().max_size(granules * G).build()
}

#[test]
fn the_default_profile_is_documented() {
    assert_eq!(Emulator::new().config().profile, Profile::Documented);
    assert_eq!(Emulator::builder().build().unwrap().config().profile, Profile::Documented);
}

#[rstest]
fn cann_open_takes_fresh_memory_whatever_the_flags(#[values(Threaded, Deferred)] mode: ExecutionMode) -> Result<()> {
    let emu = emu(Profile::CannOpen, mode);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props(16))?;
    ReuseFlags::ALL.apply(&pool)?;
    pool.set(attr::ReleaseThreshold, 0)?;
    let (p, rule) = pool.malloc_async_traced(G, &a)?;
    assert_eq!(rule, ReuseRule::Fresh);
    pool.free(p, &a)?;
    // Same stream, then another stream after a synchronization: fresh both times.
    let (q, rule) = pool.malloc_async_traced(G, &a)?;
    assert_eq!((q.addr(), rule), (p.addr() + G, ReuseRule::Fresh));
    emu.synchronize_stream(&a)?;
    assert_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * G, "no release at synchronization");
    let (r, rule) = pool.malloc_async_traced(G, &b)?;
    assert_eq!((r.addr(), rule), (p.addr() + 2 * G, ReuseRule::Fresh));
    assert_eq!(pool.reuse_counts().fresh, 3);
    // trim_to gives the cached granule back; its range is fresh space again.
    pool.trim_to(pool.get(attr::UsedMemCurrent)?)?;
    assert_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * G);
    let (s, rule) = pool.malloc_async_traced(G, &b)?;
    assert_eq!((s, rule), (p, ReuseRule::Fresh));
    for x in [q, r] {
        pool.free(x, &b)?;
    }
    pool.free(s, &b)?;
    emu.synchronize_device()?;
    assert_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * G, "a device synchronization releases nothing");
    pool.trim_to(0)?;
    assert_eq!(pool.get(attr::ReservedMemCurrent)?, 0);
    emu.destroy_pool(&pool)?;
    Ok(())
}

#[rstest]
fn cann_open_runs_out_of_memory_where_documented_reuses(
    #[values(Documented, CannOpen)] profile: Profile,
) -> Result<()> {
    let emu = emu(profile, ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(4))?;
    let mut served = 0;
    let err = loop {
        match pool.malloc_async(G, &s) {
            Ok(p) => {
                pool.free(p, &s)?;
                served += 1;
                if served == 100 {
                    break None;
                }
            }
            Err(e) => break Some(e),
        }
    };
    match profile {
        Profile::Documented | Profile::Cuda => assert!(err.is_none(), "{err:?}"),
        Profile::CannOpen => {
            assert_eq!(served, 4, "a pool of 4 granules serves 4 fresh allocations");
            assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::OutOfMemory));
            emu.synchronize_stream(&s)?;
            pool.trim_to(0)?;
            let p = pool.malloc_async(G, &s)?;
            pool.free(p, &s)?;
        }
    }
    emu.synchronize_device()?;
    emu.destroy_pool(&pool)?;
    Ok(())
}

#[test]
fn cann_open_destroy_does_not_wait_and_queued_work_fails_when_it_runs() -> Result<()> {
    let emu = emu(Profile::CannOpen, ExecutionMode::Deferred);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    let out = HostBuffer::new(16);
    emu.memset_async(x, 0x5A, G, &s)?;
    emu.memcpy_d2h_async(&out, x, &s)?;
    emu.destroy_pool(&pool)?; // the queued work has not run yet: the memory goes now
    let err = emu.synchronize_stream(&s).unwrap_err();
    assert!(err.message().contains("cann-open"), "{err}");
    assert_eq!(out.to_vec(), vec![0; 16], "the copy did not run on memory that was given back");
    // The stream keeps working, and the pointer is still known as a destroyed pool's.
    emu.synchronize_stream(&s)?;
    assert!(!emu.is_device_memory(x, 1));
    let err = pool.free(x, &s).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidPointer, 107_000));
    // Threaded: the same program fails at the synchronization or not at all (if the work
    // ran before the destroy), and never faults.
    let emu = emu_threaded_cann_open();
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    emu.memset_async(x, 1, G, &s)?;
    emu.destroy_pool(&pool)?;
    let _ = emu.synchronize_stream(&s);
    emu.synchronize_stream(&s)?;
    Ok(())
}

fn emu_threaded_cann_open() -> Emulator {
    emu(Profile::CannOpen, ExecutionMode::Threaded)
}

#[test]
fn documented_destroy_still_waits() -> Result<()> {
    let emu = emu(Profile::Documented, ExecutionMode::Deferred);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    let out = HostBuffer::new(16);
    emu.memset_async(x, 0x5A, G, &s)?;
    emu.memcpy_d2h_async(&out, x, &s)?;
    emu.destroy_pool(&pool)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), vec![0x5A; 16]);
    Ok(())
}
