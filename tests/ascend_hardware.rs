//! The conformance suite and the C samples against the installed CANN runtime, behind a
//! switch: with `MEMPOOL_TEST_ASCEND=1` (on a machine with CANN and an Ascend device) this
//! test binary finds the runtime with the backend's normal search
//! (`MEMPOOL_ASCEND_LIBRARY`, `ASCEND_HOME_PATH`, ...), runs the probe, runs every
//! conformance scenario through the Ascend backend with the profile the probe found, compiles
//! the samples of `tests/c/samples/` against the project's headers and links them against
//! the installed library, runs them, and writes `target/ascend-report.md` with the probe
//! table and every result. Without the switch every trial is reported as ignored ("not
//! run"), never as passed.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12 (`mempool_hal::contract::profiles`).

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_ascend::Ascend;
use mempool_emu::Profile;
use mempool_tests::AscendHarness;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};

/// The switch.
const SWITCH: &str = "MEMPOOL_TEST_ASCEND";
const NOT_RUN: &str = "not run: set MEMPOOL_TEST_ASCEND=1 on a machine with CANN";

type Results = Arc<Mutex<Vec<(String, String)>>>;

fn main() {
    let args = Arguments::from_args();
    if std::env::var(SWITCH).as_deref() != Ok("1") {
        println!("{NOT_RUN}");
        let trials = ["ascend_hw::probe", "ascend_hw::conformance", "ascend_hw::c_samples"]
            .into_iter()
            .map(|name| Trial::test(name, || Err(NOT_RUN.into())).with_ignored_flag(true).with_kind("not-run"))
            .collect();
        libtest_mimic::run(&args, trials).exit();
    }
    let dev = Ascend::open(0).unwrap_or_else(|e| panic!("{SWITCH}=1 but no Ascend runtime was found: {e}"));
    let report = mempool_ascend::probe::run(&dev);
    println!("{report}");
    let profile = report.profile().unwrap_or(Profile::Documented);
    let library = dev.runtime().path().to_path_buf();
    drop(dev);
    let results: Results = Arc::default();
    let harness = Arc::new(AscendHarness { checked_free: false, profile });
    let mut trials = Vec::new();
    for sc in mempool_conformance::scenarios::<AscendHarness>() {
        let name = format!("ascend_hw::{}", sc.name);
        let missing = sc.missing(&harness);
        if !missing.is_empty() {
            let why = format!("not run: the backend lacks {missing:?} on hardware");
            results.lock().unwrap_or_else(PoisonError::into_inner).push((name.clone(), why.clone()));
            trials.push(Trial::test(name, move || Err(why.into())).with_ignored_flag(true).with_kind("not-run"));
            continue;
        }
        let (harness, results) = (Arc::clone(&harness), Arc::clone(&results));
        let trial_name = name.clone();
        trials.push(Trial::test(name, move || {
            let outcome = sc.run_on(&harness).map_err(|f| f.to_string());
            record(&results, &trial_name, &outcome);
            outcome.map_err(Failed::from)
        }));
    }
    let lib_dir = library_dir(&library);
    for src in samples() {
        let (results, lib_dir) = (Arc::clone(&results), lib_dir.clone());
        let name = format!("ascend_hw::c::{}", src.file_name().unwrap_or_default().to_string_lossy());
        let trial_name = name.clone();
        trials.push(Trial::test(name, move || {
            let outcome = sample(&src, &lib_dir);
            record(&results, &trial_name, &outcome);
            outcome.map_err(Failed::from)
        }));
    }
    let mut args = args;
    args.test_threads = Some(1); // one runtime, as the scenarios expect
    let conclusion = libtest_mimic::run(&args, trials);
    write_report(&library, &report, profile, &results);
    conclusion.exit()
}

fn record(results: &Results, name: &str, outcome: &Result<(), String>) {
    let line = match outcome {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("FAILED: {}", e.replace('\n', " ")),
    };
    results.lock().unwrap_or_else(PoisonError::into_inner).push((name.to_string(), line));
}

/// The folder the samples link against: `$ASCEND_HOME_PATH/lib64` when it holds the
/// library, else the folder of the library the backend loaded.
fn library_dir(loaded: &Path) -> PathBuf {
    std::env::var_os("ASCEND_HOME_PATH")
        .map(|h| PathBuf::from(h).join("lib64"))
        .filter(|d| d.join("libascendcl.so").exists() || d.join("libacl_rt.so").exists())
        .unwrap_or_else(|| loaded.parent().map_or_else(PathBuf::new, Path::to_path_buf))
}

fn samples() -> Vec<PathBuf> {
    let dir = xtask::c::programs().join("samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| xtask::c::Lang::of(p).is_some()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Compiles `src` against the project's headers, links it against the installed library
/// and runs it: it passes when it exits 0 and its last line says `0 failed`.
fn sample(src: &Path, lib_dir: &Path) -> Result<(), String> {
    let library =
        if lib_dir.join("libacl_rt.so").exists() { xtask::c::Library::AclRt } else { xtask::c::Library::AscendCl };
    let out = std::env::temp_dir().join(format!("mempool-hw-samples-{}", std::process::id()));
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let exe = out.join(src.file_stem().unwrap_or_default());
    xtask::c::compile(src, &exe, lib_dir, library, true)?;
    let mut cmd = Command::new(&exe);
    for var in mempool_emu::ENV_ALL {
        cmd.env_remove(var);
    }
    let run = cmd.output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&run.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    if run.status.success() && last.ends_with(" passed, 0 failed") {
        Ok(())
    } else {
        Err(format!(
            "{} ({}); last line: {last:?}; stderr: {}",
            src.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        ))
    }
}

fn write_report(library: &Path, report: &mempool_ascend::probe::ProbeReport, profile: Profile, results: &Results) {
    use std::fmt::Write;
    let mut md = String::new();
    let _ = writeln!(md, "# Ascend hardware report\n\nRuntime: `{}`\n\n## Probe\n\n{report}", library.display());
    let _ = writeln!(md, "Profile the scenarios expected: `{profile}`\n\n## Results\n\n| trial | result |\n|---|---|");
    let results = results.lock().unwrap_or_else(PoisonError::into_inner);
    for (name, line) in results.iter() {
        let _ = writeln!(md, "| {name} | {} |", line.replace('|', "\\|"));
    }
    // target/<profile>/deps/<binary>: the report goes to target/.
    let exe = std::env::current_exe().unwrap_or_default();
    let path =
        exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), Path::to_path_buf).join("ascend-report.md");
    match std::fs::write(&path, md) {
        Ok(()) => println!("report: {}", path.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
}
