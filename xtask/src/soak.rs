//! `cargo xtask soak`: the model-based property test (`tests/model_props/`, the reference
//! model against the emulator) with 100,000 random cases, built in release mode. Not part
//! of `ci`: the normal test run already has a smaller number of cases.

use crate::util::{Step, run};

pub(crate) fn run_all() -> Result<(), String> {
    let step = Step::new(
        "the reference model against the emulator, 100,000 cases",
        &["test", "--release", "-p", "mempool-tests", "--test", "model_props", "--", "model_and_emulator_agree"],
    )
    .env("PROPTEST_CASES", "100000");
    run(&[step], &[])
}
