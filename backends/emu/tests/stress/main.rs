//! Concurrency stress of the emulator: many host threads on many streams allocate from
//! pools with every combination of the three reuse flags, give each block a unique
//! signature, hand blocks between streams through events, read each block back and check
//! its signature in a host function before freeing it, and synchronize now and then.
//!
//! The programs are correct stream-ordered code: every access is ordered after the
//! allocation and before the free, across streams through an event. A block always has
//! one *current* stream, ordered after everything done to the block so far; moving it to
//! another stream records an event on the current one and makes the other wait on it.
//!
//! The stream-order checker is on, so an access or a free the programs failed to order
//! would be refused. The threaded and deferred plans run in both profiles (contract §12):
//! on `cann-open` no block is reused and nothing is released at synchronization, so the
//! workers trim the pool down to USED after synchronizing when an allocation runs out of
//! memory. While the workers run, one more thread reads every pool's statistics snapshot
//! in a loop: RESERVED is never below USED, and no high mark below its current value.
//!
//! Afterwards: USED is 0, RESERVED is exactly what the release rule leaves cached (on
//! `cann-open`, everything), the reuse counters match what the allocations reported, no
//! block was ever live twice (the signatures prove it on the device side, a map of live
//! ranges on the host side), `trim_to(0)` leaves RESERVED 0, and everything finished
//! within a deadline.
//!
//! The rules it checks: contract §4 (`mempool_hal::contract::allocation`), §5 (`mempool_hal::contract::free`), §6 (`mempool_hal::contract::release`), §7 (`mempool_hal::contract::statistics`), §12 (the profiles).

#![forbid(unsafe_code)]

use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, Profile, ReuseCounts, ReuseRule};
use mempool_hal::{
    Device, DevicePtr, ErrorKind, HostBuffer, MemPool, MemPoolExt, PoolProps, ReuseFlags, attr, round_up,
};
use rstest::rstest;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

mod ops;
mod run;
mod signature;
mod worker;

use ops::*;
use run::*;
use signature::*;
use worker::*;

/// The whole workload of one test must end within this, or the test fails as a deadlock.
const DEADLINE: Duration = Duration::from_secs(60);

/// The message of the host functions that panic on purpose.
const PANIC_MSG: &str = "deliberate host-function panic";

/// The pool granularity: the smallest the emulator accepts (one host page), so that
/// blocks are small and copies cheap.
fn gran() -> u64 {
    (rustix::param::page_size() as u64).max(4096)
}

type R<T = ()> = std::result::Result<T, String>;

trait Ctx<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> R<T>;
}

impl<T> Ctx<T> for mempool_hal::Result<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> R<T> {
        self.map_err(|e| format!("{}: {e}", what()))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn all_flag_combinations() -> Vec<u8> {
    (0..8).collect()
}

/// The threaded plan: eight workers, every flag combination. On `documented` every rule
/// serves some allocations; on `cann-open` every allocation takes fresh address space
/// and the workers trim when the pools fill up (contract §12).
fn threaded_stress(profile: Profile) {
    let ops = stress(Plan {
        name: "threaded stress",
        profile,
        mode: ExecutionMode::Threaded,
        threads: 8,
        shared_streams: 3,
        rounds: all_flag_combinations(),
        iterations: 1200,
        max_live: 6,
        pool_granules: 160,
        sync_percent: 3,
        device_syncs: true,
        panics: false,
        seed: 0x5EED_0001,
    });
    assert!(ops.allocs > 10_000 && ops.frees == ops.allocs, "{ops}");
    assert_eq!(ops.panics, 0);
    assert!(ops.snapshots > 0, "the snapshot reader read nothing: {ops}");
    expect_rules(profile, &ops, &[0, 1, 2, 3, 4, 5]);
}

/// The deferred plan: nothing runs until a worker synchronizes.
fn deferred_stress(profile: Profile) {
    let ops = stress(Plan {
        name: "deferred stress",
        profile,
        mode: ExecutionMode::Deferred,
        threads: 4,
        shared_streams: 2,
        rounds: all_flag_combinations(),
        iterations: 500,
        max_live: 6,
        pool_granules: 96,
        sync_percent: 8,
        device_syncs: true,
        panics: false,
        seed: 0x5EED_0002,
    });
    assert!(ops.allocs > 2_000 && ops.frees == ops.allocs, "{ops}");
    assert!(ops.snapshots > 0, "the snapshot reader read nothing: {ops}");
    let rules = [ReuseRule::SameStream, ReuseRule::KnownComplete, ReuseRule::Fresh].map(rule_index);
    expect_rules(profile, &ops, &rules);
}

/// On `documented` each rule of `rules` (by [`rule_index`]) served some allocations; on
/// `cann-open` the fresh rule served every one, and the pools filled up and were trimmed.
fn expect_rules(profile: Profile, ops: &Ops, rules: &[usize]) {
    if profile.reuses() {
        for &i in rules {
            assert!(ops.rules[i] > 0, "rule {i} never served an allocation: {ops}");
        }
    } else {
        assert_eq!(ops.rules[rule_index(ReuseRule::Fresh)], ops.allocs, "cann-open reused a block: {ops}");
        assert!(ops.oom > 0 && ops.trims > 0, "the pools never filled up on cann-open: {ops}");
    }
}

#[rstest]
fn threaded_stress_with_every_reuse_flag_combination(
    #[values(Profile::Documented, Profile::CannOpen)] profile: Profile,
) {
    threaded_stress(profile);
}

#[rstest]
fn deferred_stress_with_every_reuse_flag_combination(
    #[values(Profile::Documented, Profile::CannOpen)] profile: Profile,
) {
    deferred_stress(profile);
}

/// Worker 0 launches panicking host functions on its first stream in the middle of the
/// stress. Each is reported by the next synchronization of that stream only (the
/// workers synchronize streams and events, never the whole device here, since a device
/// sync reports every stream's failure); every other call of every worker succeeds, and
/// the stream with the panics keeps running checked work afterwards.
#[test]
fn a_panicking_host_function_mid_stress_breaks_nothing_else() {
    let ops = stress(Plan {
        name: "stress with panics",
        profile: Profile::Documented,
        mode: ExecutionMode::Threaded,
        threads: 6,
        shared_streams: 2,
        rounds: vec![0b000, 0b101],
        iterations: 1000,
        max_live: 6,
        pool_granules: 160,
        sync_percent: 4,
        device_syncs: false,
        panics: true,
        seed: 0x5EED_0003,
    });
    assert!(ops.panics > 0, "no panic was launched: {ops}");
    assert_eq!(ops.panics, ops.panics_reported, "{ops}");
    assert_eq!(ops.device_syncs, 0);
}

/// The signature check is able to fail: a block written by a second "owner" is caught,
/// and the live map refuses an overlapping hand-out.
#[test]
fn the_signature_check_catches_a_block_with_two_owners() {
    let g = gran();
    let emu = Emulator::builder().granularity(g).device_memory(64 * g).build().expect("config");
    let s = emu.create_stream().expect("stream");
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * g).build()).expect("pool");
    let shared = Shared::new();
    let (tag, intruder) = (shared.tag(), shared.tag());
    assert_ne!(tag, intruder);
    let mut checked = Vec::new();
    for (sig, overwrite) in [(Sig::Copied, false), (Sig::Memset, false), (Sig::Copied, true), (Sig::Memset, true)] {
        let p = pool.malloc_async(2 * g, &s).expect("alloc");
        let mut data: Vec<u8> = (0..2 * g / 8).flat_map(|k| expected_word(tag, sig, k, g).to_le_bytes()).collect();
        if overwrite {
            // Another owner's tag in the second granule.
            data[g as usize..g as usize + 8].copy_from_slice(&intruder.to_le_bytes());
        }
        emu.memcpy_h2d_async(p, &data, &s).expect("h2d");
        let buf = HostBuffer::new(2 * g as usize);
        emu.memcpy_d2h_async(&buf, p, &s).expect("d2h");
        emu.launch_host_func(&s, shared.checker(buf, p.addr(), tag, sig)).expect("host fn");
        pool.free(p, &s).expect("free");
        emu.synchronize_stream(&s).expect("sync");
        checked.push(lock(&shared.mismatches).len());
    }
    assert_eq!(checked, vec![0, 0, 1, 2], "clean blocks pass, overwritten ones are caught");
    let first = lock(&shared.mismatches)[0].clone();
    assert!(first.contains(&format!("{intruder:#018x}")) && first.contains(&format!("offset {g}")), "{first}");
    assert_eq!(shared.verified.load(Ordering::SeqCst), 4);

    shared.register(0x10_000, 2 * g, tag).expect("first block");
    shared.register(0x10_000 + 2 * g, g, intruder).expect("its neighbour");
    assert!(shared.register(0x10_000 + g, g, 7).is_err(), "an overlap with a live block is refused");
    assert!(shared.register(0x10_000 - g, 2 * g, 7).is_err(), "an overlap from below is refused");
    shared.unregister(0x10_000, tag).expect("forget the first");
    shared.register(0x10_000 + g, g, 7).expect("free again");
}

/// A stream synchronization must observe only what it waited for. Here a wait on stream
/// `s` is enqueued (from another host thread) while `synchronize_stream(s)` is already
/// draining; the sync must not mark the waited-for point of stream `x` complete, since
/// neither that wait nor `x`'s work before it has run.
#[test]
fn a_wait_enqueued_during_a_stream_sync_is_not_observed_by_it() {
    let g = gran();
    let emu = Emulator::builder().granularity(g).device_memory(64 * g).build().expect("config");
    let (s, x, t) = (emu.create_stream().expect("s"), emu.create_stream().expect("x"), emu.create_stream().expect("t"));
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * g).build()).expect("pool");
    let (open_x, x_gate) = mpsc::channel::<()>();
    let (open_s, s_gate) = mpsc::channel::<()>();
    let (s_started, started) = mpsc::channel::<()>();
    // x is busy until `open_x`; a block is freed behind that work and an event recorded.
    emu.launch_host_func(&x, Box::new(move || x_gate.recv().expect("gate"))).expect("x work");
    let p = pool.malloc_async(g, &x).expect("alloc");
    pool.free(p, &x).expect("free");
    let ev = emu.create_event().expect("event");
    emu.record_event(&ev, &x).expect("record");
    // s is busy until `open_s`; another thread synchronizes it meanwhile.
    emu.launch_host_func(
        &s,
        Box::new(move || {
            s_started.send(()).expect("started");
            s_gate.recv().expect("gate");
        }),
    )
    .expect("s work");
    started.recv().expect("s runs");
    let (synced, sync_result) = mpsc::channel();
    {
        let (emu, s) = (emu.clone(), s.clone());
        std::thread::spawn(move || synced.send(emu.synchronize_stream(&s)));
    }
    std::thread::sleep(Duration::from_millis(200)); // the sync is now draining s
    emu.stream_wait_event(&s, &ev).expect("wait");
    open_s.send(()).expect("open s");
    let outcome = sync_result.recv_timeout(Duration::from_secs(20));
    if !matches!(outcome, Ok(Ok(()))) {
        open_x.send(()).expect("open x");
        panic!("the sync of s did not end with Ok once s's own work had run: {outcome:?}");
    }
    // x has not run its work, so its free has not executed: nothing observed it.
    let (q, rule) = pool.malloc_async_traced(g, &t).expect("alloc on t");
    open_x.send(()).expect("open x");
    emu.synchronize_device().expect("device sync");
    assert!(
        q != p && rule == ReuseRule::Fresh,
        "the block freed behind x's unfinished work was handed to t as {rule} ({q} vs {p})"
    );
}
