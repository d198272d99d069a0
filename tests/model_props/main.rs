//! Random sequences of pool, stream and event operations, run against the reference model
//! (`model/mod.rs`) and the emulator in deferred mode; every result must agree.
//!
//! After each operation the two sides are compared on: the call's result (the address as
//! an offset from the pool's base and the reuse rule that served it, or the error kind,
//! code and out-of-memory snapshot), the four statistics of every pool, the live
//! allocations and not-yet-executed cached bytes of every pool, the device's free memory,
//! whether every stream is idle and every event complete.
//!
//! `PROPTEST_CASES` sets the number of cases (2,000 by default; `cargo xtask soak` runs
//! 100,000). A failing case shrinks to a minimal sequence, which proptest keeps in
//! `proptest-regressions/`; sequences found that way are also replayed as tests
//! (`replays.rs`).
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

use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{
    AllocationType, AttrId, Device, DevicePtr, Error, EventStatus, HandleType, Location, LocationType, MemPool,
    MemPoolExt, PoolProps, RawAttrValue, ReuseFlags,
};
use model::{Addr, Deviations, Fail, Model, Props, Res, Rule};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::FileFailurePersistence;
use std::collections::BTreeMap;
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
/// tolerate exactly these. None is open: the three the model found (replayed in
/// `replays.rs`) are fixed in the emulator.
const OPEN: Deviations = Deviations {
    record_is_queued_when_pending: false,
    high_follows_increases_only: false,
    internal_dependency_single_hop: false,
};

/// The number of cases from `PROPTEST_CASES` (2,000 by default); failures are kept in
/// `proptest-regressions/model_props.txt` at the workspace root.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let regressions = concat!(env!("CARGO_MANIFEST_DIR"), "/../proptest-regressions/model_props.txt");
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Every result and every observable counter agree between the model and the
    /// emulator, for any sequence of calls (valid or not).
    #[test]
    fn model_and_emulator_agree(setup in setup(), ops in prop::collection::vec(op(), 1..64)) {
        if let Err(e) = replay(setup, &ops, OPEN) {
            return Err(TestCaseError::fail(e));
        }
    }
}
