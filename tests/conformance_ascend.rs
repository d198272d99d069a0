//! The conformance suite over the Ascend backend: its real loading and FFI code, finding
//! the drop-in `libacl_rt.so` through `ASCEND_HOME_PATH` as it would find CANN, with the
//! emulator's `documented` profile (`conformance_ascend_cann_open` runs `cann-open`).
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`).

fn main() {
    // SAFETY: the first thing in `main`, before any thread starts.
    unsafe { mempool_tests::conformance_over_shim("ascend_shim", mempool_emu::Profile::Documented) }
}
