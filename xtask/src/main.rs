//! Project automation, in plain Rust: `cargo xtask <task>`.
//!
//! - `ci`: what `.ci/run` runs: the README's test command, then formatting, clippy and
//!   the docs with warnings denied.

use std::process::{Command, ExitCode};

/// One step of a task: a description and a cargo command line.
struct Step {
    what: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const CI: &[Step] = &[
    Step { what: "tests (the README's test command)", args: &["test", "--workspace"], env: &[] },
    Step { what: "formatting", args: &["fmt", "--all", "--check"], env: &[] },
    Step {
        what: "clippy",
        args: &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
        env: &[],
    },
    Step { what: "docs", args: &["doc", "--workspace", "--no-deps"], env: &[("RUSTDOCFLAGS", "-D warnings")] },
];

fn run(steps: &[Step]) -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    for step in steps {
        eprintln!("==> {}: cargo {}", step.what, step.args.join(" "));
        let status = Command::new(&cargo).args(step.args).envs(step.env.iter().copied()).status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => {
                eprintln!("xtask: {} failed ({s})", step.what);
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("xtask: cannot run cargo: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("ci") => run(CI),
        _ => {
            eprintln!("usage: cargo xtask <task>\n\ntasks:\n  ci    tests, fmt, clippy and docs, as .ci/run does");
            ExitCode::from(2)
        }
    }
}
