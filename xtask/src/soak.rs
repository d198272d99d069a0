//! `cargo xtask soak`: the model-based property tests (`tests/model_props/`, the reference
//! model against the emulator) with many random cases, built in release mode: by default
//! 100,000 cases per profile in each execution mode (deferred and threaded). Not part of
//! `ci`: the normal test run already has a fast slice of each.
//!
//! Each run is one property test, `model_and_emulator_agree_<mode>_<profile>`, which prints
//! a line `model soak: <mode> <profile>: N cases, D divergences, T s`; the task collects
//! those lines and prints the counts per run and per profile, and the wall time.
//!
//! Environment (unset or empty: the default):
//!
//! - `MEMPOOL_SOAK_CASES`: deferred-mode cases per profile (default `PROPTEST_CASES`, else
//!   100,000);
//! - `MEMPOOL_SOAK_THREADED_CASES`: threaded-mode cases per profile (default the deferred
//!   count);
//! - `MEMPOOL_SOAK_PROFILE`: `documented`, `cann-open` or `both` (default);
//! - `MEMPOOL_SOAK_MODE`: `deferred`, `threaded` or `both` (default).

use crate::util::{cargo, workspace_root};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

const CASES_VAR: &str = "MEMPOOL_SOAK_CASES";
const THREADED_CASES_VAR: &str = "MEMPOOL_SOAK_THREADED_CASES";
const PROFILE_VAR: &str = "MEMPOOL_SOAK_PROFILE";
const MODE_VAR: &str = "MEMPOOL_SOAK_MODE";

/// The profiles and execution modes of the property tests.
const PROFILES: [&str; 2] = ["documented", "cann-open"];
const MODES: [&str; 2] = ["deferred", "threaded"];

/// One property test to run, with its number of cases.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    mode: &'static str,
    profile: &'static str,
    cases: u64,
}

impl Run {
    /// The test's name in `tests/model_props/main.rs`.
    fn test_name(&self) -> String {
        format!("model_and_emulator_agree_{}_{}", self.mode, self.profile.replace('-', "_"))
    }
}

/// The runs the environment asks for (`get` reads a variable).
fn plan(get: impl Fn(&str) -> Option<String>) -> Result<Vec<Run>, String> {
    let var = |name: &str| get(name).filter(|v| !v.trim().is_empty());
    let count = |name: &str| -> Result<Option<u64>, String> {
        var(name).map(|v| v.trim().parse::<u64>().map_err(|_| format!("{name}={v}: not a number of cases"))).transpose()
    };
    let cases = match count(CASES_VAR)? {
        Some(n) => n,
        None => count("PROPTEST_CASES")?.unwrap_or(100_000),
    };
    let threaded = count(THREADED_CASES_VAR)?.unwrap_or(cases);
    let choose = |name: &str, all: [&'static str; 2]| -> Result<Vec<&'static str>, String> {
        match var(name).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(all.to_vec()),
            Some(v) if v == "both" => Ok(all.to_vec()),
            Some(v) => all
                .iter()
                .find(|a| **a == v)
                .map(|a| vec![*a])
                .ok_or_else(|| format!("{name}={v}: expected {}, {} or both", all[0], all[1])),
        }
    };
    let (profiles, modes) = (choose(PROFILE_VAR, PROFILES)?, choose(MODE_VAR, MODES)?);
    let mut runs = Vec::new();
    for mode in modes {
        for &profile in &profiles {
            let cases = if mode == "threaded" { threaded } else { cases };
            if cases > 0 {
                runs.push(Run { mode, profile, cases });
            }
        }
    }
    Ok(runs)
}

/// What one property test reported: its mode and profile, cases, divergences, seconds.
#[derive(Debug, Clone, PartialEq)]
struct Report {
    mode: String,
    profile: String,
    cases: u64,
    divergences: u64,
    seconds: f64,
}

/// Reads a line `model soak: <mode> <profile>: N cases, D divergences, T s`.
fn parse_report(line: &str) -> Option<Report> {
    let rest = line.trim().strip_prefix("model soak: ")?;
    let (what, counts) = rest.split_once(": ")?;
    let (mode, profile) = what.split_once(' ')?;
    let mut fields = counts.split(", ");
    let mut number = |unit: &str| fields.next()?.strip_suffix(unit)?.trim().parse::<f64>().ok();
    let (cases, divergences, seconds) = (number(" cases")?, number(" divergences")?, number(" s")?);
    Some(Report {
        mode: mode.to_string(),
        profile: profile.to_string(),
        cases: cases as u64,
        divergences: divergences as u64,
        seconds,
    })
}

/// The summary: one line per run, then the totals per profile and the wall time.
fn summary(reports: &[Report], wall: f64) -> String {
    let mut out = String::from("soak summary:\n");
    for r in reports {
        out += &format!(
            "  {:<8} {:<10}  {:>7} cases  {} divergences  {:.1} s\n",
            r.mode, r.profile, r.cases, r.divergences, r.seconds
        );
    }
    for profile in PROFILES {
        let of: Vec<_> = reports.iter().filter(|r| r.profile == profile).collect();
        if !of.is_empty() {
            let cases: u64 = of.iter().map(|r| r.cases).sum();
            let divergences: u64 = of.iter().map(|r| r.divergences).sum();
            out += &format!("  {profile}: {cases} cases in all, {divergences} divergences\n");
        }
    }
    let divergences: u64 = reports.iter().map(|r| r.divergences).sum();
    out += &format!("  divergences: {divergences}; wall time {wall:.1} s\n");
    out
}

/// Runs one property test in release mode, echoing its output; returns its report.
fn run_one(run: &Run) -> Result<Option<Report>, String> {
    let test = run.test_name();
    let args =
        ["test", "--release", "-p", "mempool-tests", "--test", "model_props", "--", &test, "--exact", "--nocapture"];
    eprintln!(
        "==> the reference model against the emulator, {} {}, {} cases: cargo {}",
        run.mode,
        run.profile,
        run.cases,
        args.join(" ")
    );
    let mut child = Command::new(cargo())
        .args(args)
        .env("PROPTEST_CASES", run.cases.to_string())
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let mut report = None;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("reading the test's output: {e}"))?;
            println!("{line}");
            report = report.or_else(|| parse_report(&line));
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for cargo: {e}"))?;
    if !status.success() {
        return Err(format!("{test} failed ({status})"));
    }
    Ok(report)
}

pub(crate) fn run_all() -> Result<(), String> {
    let runs = plan(|name| std::env::var(name).ok())?;
    let start = Instant::now();
    let mut reports = Vec::new();
    let mut failure = None;
    for run in &runs {
        match run_one(run) {
            Ok(Some(r)) => reports.push(r),
            Ok(None) => {
                failure = Some(format!("{}: no `model soak:` line in its output", run.test_name()));
                break;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    println!("{}", summary(&reports, start.elapsed().as_secs_f64()));
    match failure {
        Some(e) => Err(e),
        None if reports.iter().any(|r| r.divergences > 0) => Err("the model and the emulator diverged".to_string()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_soak_runs_100000_cases_per_profile_by_default() {
        let runs = plan(env(&[])).unwrap();
        let names: Vec<_> = runs.iter().map(|r| (r.test_name(), r.cases)).collect();
        assert_eq!(
            names,
            [
                ("model_and_emulator_agree_deferred_documented".to_string(), 100_000),
                ("model_and_emulator_agree_deferred_cann_open".to_string(), 100_000),
                ("model_and_emulator_agree_threaded_documented".to_string(), 100_000),
                ("model_and_emulator_agree_threaded_cann_open".to_string(), 100_000),
            ]
        );
    }

    #[test]
    fn the_environment_chooses_cases_profiles_and_modes() {
        let runs = plan(env(&[("PROPTEST_CASES", "500"), (PROFILE_VAR, "cann-open")])).unwrap();
        assert_eq!(
            runs,
            [
                Run { mode: "deferred", profile: "cann-open", cases: 500 },
                Run { mode: "threaded", profile: "cann-open", cases: 500 },
            ]
        );
        let runs = plan(env(&[
            ("PROPTEST_CASES", "9"),
            (CASES_VAR, "2000"),
            (MODE_VAR, "Threaded"),
            (THREADED_CASES_VAR, "7"),
        ]))
        .unwrap();
        assert_eq!(
            runs,
            [
                Run { mode: "threaded", profile: "documented", cases: 7 },
                Run { mode: "threaded", profile: "cann-open", cases: 7 },
            ]
        );
        assert!(plan(env(&[(CASES_VAR, "many")])).unwrap_err().contains("MEMPOOL_SOAK_CASES=many"));
        assert!(plan(env(&[(PROFILE_VAR, "cuda")])).unwrap_err().contains("documented, cann-open or both"));
        assert_eq!(plan(env(&[(MODE_VAR, "")])).unwrap().len(), 4, "empty is unset");
    }

    #[test]
    fn reports_are_read_and_summed_per_profile() {
        let r = parse_report("model soak: deferred cann-open: 100000 cases, 0 divergences, 81.5 s").unwrap();
        assert_eq!(
            r,
            Report {
                mode: "deferred".into(),
                profile: "cann-open".into(),
                cases: 100_000,
                divergences: 0,
                seconds: 81.5
            }
        );
        assert_eq!(parse_report("test result: ok. 1 passed"), None);
        let other = Report { mode: "threaded".into(), cases: 10_000, seconds: 9.0, ..r.clone() };
        let s = summary(&[r, other], 100.0);
        assert!(s.contains("cann-open: 110000 cases in all, 0 divergences"), "{s}");
        assert!(s.contains("divergences: 0; wall time 100.0 s"), "{s}");
        assert!(!s.contains("documented:"), "{s}");
    }
}
