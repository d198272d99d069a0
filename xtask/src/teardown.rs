//! `cargo xtask teardown`: the teardown patterns of CANN's own programs
//! (`tests/c/teardown/`, the test `tests/c_teardown.rs`), 250 runs per program and profile
//! (1,000 in all), each with random worker delays; `cargo test` runs 13 per trial.

use crate::util::{Step, run};

/// Runs per program and profile.
const RUNS: &str = "250";

/// Runs the test `c_teardown` with `MEMPOOL_TEARDOWN_RUNS` set to [`RUNS`].
pub(crate) fn run_all() -> Result<(), String> {
    eprintln!("==> teardown patterns: {RUNS} runs per program (C, C++) and profile, random delays");
    let step = Step::new(
        "tests/c/teardown, 1,000 runs",
        &["test", "--release", "-p", "mempool-tests", "--test", "c_teardown", "--", "--nocapture"],
    )
    .env("MEMPOOL_TEARDOWN_RUNS", RUNS);
    run(&[step], &[])
}
