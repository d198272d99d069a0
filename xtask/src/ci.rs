//! `cargo xtask ci`, what `.ci/run` runs: the README's test command, the C smoke program
//! and three of the C/C++ samples under valgrind memcheck, the feature combinations,
//! formatting, clippy, the docs with warnings denied, the publishable crates packaged,
//! tidy, and the Python package (not run, and said so, where there is no `python3`).

use crate::python::Outcome;
use crate::util::{Step, run, traces_env, workspace_root};
use crate::{features, package, python, tidy};
use xtask::c::{VALGRIND_VAR, valgrind_installed};

/// One step of the sequence.
pub(crate) enum Stage {
    /// A cargo command.
    Cargo(Step),
    /// The tests `tests/c_smoke.rs` and `tests/c_samples.rs` again, the smoke program and
    /// the samples of the valgrind list under valgrind memcheck.
    Valgrind,
    /// `cargo xtask features`.
    Features,
    /// `cargo xtask package`: the publishable crates packaged and verified.
    Package,
    /// `cargo xtask tidy`.
    Tidy,
    /// `cargo xtask python`: the wheel built, installed in a virtual environment and tested.
    Python,
}

/// The sequence, in order. Its first step is the README's test command (tidy checks it).
pub(crate) fn sequence() -> Vec<Stage> {
    vec![
        Stage::Cargo(Step::new("tests (the README's test command)", &["test", "--workspace"])),
        Stage::Valgrind,
        Stage::Features,
        Stage::Cargo(Step::new("formatting", &["fmt", "--all", "--check"])),
        Stage::Cargo(Step::new(
            "clippy",
            &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
        )),
        Stage::Cargo(Step::new("docs", &["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings")),
        Stage::Package,
        Stage::Tidy,
        Stage::Python,
    ]
}

/// Runs the sequence; stops at the first step that fails. A step that could not run (the
/// Python package without `python3`) is named at the end as not run, never as passed.
pub(crate) fn run_all() -> Result<(), String> {
    let extra = traces_env();
    let mut not_run = Vec::new();
    for stage in sequence() {
        match stage {
            Stage::Cargo(step) => run(&[step], &extra)?,
            Stage::Valgrind => valgrind(&extra)?,
            Stage::Features => features::run_all(&extra)?,
            Stage::Package => package::run_all(&extra)?,
            Stage::Tidy => tidy()?,
            Stage::Python => {
                if let Outcome::NotRun(why) = python::step()? {
                    not_run.push(format!("the Python package ({why})"));
                }
            }
        }
    }
    if not_run.is_empty() {
        eprintln!("==> ci: all steps passed");
    } else {
        eprintln!("==> ci: every step that ran passed; not run: {}", not_run.join("; "));
    }
    Ok(())
}

/// `tests/c/smoke.c` and three of the samples in `tests/c/samples/` (the list `VALGRIND` of
/// `tests/c_samples.rs`) on the drop-in library under valgrind memcheck: the two tests run
/// again with [`VALGRIND_VAR`] set, so the programs are built and checked the one way the
/// tests do it, and any memcheck error or definitely lost block fails (see
/// [`xtask::c::memcheck`]).
fn valgrind(extra: &[(String, String)]) -> Result<(), String> {
    eprintln!("==> the C smoke program, three samples and the teardown program under valgrind memcheck");
    if !valgrind_installed() {
        return Err("valgrind is not installed; this step needs it (e.g. apt-get install valgrind)".into());
    }
    let test = Step::new(
        "tests/c/smoke.c, three samples and tests/c/teardown/teardown.c under valgrind memcheck",
        &["test", "-p", "mempool-tests", "--test", "c_smoke", "--test", "c_samples", "--test", "c_teardown"],
    )
    .env(VALGRIND_VAR, "1");
    run(&[test], extra)
        .map_err(|e| format!("{e}: valgrind reported errors for tests/c/smoke.c or a sample (or a program failed)"))
}

/// `cargo xtask tidy`.
pub(crate) fn tidy() -> Result<(), String> {
    eprintln!("==> tidy");
    match tidy::check(&workspace_root(), first_step().as_deref()).as_slice() {
        [] => Ok(()),
        problems => Err(format!("{} hygiene problems:\n{}", problems.len(), problems.join("\n"))),
    }
}

/// The command line of the sequence's first step, `None` when it is not a cargo command:
/// tidy checks that it is the README's test command. Given to tidy from here, so that tidy
/// does not name this module back.
fn first_step() -> Option<String> {
    match sequence().into_iter().next() {
        Some(Stage::Cargo(step)) => Some(step.command_line()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_is_tidy() {
        let problems = tidy::check(&workspace_root(), first_step().as_deref());
        assert!(problems.is_empty(), "run `cargo xtask tidy`:\n{}", problems.join("\n"));
    }

    #[test]
    fn the_python_package_is_checked_last() {
        assert!(matches!(sequence().last(), Some(Stage::Python)));
    }
}
