//! The conformance suite of `mempool-hal`: every scenario of the behaviour contract
//! ([contract §10](mempool_hal::contract::conformance)), written once against the [`Device`](mempool_hal::Device) and
//! [`MemPool`](mempool_hal::MemPool) traits, runnable against any backend.
//!
//! # What it checks
//!
//! Thirty scenarios, one test each, grouped as the specification groups them:
//!
//! - properties and attributes (1-8): defaults, the reuse flags, read-only and
//!   reset-only counters, unknown ids, the threshold limit, bad properties, pool sizes;
//! - allocation, free and statistics (9-21): rounding, address order, same-stream reuse,
//!   best fit, the cross-stream reuse rules (known complete, event dependencies,
//!   opportunistic, internal dependencies), exhaustion, bad frees, high-water marks;
//! - release and trim (22-27): release at stream, event and device synchronization,
//!   `trim_to` errors, smallest-first release with a split, unexecuted frees;
//! - lifetime and bad handles (28-30): destroy with live allocations, stale and foreign
//!   handles, many threads at once.
//!
//! Checks are exact: sizes, statistics and, where the contract fixes them, addresses
//! (fresh blocks are carved from the low end of a pool in address order, so a correct
//! backend's answer is known in advance). Each scenario makes its own device, so they
//! can run in parallel.
//!
//! # Running it against a backend
//!
//! Implement [`Harness`] for your backend: it hands out fresh devices (small
//! granularities keep the suite fast), says which [`Capability`]s the backend has, and
//! may override [`Harness::let_run`]. Then add a test target without the standard
//! harness:
//!
//! ```toml
//! [[test]]
//! name = "conformance"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/conformance.rs (here with the CPU emulator as "my backend")
//! use mempool_conformance::{Capability, Harness};
//! use mempool_emu::Emulator;
//!
//! struct MyHarness;
//!
//! impl Harness for MyHarness {
//!     type Device = Emulator;
//!     fn device(&self) -> mempool_hal::Result<Emulator> {
//!         Emulator::builder().granularity(64 << 10).device_memory(1 << 30).build()
//!     }
//!     fn supports(&self, cap: Capability) -> bool {
//!         !matches!(cap, Capability::ForeignHandles)
//!     }
//! }
//!
//! mempool_conformance::conformance_main!("my-backend" => MyHarness);
//! ```
//!
//! A single scenario is a plain function, handy while bringing a backend up:
//!
//! ```
//! # use mempool_conformance::{Capability, Harness};
//! # use mempool_emu::Emulator;
//! # struct MyHarness;
//! # impl Harness for MyHarness {
//! #     type Device = Emulator;
//! #     fn device(&self) -> mempool_hal::Result<Emulator> {
//! #         Emulator::builder().granularity(64 << 10).device_memory(1 << 30).build()
//! #     }
//! #     fn supports(&self, _: Capability) -> bool { true }
//! # }
//! use mempool_conformance::scenarios;
//! scenarios::s11_same_stream_reuse(&MyHarness).expect("same-stream reuse conforms");
//! scenarios::s26_trim_smallest_first_split(&MyHarness).expect("trim conforms");
//! ```
//!
//! `cargo test --test conformance` then prints one line per scenario, named
//! `my-backend::s01_fresh_pool_defaults` and so on; the usual libtest arguments work
//! (a name filter, `--exact`, `--test-threads`, `--list`). For more control, build the
//! trials yourself with [`trials`] (for instance to add your own) and call
//! [`libtest_mimic::run`], or call a scenario function from
//! [`scenarios`](mod@scenarios) directly.
//!
//! # Capabilities and skipped scenarios
//!
//! A scenario that needs a capability the backend lacks is never reported as passed:
//! its trial is marked ignored with kind `not-run`, and forcing it with
//! `--include-ignored` fails with "not run: backend lacks capability X". A scenario
//! with optional checks (scenario 29's foreign handles) runs the rest and is reported
//! with kind `partial`.
//!
//! # Profiles
//!
//! A runtime's pools behave as documented or as the open CANN runtime ships (contract §12,
//! [`mempool_hal::Profile`]). [`Harness::profile`] says which (default `documented`); the
//! scenarios whose expectation differs (the reuse rules 11, 12, 14-18 and 21, scenario 19's
//! allocation after a free, the releases at synchronization of 22-24 and 26-28, and 30's
//! final release) check the reported profile's: on `cann-open`, fresh memory instead of
//! reuse, RESERVED unchanged by a synchronization, and `trim_to` giving the memory back.
//! No scenario is skipped for its profile.
//!
//! # Failures
//!
//! A scenario returns [`ScenarioResult`]. A failed check ([`ensure!`], [`ensure_eq!`],
//! [`ensure_ne!`], [`expect_error`]) or an unexpected backend error (propagated with
//! `?`) becomes a [`Failure`] naming the source line and the values involved; a panic
//! inside a scenario is caught and reported as a failure of that scenario only.

#![deny(missing_docs)]

mod failure;
pub mod harness;
mod runner;
pub mod scenarios;

pub use failure::{Failure, ScenarioResult, expect_error};
pub use harness::{Capability, Harness};
pub use runner::{
    KIND_NOT_RUN, KIND_PARTIAL, Scenario, host_register_scenarios, host_register_trials, peer_scenarios, peer_trials,
    run, scenarios, trials, vmm_scenarios, vmm_trials,
};

/// The test runner this crate builds on, re-exported for [`conformance_main!`] and for
/// callers of [`trials`].
pub use libtest_mimic;
/// The core crate the scenarios are written against.
pub use mempool_hal;
