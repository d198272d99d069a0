//! The conformance suite (contract §10 (`mempool_hal::contract::conformance`)) over every backend of the workspace.
//! Scenarios a backend cannot run are reported as ignored ("not run"), never as passed.

use mempool_emu::ExecutionMode;
use mempool_tests::EmuHarness;

mempool_conformance::conformance_main! {
    "emu_threaded" => EmuHarness { mode: ExecutionMode::Threaded },
    "emu_deferred" => EmuHarness { mode: ExecutionMode::Deferred },
}
