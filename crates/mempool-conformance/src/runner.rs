//! The scenario table and the libtest-mimic runner.

use crate::harness::{Capability, Harness};
use crate::scenarios::*;
use crate::{Failure, ScenarioResult};
use Capability::{
    BlockingHostFunctions as Blocking, CheckedFree, ForeignHandles, ObserveExecutionWithoutSync, PeerDevices, Threads,
};
use libtest_mimic::{Arguments, Conclusion, Trial};
use mempool_hal::{HostRegistration, VirtualMemory};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// The trial kind of a scenario that was not run because the backend lacks a
/// capability it needs (printed as `[not-run]`).
pub const KIND_NOT_RUN: &str = "not-run";

/// The trial kind of a scenario that ran without some optional checks because the
/// backend lacks a capability they need (printed as `[partial]`).
pub const KIND_PARTIAL: &str = "partial";

/// One scenario of [contract §10](mempool_hal::contract::conformance), for a backend `H`.
pub struct Scenario<H: Harness> {
    /// Its number in [contract §10](mempool_hal::contract::conformance) (1-30), or in its
    /// extension's table ([`vmm_scenarios`], [`host_register_scenarios`]: 1-4).
    pub number: u8,
    /// Its test name, `sNN_snake_name` (the name of its function in [`scenarios`](mod@crate::scenarios)).
    pub name: &'static str,
    /// The page of [`mempool_hal::contract`] whose rules it checks, as a path
    /// (`"mempool_hal::contract::allocation"`); a failure names it.
    pub contract: &'static str,
    /// Capabilities without which it is not run at all (reported as ignored, kind
    /// `not-run`).
    pub needs: &'static [Capability],
    /// Capabilities that enable extra checks; without them the scenario runs its other
    /// checks and is reported with kind `partial`.
    pub optional: &'static [Capability],
    /// The scenario itself.
    pub run: fn(&H) -> ScenarioResult,
}

impl<H: Harness> Clone for Scenario<H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H: Harness> Copy for Scenario<H> {}

impl<H: Harness> fmt::Debug for Scenario<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("number", &self.number)
            .field("name", &self.name)
            .field("needs", &self.needs)
            .field("optional", &self.optional)
            .finish_non_exhaustive()
    }
}

impl<H: Harness> Scenario<H> {
    /// The capabilities in `needs` that `harness` does not support.
    pub fn missing(&self, harness: &H) -> Vec<Capability> {
        self.needs.iter().copied().filter(|&c| !harness.supports(c)).collect()
    }

    /// The capabilities in `optional` that `harness` does not support.
    pub fn missing_optional(&self, harness: &H) -> Vec<Capability> {
        self.optional.iter().copied().filter(|&c| !harness.supports(c)).collect()
    }

    /// Runs the scenario against `harness`, turning a panic into a [`Failure`] so that
    /// one bad backend call cannot abort the suite. Does not check capabilities.
    ///
    /// # Errors
    ///
    /// The scenario's failure.
    pub fn run_on(&self, harness: &H) -> ScenarioResult {
        catch_unwind(AssertUnwindSafe(|| (self.run)(harness))).unwrap_or_else(|payload| Err(Failure::panicked(payload)))
    }
}

/// Builds the scenario table: `number name contract-page [needs] [optional]`, in order.
macro_rules! table {
    ($($number:literal $name:ident $page:ident [$($need:expr),*] [$($opt:expr),*];)*) => {
        vec![$(Scenario::<H> {
            number: $number,
            name: stringify!($name),
            contract: concat!("mempool_hal::contract::", stringify!($page)),
            needs: &[$($need),*],
            optional: &[$($opt),*],
            run: $name::<H>,
        }),*]
    };
}

/// All thirty scenarios of [contract §10](mempool_hal::contract::conformance), in order.
pub fn scenarios<H: Harness>() -> Vec<Scenario<H>> {
    table! {
        1 s01_fresh_pool_defaults attributes [] [];
        2 s02_reuse_flags_round_trip attributes [] [];
        3 s03_read_only_counters_refuse_writes attributes [] [];
        4 s04_high_marks_reset_only attributes [] [];
        5 s05_unknown_attribute_id attributes [] [];
        6 s06_threshold_limits attributes [] [];
        7 s07_bad_props_rejected properties [] [];
        8 s08_max_size_zero_and_rounding properties [] [];
        9 s09_one_byte_rounds_to_granule allocation [] [];
        10 s10_fresh_allocations_in_address_order allocation [] [];
        11 s11_same_stream_reuse allocation [] [];
        12 s12_best_fit allocation [] [];
        13 s13_cross_stream_no_flags_no_sync allocation [] [];
        14 s14_cross_stream_after_sync allocation [] [];
        15 s15_event_dependency allocation [] [];
        16 s16_event_chain allocation [] [];
        17 s17_opportunistic_reuse allocation [Blocking, ObserveExecutionWithoutSync] [];
        18 s18_internal_dependencies allocation [Blocking] [];
        19 s19_pool_exhaustion allocation [] [];
        20 s20_bad_free_pointers free [CheckedFree] [];
        21 s21_high_marks statistics [] [];
        22 s22_release_threshold_zero release [] [];
        23 s23_release_threshold_t release [] [];
        24 s24_release_at_event_and_device_sync release [] [];
        25 s25_trim_errors release [] [];
        26 s26_trim_smallest_first_split release [] [];
        27 s27_unexecuted_free_not_released release [Blocking] [];
        28 s28_destroy_with_live_allocations statistics [CheckedFree] [];
        29 s29_bad_handles statistics [] [ForeignHandles];
        30 s30_concurrent_alloc_free statistics [Threads] [];
    }
}

/// The scenarios of virtual memory ([contract §14](mempool_hal::contract::vmm)), for
/// backends whose device implements [`VirtualMemory`]; numbered on their own (1-4).
pub fn vmm_scenarios<H: Harness>() -> Vec<Scenario<H>>
where
    H::Device: VirtualMemory,
{
    table! {
        1 vmm01_round_trip vmm [] [];
        2 vmm02_chunk_mapped_twice vmm [] [];
        3 vmm03_chunk_released_while_mapped vmm [] [];
        4 vmm04_misuse_answered vmm [] [CheckedFree];
    }
}

/// Why a scenario is not run: "not run: backend lacks capability A" (or
/// "capabilities A, B").
fn not_run_message(missing: &[Capability]) -> String {
    let plural = if missing.len() == 1 { "capability" } else { "capabilities" };
    let names = missing.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    format!("not run: backend lacks {plural} {names}")
}

/// One libtest-mimic trial per scenario, named `{prefix}::{name}`.
///
/// A scenario that needs a capability `harness` lacks is marked ignored with kind
/// `not-run`; forced with `--include-ignored` or `--ignored`, it fails with
/// "not run: backend lacks capability X" rather than pass. A scenario that runs without
/// some optional checks has kind `partial`.
pub fn trials<H: Harness>(prefix: &str, harness: Arc<H>) -> Vec<Trial> {
    trials_of(prefix, harness, scenarios::<H>())
}

/// [`trials`] for the scenarios of virtual memory ([`vmm_scenarios`]).
pub fn vmm_trials<H: Harness>(prefix: &str, harness: Arc<H>) -> Vec<Trial>
where
    H::Device: VirtualMemory,
{
    trials_of(prefix, harness, vmm_scenarios::<H>())
}

/// The peer-access scenarios ([contract §1](mempool_hal::contract::objects)), for a
/// harness with two devices of one platform ([`Harness::peer_pair`]); numbered apart
/// (`pNN_` names).
pub fn peer_scenarios<H: Harness>() -> Vec<Scenario<H>> {
    table! {
        1 p01_peer_access objects [PeerDevices] [];
    }
}

/// One libtest-mimic trial per peer-access scenario ([`peer_scenarios`]), as [`trials`]
/// makes them.
pub fn peer_trials<H: Harness>(prefix: &str, harness: Arc<H>) -> Vec<Trial> {
    trials_of(prefix, harness, peer_scenarios::<H>())
}

/// The host registration scenarios ([contract §15](mempool_hal::contract::host_register)),
/// for a backend whose device implements [`HostRegistration`], in order. Numbered apart
/// from §10's thirty (`hNN_` names).
pub fn host_register_scenarios<H: Harness>() -> Vec<Scenario<H>>
where
    H::Device: HostRegistration,
{
    table! {
        1 h01_registered_range_copies_both_ways host_register [] [];
        2 h02_overlapping_registration_refused host_register [] [];
        3 h03_unregister_names_the_start host_register [] [];
        4 h04_register_again_after_unregister host_register [] [];
    }
}

/// One libtest-mimic trial per host registration scenario ([`host_register_scenarios`]),
/// named `{prefix}::{name}`, as [`trials`] makes them.
pub fn host_register_trials<H: Harness>(prefix: &str, harness: Arc<H>) -> Vec<Trial>
where
    H::Device: HostRegistration,
{
    trials_of(prefix, harness, host_register_scenarios::<H>())
}

/// One trial per scenario of `table` (see [`trials`]).
fn trials_of<H: Harness>(prefix: &str, harness: Arc<H>, table: Vec<Scenario<H>>) -> Vec<Trial> {
    table
        .into_iter()
        .map(|scenario| {
            let name = format!("{prefix}::{}", scenario.name);
            let missing = scenario.missing(&harness);
            if !missing.is_empty() {
                let message = not_run_message(&missing);
                return Trial::test(name, move || Err(message.into())).with_ignored_flag(true).with_kind(KIND_NOT_RUN);
            }
            let kind = if scenario.missing_optional(&harness).is_empty() { "" } else { KIND_PARTIAL };
            let harness = Arc::clone(&harness);
            Trial::test(name, move || {
                scenario.run_on(&harness).map_err(|f| format!("{f}\n(the rule: {})", scenario.contract).into())
            })
            .with_kind(kind)
        })
        .collect()
}

/// Runs every scenario against `harness` with the command-line arguments of the
/// process (libtest syntax: filters, `--ignored`, `--test-threads`, ...).
///
/// Call `.exit()` on the result from `main`, or use [`conformance_main!`](crate::conformance_main).
pub fn run<H: Harness>(prefix: &str, harness: Arc<H>) -> Conclusion {
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials(prefix, harness))
}

/// Writes a test `main` that runs the whole suite against one or more backends.
///
/// Each `"prefix" => harness` pair adds one trial per scenario, named
/// `prefix::sNN_name`; `harness` is an expression whose value implements
/// [`Harness`](crate::Harness) (it is put in an `Arc`). Use it in a test target with
/// `harness = false`:
///
/// ```toml
/// [[test]]
/// name = "conformance"
/// harness = false
/// ```
///
/// ```no_run
/// // tests/conformance.rs
/// # use mempool_conformance::{Capability, Harness};
/// # struct TestHarness(mempool_emu::ExecutionMode);
/// # impl Harness for TestHarness {
/// #     type Device = mempool_emu::Emulator;
/// #     fn device(&self) -> mempool_hal::Result<Self::Device> {
/// #         mempool_emu::Emulator::builder().granularity(64 << 10).mode(self.0).build()
/// #     }
/// #     fn supports(&self, _: Capability) -> bool { true }
/// # }
/// mempool_conformance::conformance_main! {
///     "emu" => TestHarness(mempool_emu::ExecutionMode::Threaded),
///     "emu-deferred" => TestHarness(mempool_emu::ExecutionMode::Deferred),
/// }
/// ```
#[macro_export]
macro_rules! conformance_main {
    ($($prefix:literal => $harness:expr),+ $(,)?) => {
        fn main() {
            let args = $crate::libtest_mimic::Arguments::from_args();
            let mut all = ::std::vec::Vec::new();
            $(
                all.extend($crate::trials($prefix, ::std::sync::Arc::new($harness)));
            )+
            $crate::libtest_mimic::run(&args, all).exit()
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ensure, ensure_eq};
    use mempool_hal::{
        AttrId, Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, HostFn, MemInfo, PoolProps, RawAttrValue,
        Result, StreamStatus, code,
    };

    /// A backend that answers every call with `NotSupported`.
    #[derive(Debug)]
    struct Nothing;

    fn no<T>() -> Result<T> {
        Err(Error::new(ErrorKind::NotSupported, code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "stub", "nothing here"))
    }

    impl mempool_hal::MemPool for Nothing {
        type Stream = ();
        fn malloc_async(&self, _: u64, _: &()) -> Result<DevicePtr> {
            no()
        }
        unsafe fn free_async(&self, _: DevicePtr, _: &()) -> Result<()> {
            no()
        }
        fn trim_to(&self, _: u64) -> Result<()> {
            no()
        }
        fn get_attr_raw(&self, _: AttrId) -> Result<RawAttrValue> {
            no()
        }
        fn set_attr_raw(&self, _: AttrId, _: RawAttrValue) -> Result<()> {
            no()
        }
        fn size(&self) -> u64 {
            0
        }
    }

    impl Device for Nothing {
        type Stream = ();
        type Event = ();
        type Pool = Nothing;
        fn id(&self) -> u32 {
            0
        }
        fn pool_granularity(&self) -> u64 {
            4096
        }
        fn mem_info(&self) -> Result<MemInfo> {
            no()
        }
        fn create_stream(&self) -> Result<()> {
            no()
        }
        fn destroy_stream(&self, _: &()) -> Result<()> {
            no()
        }
        fn synchronize_stream(&self, _: &()) -> Result<()> {
            no()
        }
        fn synchronize_device(&self) -> Result<()> {
            no()
        }
        fn create_event(&self) -> Result<()> {
            no()
        }
        fn destroy_event(&self, _: &()) -> Result<()> {
            no()
        }
        fn record_event(&self, _: &(), _: &()) -> Result<()> {
            no()
        }
        fn stream_wait_event(&self, _: &(), _: &()) -> Result<()> {
            no()
        }
        fn synchronize_event(&self, _: &()) -> Result<()> {
            no()
        }
        fn query_event(&self, _: &()) -> Result<EventStatus> {
            no()
        }
        fn query_stream(&self, _: &()) -> Result<StreamStatus> {
            no()
        }
        fn event_elapsed_ms(&self, _: &(), _: &()) -> Result<f32> {
            no()
        }
        fn create_pool(&self, _: &PoolProps) -> Result<Nothing> {
            no()
        }
        fn destroy_pool(&self, _: &Nothing) -> Result<()> {
            no()
        }
        fn memcpy_h2d_async(&self, _: DevicePtr, _: &[u8], _: &()) -> Result<()> {
            no()
        }
        fn memcpy_d2h_async(&self, _: &HostBuffer, _: DevicePtr, _: &()) -> Result<()> {
            no()
        }
        fn memcpy_d2d_async(&self, _: DevicePtr, _: DevicePtr, _: u64, _: &()) -> Result<()> {
            no()
        }
        fn memset_async(&self, _: DevicePtr, _: u8, _: u64, _: &()) -> Result<()> {
            no()
        }
        fn launch_host_func(&self, _: &(), _: HostFn) -> Result<()> {
            no()
        }
    }

    /// A harness over [`Nothing`] that supports only the listed capabilities.
    struct Stub(&'static [Capability]);

    impl Harness for Stub {
        type Device = Nothing;
        fn device(&self) -> Result<Nothing> {
            Ok(Nothing)
        }
        fn supports(&self, cap: Capability) -> bool {
            self.0.contains(&cap)
        }
    }

    #[test]
    fn table_is_complete_and_ordered() {
        let all = scenarios::<Stub>();
        assert_eq!(all.len(), 30);
        for (i, s) in all.iter().enumerate() {
            assert_eq!(usize::from(s.number), i + 1);
            assert!(s.name.starts_with(&format!("s{:02}_", i + 1)), "{}", s.name);
            let page = s.contract.strip_prefix("mempool_hal::contract::").expect("a contract page");
            let pages = ["attributes", "properties", "allocation", "free", "release", "statistics"];
            assert!(pages.contains(&page), "{}: {}", s.name, s.contract);
        }
        assert_eq!(all[29].name, "s30_concurrent_alloc_free");
    }

    #[test]
    fn missing_capabilities_make_not_run_trials() {
        let trials = trials("stub", Arc::new(Stub(&[Capability::Threads])));
        assert_eq!(trials.len(), 30);
        assert_eq!(trials[0].name(), "stub::s01_fresh_pool_defaults");
        let by_name = |n: &str| trials.iter().find(|t| t.name() == format!("stub::{n}")).unwrap();
        for n in [
            "s17_opportunistic_reuse",
            "s18_internal_dependencies",
            "s20_bad_free_pointers",
            "s27_unexecuted_free_not_released",
            "s28_destroy_with_live_allocations",
        ] {
            assert!(by_name(n).has_ignored_flag(), "{n}");
            assert_eq!(by_name(n).kind(), KIND_NOT_RUN, "{n}");
        }
        let s30 = by_name("s30_concurrent_alloc_free");
        assert!(!s30.has_ignored_flag());
        assert_eq!(s30.kind(), "");
        let s29 = by_name("s29_bad_handles");
        assert!(!s29.has_ignored_flag());
        assert_eq!(s29.kind(), KIND_PARTIAL);
    }

    #[test]
    fn not_run_message_names_the_missing_capabilities() {
        assert_eq!(not_run_message(&[Capability::Threads]), "not run: backend lacks capability Threads");
        assert_eq!(
            not_run_message(&[Capability::BlockingHostFunctions, Capability::CheckedFree]),
            "not run: backend lacks capabilities BlockingHostFunctions, CheckedFree"
        );
    }

    #[test]
    fn backend_errors_and_panics_become_failures() {
        let all = scenarios::<Stub>();
        let failure = all[0].run_on(&Stub(&[])).unwrap_err();
        assert!(failure.to_string().contains("nothing here"), "{failure}");
        assert_eq!(failure.backend_error().unwrap().kind(), ErrorKind::NotSupported);

        fn panics(_: &Stub) -> ScenarioResult {
            panic!("backend exploded")
        }
        let bad =
            Scenario::<Stub> { number: 99, name: "panics", contract: "none", needs: &[], optional: &[], run: panics };
        let failure = bad.run_on(&Stub(&[])).unwrap_err();
        assert_eq!(failure.message(), "panicked: backend exploded");
    }

    #[test]
    fn macros_work_inside_scenarios() {
        fn check(h: &Stub) -> ScenarioResult {
            ensure!(h.supports(Capability::Threads), "no threads");
            ensure_eq!(h.0.len(), 1, "one capability");
            Ok(())
        }
        assert!(check(&Stub(&[Capability::Threads])).is_ok());
        assert!(check(&Stub(&[])).unwrap_err().message().starts_with("no threads"));
    }
}
