//! Random sequences of pool, stream, event, copy, memset and kernel operations (and
//! synchronous allocations) on two devices, some with the checker's race mode on, run
//! against the reference model (`model/mod.rs`) and the emulator; every result must agree.
//!
//! After each operation the two sides are compared on: the call's result (the address as
//! an offset from the pool's base and the reuse rule that served it, or the error kind,
//! code and out-of-memory snapshot: the stream-order checker's verdicts on frees, copies,
//! memsets, kernels and host accesses included, data races in race mode too), the four statistics of every pool, the live allocations and
//! not-yet-executed cached bytes of every pool, each device's free memory, whether every
//! stream is idle and every event complete. Threaded mode compares the part of this that
//! does not depend on timing (`pair.rs`).
//!
//! Four property tests, one per execution mode and profile (contract §12):
//! `model_and_emulator_agree_{deferred,threaded}_{documented,cann_open}`. `PROPTEST_CASES`
//! sets the number of cases of each (by default a fast slice: 500 deferred, 300 threaded);
//! `cargo xtask soak` runs 100,000 per profile. Each prints a line `model soak: <mode>
//! <profile>: N cases, D divergences, T s` (shown with `--nocapture`). A failing case
//! shrinks to a minimal sequence, which proptest keeps in `proptest-regressions/`;
//! sequences found that way are also replayed as tests (`replays.rs`).
//!
//! - `ops.rs`: the calls a case is made of; `strategies.rs`: their generators;
//! - `pair.rs`: both sides of a case, driven call by call and compared;
//! - `coverage.rs`: the generator reaches every path;
//! - `replays.rs`: disagreements found by the property test, replayed;
//! - `model_alone.rs`: the model alone, against the conformance scenarios.

#[path = "../model/mod.rs"]
mod model;

mod coverage;
mod model_alone;
mod ops;
mod pair;
mod replays;
mod strategies;

use mempool_emu::{
    CopySide, EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, KernelAccess, KernelMem, ReuseCounts,
};
use mempool_hal::{
    AllocationType, AttrId, Device, DevicePtr, Error, EventStatus, HandleType, HostBuffer, Location, LocationType,
    MemPool, MemPoolExt, PoolProps, Profile, RawAttrValue, ReuseFlags, StreamStatus,
};
use model::{Addr, Deviations, Fail, Model, Props, Res, Rule};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{FileFailurePersistence, RngSeed, TestRunner};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ops::*;
use pair::*;
use strategies::*;

/// The granularity: small, so that pools of a few granules exhaust and reuse often.
const G: u64 = 64 << 10;
/// The device's memory: 64 granules.
const DEVICE: u64 = 64 * G;
/// At most this many streams, events and pools per case (foreign handles included).
const MAX_STREAMS: usize = 6;
const MAX_EVENTS: usize = 6;
const MAX_POOLS: usize = 4;

/// The deviations of the emulator from the contract that are still open; the random sequences
/// tolerate exactly these. None is open: every one the model or the soak found is fixed in
/// the emulator, and its replay (`replays.rs`) checks the contract's answer.
const OPEN: Deviations = Deviations {
    record_is_queued_when_pending: false,
    high_follows_increases_only: false,
    internal_dependency_single_hop: false,
    stream_query_counts_for_rule_b: false,
    device_sync_rule_b_own_streams_only: false,
    forgotten_stream_unobserved: false,
};

/// `cases` cases (or `PROPTEST_CASES`); failures are kept in
/// `proptest-regressions/model_props.txt` at the workspace root. The fast slice that
/// `cargo test` runs uses a fixed seed, so the test command's verdict does not change from
/// run to run; with `PROPTEST_CASES` set (`cargo xtask soak` sets it) the seed is random,
/// as it is for a search.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let regressions = concat!(env!("CARGO_MANIFEST_DIR"), "/../proptest-regressions/model_props.txt");
    let seeded = std::env::var_os("PROPTEST_CASES").is_none() && std::env::var_os("PROPTEST_RNG_SEED").is_none();
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        rng_seed: if seeded { RngSeed::Fixed(0x006d_656d_706f_6f6c) } else { ProptestConfig::default().rng_seed },
        ..ProptestConfig::default()
    }
}

/// Every result and every observable counter agree between the model and the emulator in
/// `mode` on `profile`, for any sequence of calls (valid or not); `cases` cases unless
/// `PROPTEST_CASES` says otherwise. Prints the counts (`cargo xtask soak` reads them).
fn agree(mode: Mode, profile: Profile, cases: u32) {
    let mut runner = TestRunner::new(config(cases));
    let ran = AtomicU64::new(0);
    let start = Instant::now();
    let strategy = (setup(mode, profile), prop::collection::vec(op(), 1..64));
    let result = runner.run(&strategy, |(setup, ops)| {
        ran.fetch_add(1, Ordering::Relaxed);
        replay_in(mode, setup, &ops, OPEN).map(drop).map_err(TestCaseError::fail)
    });
    println!(
        "model soak: {} {}: {} cases, {} divergences, {:.1} s",
        mode.name(),
        profile.name(),
        ran.load(Ordering::Relaxed),
        u32::from(result.is_err()),
        start.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("{} {}: {e}", mode.name(), profile.name());
    }
}

/// The fast slice's case counts (`cargo test`); the soak sets `PROPTEST_CASES`.
const DEFERRED_CASES: u32 = 500;
const THREADED_CASES: u32 = 300;

#[test]
fn model_and_emulator_agree_deferred_documented() {
    agree(Mode::Deferred, Profile::Documented, DEFERRED_CASES);
}

#[test]
fn model_and_emulator_agree_deferred_cann_open() {
    agree(Mode::Deferred, Profile::CannOpen, DEFERRED_CASES);
}

#[test]
fn model_and_emulator_agree_threaded_documented() {
    agree(Mode::Threaded, Profile::Documented, THREADED_CASES);
}

#[test]
fn model_and_emulator_agree_threaded_cann_open() {
    agree(Mode::Threaded, Profile::CannOpen, THREADED_CASES);
}
