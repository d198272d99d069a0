//! The conformance suite over the CUDA backend: its real loading and FFI code, finding the
//! project's CPU `libcuda.so.1` (the emulator behind CUDA's driver calls) through
//! `MEMPOOL_CUDA_LIBRARY` as it would find NVIDIA's driver. Every scenario is a test of its
//! own on each device of a two-device CPU driver (`<scenario>::device_1_0`,
//! `<scenario>::device_2_1`), run in a child process of this binary
//! (`mempool_tests::on_profile_with`) on the emulator's `cuda` profile, so each scenario
//! gets a driver of its own; where CUDA's
//! documented answer differs from Ascend's (reuse flags on at creation, `trim_to` below
//! USED, HIGH reset to CURRENT, `CUresult` codes), the scenario asserts CUDA's.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`).

use mempool_emu::Profile;
use mempool_tests::{CudaHarness, check_scenario_names, run_scenario};
use rstest::rstest;

/// Runs scenario `name` through the CUDA backend over the CPU `libcuda.so.1`, in a child
/// process with the library laid out for it.
fn on_cuda_shim(name: &str, device: u32) {
    let home = mempool_tests::cuda_shim_home();
    mempool_tests::on_profile_with(Profile::Cuda, &mempool_tests::cuda_conformance_env(&home), |profile| {
        mempool_tests::check_cuda_conformance_runtime();
        run_scenario(name, &CudaHarness { profile, device });
    });
}

macro_rules! scenario_tests {
    ($($name:ident),* $(,)?) => {
        const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[rstest]
            fn $name(#[values(0, 1)] device: u32) {
                on_cuda_shim(stringify!($name), device);
            }
        )*
    };
}

mempool_tests::each_scenario!(scenario_tests);

#[test]
fn every_scenario_of_the_suite_runs() {
    check_scenario_names::<CudaHarness>(SCENARIOS);
}

/// The scenarios of virtual memory (contract §14) through the CUDA backend over the CPU
/// `libcuda.so.1` on the `cuda` profile, on each device, each in a child process of its own.
mod vmm {
    use super::*;
    use mempool_tests::{check_vmm_scenario_names, run_vmm_scenario};

    fn on_cuda_shim(name: &str, device: u32) {
        let home = mempool_tests::cuda_shim_home();
        mempool_tests::on_profile_with(Profile::Cuda, &mempool_tests::cuda_conformance_env(&home), |profile| {
            mempool_tests::check_cuda_conformance_runtime();
            run_vmm_scenario(name, &CudaHarness { profile, device });
        });
    }

    macro_rules! vmm_scenario_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(0, 1)] device: u32) {
                    on_cuda_shim(stringify!($name), device);
                }
            )*
        };
    }

    mempool_tests::each_vmm_scenario!(vmm_scenario_tests);

    #[test]
    fn every_vmm_scenario_of_the_suite_runs() {
        check_vmm_scenario_names::<CudaHarness>(SCENARIOS);
    }
}

/// The host registration scenarios (contract §15) through the CUDA backend over the CPU
/// `libcuda.so.1`, on each device, each in a child process of its own.
mod host_register {
    use super::*;
    use mempool_tests::{check_host_register_names, run_host_register_scenario};

    macro_rules! host_register_tests {
        ($($name:ident),* $(,)?) => {
            const SCENARIOS: &[&str] = &[$(stringify!($name)),*];
            $(
                #[rstest]
                fn $name(#[values(0, 1)] device: u32) {
                    let home = mempool_tests::cuda_shim_home();
                    mempool_tests::on_profile_with(Profile::Cuda, &mempool_tests::cuda_conformance_env(&home), |profile| {
                        mempool_tests::check_cuda_conformance_runtime();
                        run_host_register_scenario(stringify!($name), &CudaHarness { profile, device });
                    });
                }
            )*
        };
    }

    mempool_tests::each_host_register_scenario!(host_register_tests);

    #[test]
    fn every_host_register_scenario_runs() {
        check_host_register_names::<CudaHarness>(SCENARIOS);
    }
}

/// The peer-access scenario over devices 0 and 1 of the CPU `libcuda.so.1`, answered the
/// driver's way (`cuDeviceCanAccessPeer`, `cuCtxEnablePeerAccess`, `cuCtxDisablePeerAccess`).
#[test]
fn p01_peer_access() {
    let home = mempool_tests::cuda_shim_home();
    mempool_tests::on_profile_with(Profile::Cuda, &mempool_tests::cuda_conformance_env(&home), |profile| {
        mempool_tests::check_cuda_conformance_runtime();
        let harness = CudaHarness { profile, device: 0 };
        let scenarios = mempool_conformance::peer_scenarios::<CudaHarness>();
        if let Err(f) = scenarios[0].run_on(&harness) {
            panic!("p01_peer_access: {f}");
        }
    });
}
