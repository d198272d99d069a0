//! The conformance suite (contract §10) over the emulator, in both execution modes and
//! both profiles (contract §12). Scenarios a backend cannot run are reported as ignored
//! ("not run"), never as passed.

use mempool_emu::{ExecutionMode, Profile};
use mempool_tests::EmuHarness;

mempool_conformance::conformance_main! {
    "emu_threaded" => EmuHarness { mode: ExecutionMode::Threaded, profile: Profile::Documented },
    "emu_deferred" => EmuHarness { mode: ExecutionMode::Deferred, profile: Profile::Documented },
    "emu_threaded_cann_open" => EmuHarness { mode: ExecutionMode::Threaded, profile: Profile::CannOpen },
    "emu_deferred_cann_open" => EmuHarness { mode: ExecutionMode::Deferred, profile: Profile::CannOpen },
}
