//! The conformance suite (contract §10) over the emulator: every scenario in both execution
//! modes and the three profiles (contract §12: `documented`, `cann-open`, `cuda`), each
//! combination an rstest case of its own, named
//! `<scenario>::mode_<n>_<mode>::profile_<n>_<profile>` (for instance
//! `s11_same_stream_reuse::mode_2_Deferred::profile_2_CannOpen`). The emulator offers every
//! capability the scenarios need, so none is skipped.
//!
//! The scenarios of virtual memory (contract §14) run the same way, in module `vmm`.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`),
//! §14 (`mempool_hal::contract::vmm`).

use mempool_emu::ExecutionMode::{self, Deferred, Threaded};
use mempool_emu::Profile::{self, CannOpen, Cuda, Documented};
use mempool_tests::{EmuHarness, check_scenario_names, run_scenario};
use rstest::rstest;

macro_rules! scenario_tests {
    ($($name:ident),* $(,)?) => {
        const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[rstest]
            fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode, #[values(Documented, CannOpen, Cuda)] profile: Profile) {
                run_scenario(stringify!($name), &EmuHarness { mode, profile });
            }
        )*
    };
}

mempool_tests::each_scenario!(scenario_tests);

#[test]
fn every_scenario_of_the_suite_runs() {
    check_scenario_names::<EmuHarness>(SCENARIOS);
}

mod vmm {
    use super::*;
    use mempool_tests::{check_vmm_scenario_names, run_vmm_scenario};

    macro_rules! vmm_scenario_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode, #[values(Documented, CannOpen, Cuda)] profile: Profile) {
                    run_vmm_scenario(stringify!($name), &EmuHarness { mode, profile });
                }
            )*
        };
    }

    mempool_tests::each_vmm_scenario!(vmm_scenario_tests);

    #[test]
    fn every_vmm_scenario_of_the_suite_runs() {
        check_vmm_scenario_names::<EmuHarness>(SCENARIOS);
    }
}

/// The host registration scenarios (contract §15) over the emulator, in both execution
/// modes (the profile changes nothing for them).
mod host_register {
    use super::*;
    use mempool_tests::{check_host_register_names, run_host_register_scenario};

    macro_rules! host_register_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode) {
                    run_host_register_scenario(stringify!($name), &EmuHarness { mode, profile: Documented });
                }
            )*
        };
    }

    mempool_tests::each_host_register_scenario!(host_register_tests);

    #[test]
    fn every_host_register_scenario_runs() {
        check_host_register_names::<EmuHarness>(SCENARIOS);
    }
}

/// The peer-access scenario over two devices of one emulated platform, in both execution
/// modes.
mod peer {
    use super::*;

    #[rstest]
    fn p01_peer_access(#[values(Threaded, Deferred)] mode: ExecutionMode) {
        let harness = EmuHarness { mode, profile: Documented };
        let scenarios = mempool_conformance::peer_scenarios::<EmuHarness>();
        assert_eq!(scenarios.iter().map(|s| s.name).collect::<Vec<_>>(), ["p01_peer_access"]);
        if let Err(f) = scenarios[0].run_on(&harness) {
            panic!("p01_peer_access: {f}");
        }
    }
}
