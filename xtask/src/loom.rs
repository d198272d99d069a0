//! `cargo xtask loom`: the model check of the emulator's concurrency core
//! (`backends/emu/tests/loom.rs`, docs/testing.md). The emulator and its test are built
//! with `--cfg loom` (its locks, condition variables, atomics and threads become loom's,
//! `backends/emu/src/sync.rs`) in release mode, in their own target folder
//! (`target/loom`), so the normal build stays valid; loom then runs each small program in
//! every interleaving with at most [`FULL_PREEMPTIONS`] preemptions.
//!
//! Each test prints `loom: NAME: N interleavings in T`; the task prints them with their
//! total and the wall time, and fails when a test fails or nothing was explored.
//!
//! Environment: `LOOM_MAX_PREEMPTIONS` (loom's own) sets the bound instead; empty or `none`
//! explores every interleaving, without a bound (long).
//!
//! The same command with a bound of 1 (`SMALL_PREEMPTIONS`) is a test of this crate, so
//! `cargo test --workspace` runs a small configuration of the check.

use crate::util::{cargo, target_dir, workspace_root};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The preemption bound of `cargo xtask loom`.
const FULL_PREEMPTIONS: u32 = 3;
/// The preemption bound of the check `cargo test --workspace` runs.
#[cfg(test)]
const SMALL_PREEMPTIONS: u32 = 1;

const BOUND_VAR: &str = "LOOM_MAX_PREEMPTIONS";

/// What one model reported: its name, interleavings explored, and the time it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Report {
    name: String,
    interleavings: u64,
    time: String,
}

/// Reads a line `loom: NAME: N interleavings in T` (libtest may print the test's name
/// before it on the same line).
fn parse_report(line: &str) -> Option<Report> {
    let rest = &line[line.find("loom: ")? + "loom: ".len()..];
    let (name, counts) = rest.rsplit_once(": ")?;
    let (n, time) = counts.split_once(" interleavings in ")?;
    Some(Report { name: name.to_string(), interleavings: n.trim().parse().ok()?, time: time.trim().to_string() })
}

/// The summary: one line per model, then the total and the wall time.
fn summary(bound: &str, reports: &[Report], wall: f64) -> String {
    let mut out = format!("loom summary (preemption bound {bound}):\n");
    for r in reports {
        out += &format!("  {:<26} {:>9} interleavings  {}\n", r.name, r.interleavings, r.time);
    }
    let total: u64 = reports.iter().map(|r| r.interleavings).sum();
    out += &format!("  {} models, {total} interleavings in all; wall time {wall:.1} s\n", reports.len());
    out
}

/// The bound to run with: `LOOM_MAX_PREEMPTIONS` when set (`none` or empty: no bound),
/// else `default`. `None` is no bound.
fn bound(var: Option<String>, default: u32) -> Result<Option<u32>, String> {
    match var.as_deref().map(str::trim) {
        None => Ok(Some(default)),
        Some("" | "none") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| format!("{BOUND_VAR}={v}: not a number of preemptions")),
    }
}

/// Builds and runs the model check with `bound` preemptions (`None`: every interleaving),
/// echoing its output when `echo`; returns the reports and the wall time in seconds.
fn check(bound: Option<u32>, echo: bool) -> Result<(Vec<Report>, f64), String> {
    let args = ["test", "-p", "mempool-emu", "--test", "loom", "--release", "--", "--nocapture", "--test-threads", "1"];
    // Flags already given to the build (by the environment) are kept.
    let rustflags = match std::env::var("RUSTFLAGS") {
        Ok(f) if !f.trim().is_empty() => format!("{f} --cfg loom"),
        _ => "--cfg loom".to_string(),
    };
    let target = target_dir().join("loom");
    if echo {
        eprintln!(
            "==> the model check: RUSTFLAGS='{rustflags}' CARGO_TARGET_DIR={} {BOUND_VAR}={} cargo {}",
            target.display(),
            bound.map_or("none".to_string(), |b| b.to_string()),
            args.join(" ")
        );
    }
    let mut cmd = Command::new(cargo());
    cmd.args(args)
        .env("RUSTFLAGS", &rustflags)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(workspace_root())
        .stdout(Stdio::piped());
    match bound {
        Some(b) => cmd.env(BOUND_VAR, b.to_string()),
        None => cmd.env_remove(BOUND_VAR),
    };
    if !echo {
        cmd.stderr(Stdio::piped());
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot run cargo: {e}"))?;
    // Read stderr on its own thread so that neither pipe fills while the other is read.
    let stderr = child.stderr.take().map(|err| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(err), &mut s);
            s
        })
    });
    let mut reports = Vec::new();
    let mut output = String::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("reading the test's output: {e}"))?;
            if echo {
                println!("{line}");
            }
            reports.extend(parse_report(&line));
            output += &line;
            output.push('\n');
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for cargo: {e}"))?;
    let wall = start.elapsed().as_secs_f64();
    if !status.success() {
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        return Err(format!("the model check failed ({status})\n{output}{err}"));
    }
    if reports.is_empty() || reports.iter().any(|r| r.interleavings == 0) {
        return Err(format!("the model check explored nothing\n{output}"));
    }
    Ok((reports, wall))
}

pub(crate) fn run_all() -> Result<(), String> {
    let bound = bound(std::env::var(BOUND_VAR).ok(), FULL_PREEMPTIONS)?;
    let (reports, wall) = check(bound, true)?;
    println!("{}", summary(&bound.map_or("none".to_string(), |b| b.to_string()), &reports, wall));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_read_and_summed() {
        let r = parse_report("test reuse_through_an_event ... loom: event dependency: 3712 interleavings in 677.0ms");
        assert_eq!(r, Some(Report { name: "event dependency".into(), interleavings: 3712, time: "677.0ms".into() }));
        assert_eq!(parse_report("test result: ok. 7 passed"), None);
        assert_eq!(parse_report("loom: x: many interleavings in 1s"), None);
        let s = summary("2", &[r.unwrap(), Report { name: "stats".into(), interleavings: 8, time: "1ms".into() }], 3.0);
        assert!(s.contains("2 models, 3720 interleavings in all; wall time 3.0 s"), "{s}");
        assert!(s.starts_with("loom summary (preemption bound 2)"), "{s}");
    }

    #[test]
    fn the_bound_comes_from_loom_s_variable() {
        assert_eq!(bound(None, 3), Ok(Some(3)));
        assert_eq!(bound(Some("5".into()), 3), Ok(Some(5)));
        assert_eq!(bound(Some("none".into()), 3), Ok(None));
        assert_eq!(bound(Some(String::new()), 3), Ok(None));
        assert!(bound(Some("lots".into()), 3).unwrap_err().contains("LOOM_MAX_PREEMPTIONS=lots"));
    }

    /// The small configuration: every model with at most [`SMALL_PREEMPTIONS`]
    /// preemptions. The first run builds the emulator with `--cfg loom` in `target/loom`.
    #[test]
    fn the_emulator_passes_a_small_model_check() {
        let (reports, wall) = check(Some(SMALL_PREEMPTIONS), false).unwrap_or_else(|e| panic!("{e}"));
        println!("{}", summary(&SMALL_PREEMPTIONS.to_string(), &reports, wall));
        assert!(reports.len() >= 7, "every model ran: {reports:?}");
    }
}
