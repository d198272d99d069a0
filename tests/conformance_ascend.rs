//! The conformance suite over the Ascend backend: its real loading and FFI code, finding
//! the drop-in `libacl_rt.so` through `ASCEND_HOME_PATH` as it would find CANN, on both of
//! the emulator's profiles (contract §12). Every scenario on each profile is an rstest case
//! of its own (`<scenario>::profile_1_Documented`, `<scenario>::profile_2_CannOpen`), run in a
//! child process of this binary (`mempool_tests::on_profile_with`), since the library reads
//! `MEMPOOL_EMU_PROFILE` once per process: each scenario gets a runtime of its own.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`).

use mempool_emu::Profile::{self, CannOpen, Documented};
use mempool_tests::{AscendHarness, check_scenario_names, run_scenario};
use rstest::rstest;

/// Runs scenario `name` through the Ascend backend over the drop-in library on `profile`,
/// in a child process with the library laid out for it.
fn on_shim(name: &str, profile: Profile) {
    let home = mempool_tests::shim_home();
    mempool_tests::on_profile_with(profile, &mempool_tests::shim_conformance_env(&home), |profile| {
        mempool_tests::check_shim_conformance_runtime(profile);
        run_scenario(name, &AscendHarness { checked_free: true, profile });
    });
}

macro_rules! scenario_tests {
    ($($name:ident),* $(,)?) => {
        const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[rstest]
            fn $name(#[values(Documented, CannOpen)] profile: Profile) {
                on_shim(stringify!($name), profile);
            }
        )*
    };
}

mempool_tests::each_scenario!(scenario_tests);

#[test]
fn every_scenario_of_the_suite_runs() {
    check_scenario_names::<AscendHarness>(SCENARIOS);
}

/// The scenarios of virtual memory (contract §14) through the Ascend backend over the
/// drop-in library, on both profiles, each in a child process of its own.
mod vmm {
    use super::*;
    use mempool_tests::{check_vmm_scenario_names, run_vmm_scenario};

    fn on_shim(name: &str, profile: Profile) {
        let home = mempool_tests::shim_home();
        mempool_tests::on_profile_with(profile, &mempool_tests::shim_conformance_env(&home), |profile| {
            mempool_tests::check_shim_conformance_runtime(profile);
            run_vmm_scenario(name, &AscendHarness { checked_free: true, profile });
        });
    }

    macro_rules! vmm_scenario_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(Documented, CannOpen)] profile: Profile) {
                    on_shim(stringify!($name), profile);
                }
            )*
        };
    }

    mempool_tests::each_vmm_scenario!(vmm_scenario_tests);

    #[test]
    fn every_vmm_scenario_of_the_suite_runs() {
        check_vmm_scenario_names::<AscendHarness>(SCENARIOS);
    }
}

/// The host registration scenarios (contract §15) through the Ascend backend over the
/// drop-in library, on both profiles, each in a child process of its own.
mod host_register {
    use super::*;
    use mempool_tests::{check_host_register_names, run_host_register_scenario};

    macro_rules! host_register_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(Documented, CannOpen)] profile: Profile) {
                    let home = mempool_tests::shim_home();
                    mempool_tests::on_profile_with(profile, &mempool_tests::shim_conformance_env(&home), |profile| {
                        mempool_tests::check_shim_conformance_runtime(profile);
                        run_host_register_scenario(stringify!($name), &AscendHarness { checked_free: true, profile });
                    });
                }
            )*
        };
    }

    mempool_tests::each_host_register_scenario!(host_register_tests);

    #[test]
    fn every_host_register_scenario_runs() {
        check_host_register_names::<AscendHarness>(SCENARIOS);
    }
}

/// The peer-access scenario through the Ascend backend over the drop-in library with two
/// emulated devices (`aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`,
/// `aclrtDeviceDisablePeerAccess`), on both profiles.
#[rstest]
fn p01_peer_access(#[values(Documented, CannOpen)] profile: Profile) {
    let home = mempool_tests::shim_home();
    let mut env = mempool_tests::shim_conformance_env(&home);
    env.retain(|(k, _)| *k != mempool_emu::ENV_DEVICES);
    env.push((mempool_emu::ENV_DEVICES, "2".into()));
    mempool_tests::on_profile_with(profile, &env, |profile| {
        mempool_tests::check_shim_conformance_runtime(profile);
        let harness = AscendHarness { checked_free: true, profile };
        let scenarios = mempool_conformance::peer_scenarios::<AscendHarness>();
        if let Err(f) = scenarios[0].run_on(&harness) {
            panic!("p01_peer_access: {f}");
        }
    });
}
