//! The conformance suite over the Ascend backend and the drop-in library with the
//! emulator's `cann-open` profile (contract §12): no reuse, no release at synchronization.
//! A test binary of its own, since the library reads `MEMPOOL_EMU_PROFILE` once per process.

fn main() {
    // SAFETY: the first thing in `main`, before any thread starts.
    unsafe { mempool_tests::conformance_over_shim("ascend_shim_cann_open", mempool_emu::Profile::CannOpen) }
}
