//! The stream-order checker: small buggy programs that must each be caught
//! at the faulty call (with nothing executed), and correct programs with cross-stream
//! events, reuse flags and host synchronization that must raise nothing.
//!
//! The rules it checks: contract §1 (`mempool_hal::contract::objects`), §11 (`mempool_hal::contract::checker`).

use mempool_emu::{EmuPool, EmuStream, Emulator, ExecutionMode, KernelAccess};
use mempool_hal::{Device, DevicePtr, Error, ErrorKind, HostBuffer, MemPool, MemPoolExt, PoolProps, Result, attr};
use std::sync::mpsc;

mod catalogue;
mod harness;
mod races;

const G: u64 = 64 << 10;

struct Rig {
    emu: Emulator,
    pool: EmuPool,
    s: Vec<EmuStream>,
}

/// A deferred emulator (nothing runs until asked, so "nothing executed" is observable),
/// one pool and four streams.
fn rig() -> Rig {
    rig_mode(ExecutionMode::Deferred)
}

fn rig_mode(mode: ExecutionMode) -> Rig {
    let emu = Emulator::builder().granularity(G).device_memory(512 * G).mode(mode).build().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(128 * G).build()).unwrap();
    let s = (0..4).map(|_| emu.create_stream().unwrap()).collect();
    Rig { emu, pool, s }
}

impl Rig {
    /// Records an event on `from` and makes `to` wait for it.
    fn order(&self, from: usize, to: usize) -> Result<()> {
        let e = self.emu.create_event()?;
        self.emu.record_event(&e, &self.s[from])?;
        self.emu.stream_wait_event(&self.s[to], &e)
    }

    /// Blocks stream `i` until the returned sender is dropped or sent to.
    fn block(&self, i: usize) -> Result<mpsc::Sender<()>> {
        let (tx, rx) = mpsc::channel::<()>();
        self.emu.launch_host_func(
            &self.s[i],
            Box::new(move || {
                let _ = rx.recv();
            }),
        )?;
        Ok(tx)
    }
}

/// Asserts `r` is a stream-order violation (code 107000) whose message names `needle`.
fn caught<T: std::fmt::Debug>(r: Result<T>, needle: &str) -> Error {
    let e = r.expect_err("the checker must refuse this call");
    assert_eq!((e.kind(), e.code()), (ErrorKind::StreamOrderViolation, 107_000), "{e}");
    assert!(e.message().contains(needle), "message should mention {needle:?}: {e}");
    e
}

/// Asserts nothing is queued on stream `i` (the refused call enqueued nothing).
fn nothing_queued(r: &Rig, i: usize) {
    assert_eq!(r.emu.step(&r.s[i], 1).unwrap(), 0, "a refused call must enqueue nothing");
}

// ---------------------------------------------------------------- buggy programs

#[test]
fn bug_01_use_after_free_on_the_same_stream() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    caught(r.emu.memset_async(x, 1, G, &r.s[0]), "use after free");
    nothing_queued(&r, 0);
}

#[test]
fn bug_02_use_after_free_on_another_stream() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.order(0, 1).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    caught(r.emu.memcpy_h2d_async(x, &[1, 2, 3], &r.s[1]), "use after free");
}

#[test]
fn bug_03_use_on_a_stream_not_ordered_after_the_allocation() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    let e = caught(r.emu.memset_async(x, 0, G, &r.s[1]), "not ordered after that allocation");
    assert!(e.message().contains(&format!("stream {}", r.s[1].id())), "names the using stream: {e}");
    assert!(e.message().contains(&format!("stream {}", r.s[0].id())), "names the allocating stream: {e}");
    nothing_queued(&r, 1);
}

#[test]
fn bug_04_event_recorded_before_the_allocation() {
    let r = rig();
    let e = r.emu.create_event().unwrap();
    r.emu.record_event(&e, &r.s[0]).unwrap();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.emu.stream_wait_event(&r.s[1], &e).unwrap();
    caught(r.emu.memset_async(x, 0, G, &r.s[1]), "not ordered after that allocation");
}

#[test]
fn bug_05_free_racing_a_pending_access_on_another_stream() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.order(0, 1).unwrap();
    r.emu.memset_async(x, 7, G, &r.s[1]).unwrap();
    caught(r.pool.free(x, &r.s[0]), "races with memset_async");
    assert_eq!(r.pool.stats().unwrap().used_current, G, "the refused free freed nothing");
}

#[test]
fn bug_06_device_to_host_copy_of_freed_memory() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    caught(r.emu.memcpy_d2h_async(&HostBuffer::new(16), x, &r.s[0]), "use after free");
}

#[test]
fn bug_07_device_copy_from_a_freed_source() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    let y = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    caught(r.emu.memcpy_d2d_async(y, x, G, &r.s[0]), "use after free");
    nothing_queued(&r, 0);
}

#[test]
fn bug_08_device_copy_into_memory_of_an_unordered_stream() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    let y = r.pool.malloc_async(G, &r.s[1]).unwrap();
    caught(r.emu.memcpy_d2d_async(y, x, G, &r.s[0]), "not ordered after that allocation");
}

#[test]
fn bug_09_kernel_writing_freed_memory() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    caught(r.emu.launch_kernel(&r.s[0], &[KernelAccess::Write(x, G)], move |m| m.write(x, &[1])), "use after free");
}

#[test]
fn bug_10_kernel_reading_on_an_unordered_stream() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    caught(
        r.emu.launch_kernel(&r.s[2], &[KernelAccess::Read(x, 8)], move |m| m.read(x, 8).map(drop)),
        "not ordered after that allocation",
    );
    nothing_queued(&r, 2);
}

#[test]
fn bug_11_access_to_a_destroyed_pool() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.emu.destroy_pool(&r.pool).unwrap();
    caught(r.emu.memset_async(x, 0, G, &r.s[0]), "destroyed pool");
}

#[test]
fn bug_12_stale_pointer_after_opportunistic_reuse_by_another_stream() {
    let r = rig();
    r.pool.set(attr::ReuseAllowOpportunistic, true).unwrap();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    let y = r.pool.malloc_async(G, &r.s[1]).unwrap();
    assert_eq!(y, x, "reused opportunistically (the free had nothing to wait for)");
    caught(r.emu.memset_async(x, 0, G, &r.s[0]), "not ordered after that allocation");
}

#[test]
fn bug_13_free_on_a_third_stream_racing_a_pending_kernel() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.order(0, 1).unwrap();
    r.order(0, 2).unwrap();
    r.emu.launch_kernel(&r.s[1], &[KernelAccess::Read(x, G)], move |m| m.read(x, G).map(drop)).unwrap();
    caught(r.pool.free(x, &r.s[2]), "races with launch_kernel");
}

#[test]
fn bug_14_copy_through_the_c_style_raw_path_after_free() {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0]).unwrap();
    r.pool.free(x, &r.s[0]).unwrap();
    let mut host = vec![0u8; 8];
    // SAFETY: `host` outlives the call; the call is refused before anything is enqueued.
    let res = unsafe {
        r.emu.memcpy_raw_async(
            mempool_emu::CopySide::Host(host.as_mut_ptr()),
            mempool_emu::CopySide::Device(x),
            8,
            &r.s[0],
        )
    };
    caught(res, "use after free");
}

// ---------------------------------------------------------------- correct programs

fn run_ok(r: &Rig) {
    r.emu.synchronize_device().expect("a correct program runs without error");
}

#[test]
fn ok_01_same_stream_lifecycle() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memset_async(x, 3, G, &r.s[0])?;
    let out = HostBuffer::new(4);
    r.emu.memcpy_d2h_async(&out, x, &r.s[0])?;
    r.pool.free(x, &r.s[0])?;
    run_ok(&r);
    assert_eq!(out.to_vec(), vec![3; 4]);
    Ok(())
}

#[test]
fn ok_02_handoff_through_an_event_and_free_on_the_consumer() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memset_async(x, 1, G, &r.s[0])?;
    r.order(0, 1)?;
    r.emu.memset_async(x, 2, G, &r.s[1])?;
    r.pool.free(x, &r.s[1])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_03_handoff_and_back_before_the_free() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.order(0, 1)?;
    r.emu.memset_async(x, 2, G, &r.s[1])?;
    r.order(1, 0)?;
    r.pool.free(x, &r.s[0])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_04_chain_of_three_streams() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.order(0, 1)?;
    r.order(1, 2)?;
    r.emu.memset_async(x, 9, G, &r.s[2])?;
    r.pool.free(x, &r.s[2])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_05_internal_dependency_reuse_then_use() -> Result<()> {
    let r = rig();
    r.pool.set(attr::ReuseAllowInternalDependencies, true)?;
    let gate = r.block(0)?;
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memset_async(x, 1, G, &r.s[0])?;
    r.pool.free(x, &r.s[0])?;
    let y = r.pool.malloc_async(G, &r.s[1])?;
    assert_eq!(y, x);
    r.emu.memset_async(y, 2, G, &r.s[1])?;
    drop(gate);
    r.pool.free(y, &r.s[1])?;
    run_ok(&r);
    Ok(())
}

/// Stream 0 allocates, uses and frees a block; `between` makes it reusable by stream 1
/// (with the rule the pool's flags allow), which takes the same block, uses and frees it.
fn reuse_then_use(r: &Rig, between: impl FnOnce(&Rig) -> Result<()>) -> Result<()> {
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memset_async(x, 1, G, &r.s[0])?;
    r.pool.free(x, &r.s[0])?;
    between(r)?;
    let y = r.pool.malloc_async(G, &r.s[1])?;
    assert_eq!(y, x);
    r.emu.memset_async(y, 2, G, &r.s[1])?;
    r.pool.free(y, &r.s[1])?;
    run_ok(r);
    Ok(())
}

#[test]
fn ok_06_event_dependency_reuse_then_use() -> Result<()> {
    let r = rig();
    r.pool.set(attr::ReuseFollowEventDependencies, true)?;
    reuse_then_use(&r, |r| r.order(0, 1))
}

#[test]
fn ok_07_opportunistic_reuse_then_use() -> Result<()> {
    let r = rig();
    r.pool.set(attr::ReuseAllowOpportunistic, true)?;
    reuse_then_use(&r, |r| r.emu.run_pending(&r.s[0]))
}

#[test]
fn ok_08_known_complete_reuse_after_host_sync() -> Result<()> {
    let r = rig();
    r.pool.set(attr::ReleaseThreshold, r.pool.size())?;
    reuse_then_use(&r, |r| r.emu.synchronize_stream(&r.s[0]))
}

#[test]
fn ok_09_free_after_the_other_stream_was_synchronized() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.order(0, 1)?;
    r.emu.memset_async(x, 5, G, &r.s[1])?;
    r.emu.synchronize_stream(&r.s[1])?;
    r.pool.free(x, &r.s[0])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_10_kernel_with_declared_memory() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    let y = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memcpy_h2d_async(x, &[1, 2, 3, 4], &r.s[0])?;
    r.emu.launch_kernel(&r.s[0], &[KernelAccess::Read(x, 4), KernelAccess::Write(y, 4)], move |m| {
        let v: Vec<u8> = m.read(x, 4)?.iter().map(|b| b * 10).collect();
        m.write(y, &v)
    })?;
    let out = HostBuffer::new(4);
    r.emu.memcpy_d2h_async(&out, y, &r.s[0])?;
    r.pool.free(x, &r.s[0])?;
    r.pool.free(y, &r.s[0])?;
    run_ok(&r);
    assert_eq!(out.to_vec(), vec![10, 20, 30, 40]);
    Ok(())
}

#[test]
fn ok_11_copies_between_pools_across_streams() -> Result<()> {
    let r = rig();
    let other = r.emu.create_pool(&PoolProps::builder().max_size(16 * G).build())?;
    let x = r.pool.malloc_async(G, &r.s[0])?;
    let y = other.malloc_async(G, &r.s[1])?;
    r.emu.memset_async(x, 4, G, &r.s[0])?;
    r.order(0, 1)?;
    r.emu.memcpy_d2d_async(y, x, G, &r.s[1])?;
    r.order(1, 0)?;
    r.pool.free(x, &r.s[0])?;
    other.free(y, &r.s[1])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_12_fan_out_and_join_with_frees_in_order() -> Result<()> {
    let r = rig_mode(ExecutionMode::Threaded);
    let xs: Vec<DevicePtr> = (0..3).map(|_| r.pool.malloc_async(G, &r.s[0])).collect::<Result<_>>()?;
    for (i, &x) in xs.iter().enumerate() {
        r.order(0, i + 1)?;
        r.emu.memset_async(x, i as u8, G, &r.s[i + 1])?;
        r.order(i + 1, 0)?;
    }
    for &x in &xs {
        r.pool.free(x, &r.s[0])?;
    }
    run_ok(&r);
    assert_eq!(r.pool.stats()?.used_current, 0);
    Ok(())
}

#[test]
fn ok_13_reuse_on_the_same_stream_after_free() -> Result<()> {
    let r = rig();
    let x = r.pool.malloc_async(G, &r.s[0])?;
    r.emu.memset_async(x, 1, G, &r.s[0])?;
    r.pool.free(x, &r.s[0])?;
    let y = r.pool.malloc_async(G, &r.s[0])?;
    assert_eq!(y, x);
    r.emu.memset_async(y, 2, G, &r.s[0])?;
    r.pool.free(y, &r.s[0])?;
    run_ok(&r);
    Ok(())
}

#[test]
fn ok_14_with_the_checker_off_an_unordered_use_is_not_refused() -> Result<()> {
    let emu = Emulator::builder().granularity(G).device_memory(512 * G).checker(false).build()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build())?;
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let x = pool.malloc_async(G, &a)?;
    emu.memset_async(x, 0, G, &b)?; // a bug the checker would catch (bug_03)
    emu.synchronize_device()?;
    pool.free(x, &a)?;
    Ok(())
}
