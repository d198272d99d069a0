//! Shared pieces of the workspace integration tests: the conformance harnesses of the
//! backends built in this workspace.

use mempool::Result;
use mempool_conformance::{Capability, Harness};
use mempool_emu::{EmuStream, Emulator, ExecutionMode};

/// The emulator under the conformance suite, in one execution mode, with small granules
/// (64 KiB) and a 1 GiB device so the suite runs fast.
#[derive(Debug, Clone, Copy)]
pub struct EmuHarness {
    /// Threaded or deferred.
    pub mode: ExecutionMode,
}

impl Harness for EmuHarness {
    type Device = Emulator;

    fn device(&self) -> Result<Emulator> {
        Emulator::builder().granularity(64 << 10).device_memory(1 << 30).mode(self.mode).build()
    }

    fn supports(&self, cap: Capability) -> bool {
        // The emulator offers every capability in both modes.
        let _ = cap;
        true
    }

    fn let_run(&self, dev: &Emulator, stream: &EmuStream) -> Result<()> {
        dev.run_pending(stream)
    }
}
