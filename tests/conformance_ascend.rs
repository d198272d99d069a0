//! The conformance suite over the Ascend backend: its real loading and FFI code, finding
//! the drop-in `libacl_rt.so` through `ASCEND_HOME_PATH` as it would find CANN.
//!
//! The scenarios share one runtime (as on hardware), so they run one at a time.

use mempool_tests::{AscendHarness, shim_home};
use std::sync::Arc;

fn main() {
    let home = shim_home();
    // SAFETY: set before any thread of this process starts (the first thing in `main`),
    // so nothing reads the environment concurrently.
    unsafe {
        std::env::set_var("ASCEND_HOME_PATH", home.path());
        std::env::remove_var(mempool_ascend::ENV_LIBRARY);
        std::env::set_var(mempool_acl_shim_env::GRANULARITY, (64u64 << 10).to_string());
        std::env::set_var(mempool_acl_shim_env::DEVICE_MEMORY, (1u64 << 30).to_string());
    }
    let dev = mempool_ascend::Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
    assert!(
        dev.runtime().path().starts_with(home.path()),
        "loaded {} instead of the laid-out shim",
        dev.runtime().path().display()
    );
    assert_eq!(mempool_hal::Device::pool_granularity(&dev), 64 << 10, "the probe measures the shim's granularity");
    println!("runtime: {}", dev.runtime().path().display());
    drop(dev);
    let mut args = libtest_mimic::Arguments::from_args();
    args.test_threads = Some(1);
    let trials = mempool_conformance::trials("ascend_shim", Arc::new(AscendHarness { checked_free: true }));
    let conclusion = libtest_mimic::run(&args, trials);
    drop(home); // `exit` skips destructors.
    conclusion.exit()
}

/// The shim's configuration variables.
mod mempool_acl_shim_env {
    pub use acl_rt::{ENV_DEVICE_MEMORY as DEVICE_MEMORY, ENV_GRANULARITY as GRANULARITY};
}
