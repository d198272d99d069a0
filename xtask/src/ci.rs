//! `cargo xtask ci`, what `.ci/run` runs: the README's test command, the C smoke program
//! under valgrind memcheck, the feature combinations, formatting, clippy, the docs with
//! warnings denied, and tidy.

use crate::util::{Step, run, traces_env, workspace_root};
use crate::{features, tidy};
use xtask::c::{VALGRIND_VAR, valgrind_installed};

/// One step of the sequence.
pub(crate) enum Stage {
    /// A cargo command.
    Cargo(Step),
    /// The test `tests/c_smoke.rs` again, its program under valgrind memcheck.
    ValgrindSmoke,
    /// `cargo xtask features`.
    Features,
    /// `cargo xtask tidy`.
    Tidy,
}

/// The sequence, in order. Its first step is the README's test command (tidy checks it).
pub(crate) fn sequence() -> Vec<Stage> {
    vec![
        Stage::Cargo(Step::new("tests (the README's test command)", &["test", "--workspace"])),
        Stage::ValgrindSmoke,
        Stage::Features,
        Stage::Cargo(Step::new("formatting", &["fmt", "--all", "--check"])),
        Stage::Cargo(Step::new(
            "clippy",
            &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
        )),
        Stage::Cargo(Step::new("docs", &["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings")),
        Stage::Tidy,
    ]
}

/// Runs the sequence; stops at the first step that fails.
pub(crate) fn run_all() -> Result<(), String> {
    let extra = traces_env();
    for stage in sequence() {
        match stage {
            Stage::Cargo(step) => run(&[step], &extra)?,
            Stage::ValgrindSmoke => valgrind_smoke(&extra)?,
            Stage::Features => features::run_all(&extra)?,
            Stage::Tidy => tidy()?,
        }
    }
    eprintln!("==> ci: all steps passed");
    Ok(())
}

/// `tests/c/smoke.c` on the drop-in library under valgrind memcheck: the smoke test run
/// again with [`VALGRIND_VAR`] set, so its program is built and checked the one way the
/// test does it, and any memcheck error or definitely lost block fails (see
/// [`xtask::c::memcheck`]).
fn valgrind_smoke(extra: &[(String, String)]) -> Result<(), String> {
    eprintln!("==> the C smoke program under valgrind memcheck");
    if !valgrind_installed() {
        return Err("valgrind is not installed; this step needs it (e.g. apt-get install valgrind)".into());
    }
    let test =
        Step::new("tests/c/smoke.c under valgrind memcheck", &["test", "-p", "mempool-tests", "--test", "c_smoke"])
            .env(VALGRIND_VAR, "1");
    run(&[test], extra)
        .map_err(|e| format!("{e}: valgrind reported errors for tests/c/smoke.c (or the program failed)"))
}

/// `cargo xtask tidy`.
pub(crate) fn tidy() -> Result<(), String> {
    eprintln!("==> tidy");
    match tidy::check(&workspace_root()).as_slice() {
        [] => Ok(()),
        problems => Err(format!("{} hygiene problems:\n{}", problems.len(), problems.join("\n"))),
    }
}
