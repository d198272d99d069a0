//! The CANN-style samples in `tests/c/samples/`: C11 and C++17 programs written for the ACL
//! runtime API, compiled with `-Wall -Wextra -Werror` against the project's headers
//! (`#include <acl/acl.h>`, the compiler line is `xtask::c::compile`), linked against the
//! drop-in library and run on the emulator with every `MEMPOOL_EMU_*` setting cleared
//! except those of [`ENV`] and `MEMPOOL_EMU_PROFILE`. Each program checks its own results,
//! exits non-zero on any failure and prints `<file>: N passed, M failed` last; a sample
//! passes when it exits 0 and that line says `0 failed`.
//!
//! Every sample runs on both profiles of contract §12 (`documented` and `cann-open`), each
//! in a process of its own, so the library reads the profile at its first call: every
//! `.c`, `.cpp`, `.cc` and `.cxx` file of the folder is two trials, `documented::<file>` and
//! `cann-open::<file>` (compiled once), and a new sample runs without being listed. A CANN
//! program cannot ask the runtime which behaviour it has, so the samples whose checks depend
//! on reuse or release at synchronization ([`MEASURES_RUNTIME`]) measure it
//! (`sample_runtime.h`) and print one `runtime:` line, which the trial compares with the
//! profile it set.
//!
//! Two lists hold back the samples that use what the library does not offer yet:
//! [`NEEDS_NEWER_LIBRARY`] (compiled, not run) and [`NOT_YET_COMPILABLE`] (the headers lack
//! declarations they use); [`LIBRARY_GAPS`] names single checks a sample fails on one
//! profile because the library is wrong there. When `MEMPOOL_SMOKE_VALGRIND` is set
//! (`cargo xtask ci`), the samples of [`VALGRIND`] run under valgrind memcheck, on both
//! profiles.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_emu::Profile;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use xtask::c::Library;

/// Samples compiled but not run: each needs behaviour the drop-in library does not have
/// yet, named here. Remove an entry once the library has it.
const NEEDS_NEWER_LIBRARY: &[(&str, &str)] = &[];

/// Samples that cannot even compile: the project's headers do not declare these names yet.
/// The trial checks that every compiler error is about one of them, so the sample stays
/// otherwise correct; when it compiles, the trial fails until the entry moves to
/// [`NEEDS_NEWER_LIBRARY`] or goes.
const NOT_YET_COMPILABLE: &[(&str, &[&str])] = &[];

/// Checks that a sample fails on one profile because the drop-in library is wrong there:
/// (profile, sample, the expressions of the failing checks, what the library lacks). The
/// trial passes when every failed check of the sample names one of these expressions, and
/// fails once none fails, until the entry goes.
const LIBRARY_GAPS: &[(&str, &str, &[&str], &str)] = &[];

/// Samples whose checks depend on reuse or release at synchronization: they measure both
/// (`sample_runtime.h`) and print [`runtime_line`], which must match the profile.
const MEASURES_RUNTIME: &[&str] = &["pool_basics.c", "pool_reuse.cpp"];

/// The line a sample of [`MEASURES_RUNTIME`] prints on `profile`.
fn runtime_line(profile: Profile) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    format!(
        "runtime: same-stream reuse {}, release at synchronization {}",
        yes_no(profile.reuses()),
        yes_no(profile.releases_at_sync())
    )
}

/// Emulator settings of single samples, and why.
const ENV: &[(&str, &str, &str, &str)] = &[
    ("pool_basics.c", "MEMPOOL_EMU_DEVICE_MEMORY", "32G", "two 10 GiB pools (address space only)"),
    ("notify_value_order.c", "MEMPOOL_EMU_WORKER_DELAY", "300us,5", "the order must not depend on timing"),
    ("notify_value_order.c", "MEMPOOL_EMU_DEVICES", "2", "two devices, as CANN's samples run"),
    ("failure_mode.c", "MEMPOOL_EMU_WORKER_DELAY", "300us,9", "the failure mode must not depend on timing"),
    ("failure_mode.c", "MEMPOOL_EMU_DEVICES", "2", "two devices, as CANN's samples run"),
    ("host_func_subscribe.c", "MEMPOOL_EMU_WORKER_DELAY", "300us,3", "the order must not depend on timing"),
    ("device_queries.c", "MEMPOOL_EMU_DEVICES", "2", "peer access between two devices"),
];

/// Samples linked as `-lascendcl`, the name most CANN programs link by; the rest link as
/// `-lacl_rt`.
const LINKED_AS_ASCENDCL: &[&str] = &["pool_pageable_hostfn.cpp"];

/// Samples run under valgrind memcheck when `MEMPOOL_SMOKE_VALGRIND` is set.
const VALGRIND: &[&str] = &["pool_pageable_hostfn.cpp", "host_callback.c", "failure_mode.c"];

/// How long a sample may run before it counts as hung.
fn deadline(memcheck: bool) -> Duration {
    Duration::from_secs(if memcheck { 600 } else { 120 })
}

/// What the trials share: where the library is, and the folder for executables.
struct Setup {
    /// The folder of `libacl_rt.so` that cargo built.
    lib_dir: PathBuf,
    /// A folder with the library under both names (for [`LINKED_AS_ASCENDCL`]).
    home: mempool_tests::ShimHome,
    /// Executables and program output.
    out: PathBuf,
    memcheck: bool,
}

fn main() {
    let args = Arguments::from_args();
    let lib = mempool_tests::shim_library();
    let out = std::env::temp_dir().join(format!("mempool-c-samples-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let setup = Arc::new(Setup {
        lib_dir: lib.parent().expect("the library has a folder").to_path_buf(),
        home: mempool_tests::shim_home(),
        out: out.clone(),
        memcheck: std::env::var_os(xtask::c::VALGRIND_VAR).is_some(),
    });
    let samples = samples();
    let mut trials = vec![Trial::test("the lists name samples that exist", {
        let names = samples.iter().map(|p| file_name(p)).collect::<Vec<_>>();
        move || lists_name_samples(&names)
    })];
    for src in samples {
        let compiled = Arc::new(OnceLock::new());
        for profile in Profile::ASCEND {
            let (setup, compiled, src) = (Arc::clone(&setup), Arc::clone(&compiled), src.clone());
            let name = format!("{}::{}", profile.name(), file_name(&src));
            trials.push(Trial::test(name, move || sample(&src, profile, &compiled, &setup)));
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(setup); // `exit` skips destructors: the shim folder goes now.
    let _ = std::fs::remove_dir_all(&out);
    conclusion.exit()
}

/// The sample sources, sorted.
fn samples() -> Vec<PathBuf> {
    let dir = xtask::c::programs().join("samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| xtask::c::Lang::of(p).is_some())
        .collect();
    files.sort();
    files
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

fn lists_name_samples(names: &[String]) -> Result<(), Failed> {
    let listed = NEEDS_NEWER_LIBRARY.iter().map(|(n, _)| *n).chain(NOT_YET_COMPILABLE.iter().map(|(n, _)| *n));
    let listed = listed.chain(ENV.iter().map(|e| e.0)).chain(LINKED_AS_ASCENDCL.iter().copied());
    let listed = listed.chain(MEASURES_RUNTIME.iter().copied()).chain(LIBRARY_GAPS.iter().map(|g| g.1));
    let missing: Vec<&str> = listed.chain(VALGRIND.iter().copied()).filter(|n| !names.iter().any(|s| s == n)).collect();
    if !missing.is_empty() {
        return Err(format!("listed but not in tests/c/samples: {missing:?}").into());
    }
    if let Some(n) = VALGRIND.iter().find(|n| held_back(n)) {
        return Err(format!("{n} is to run under valgrind but is held back").into());
    }
    if let Some(g) = LIBRARY_GAPS.iter().find(|g| !Profile::ASCEND.iter().any(|p| p.name() == g.0)) {
        return Err(format!("LIBRARY_GAPS names the profile {:?}, which does not exist", g.0).into());
    }
    Ok(())
}

fn held_back(name: &str) -> bool {
    NEEDS_NEWER_LIBRARY.iter().any(|(n, _)| *n == name) || NOT_YET_COMPILABLE.iter().any(|(n, _)| *n == name)
}

/// One sample on one profile: compiled (once for both profiles), then run and checked, or
/// held back by a list.
fn sample(src: &Path, profile: Profile, compiled: &OnceLock<Result<(), String>>, setup: &Setup) -> Result<(), Failed> {
    let name = file_name(src);
    let exe = setup.out.join(src.file_stem().unwrap_or_default());
    let (library, lib_dir) = if LINKED_AS_ASCENDCL.contains(&name.as_str()) {
        (Library::AscendCl, setup.home.path().join("lib64"))
    } else {
        (Library::AclRt, setup.lib_dir.clone())
    };
    let compiled = compiled.get_or_init(|| xtask::c::compile(src, &exe, &lib_dir, library, true)).clone();
    if let Some((_, names)) = NOT_YET_COMPILABLE.iter().find(|(n, _)| *n == name) {
        return not_yet_compilable(&name, names, compiled);
    }
    compiled?;
    if let Some((_, needs)) = NEEDS_NEWER_LIBRARY.iter().find(|(n, _)| *n == name) {
        println!("not run: {name} needs {needs}");
        return Ok(());
    }
    let memcheck = setup.memcheck && VALGRIND.contains(&name.as_str());
    if memcheck && !xtask::c::valgrind_installed() {
        return Err(format!("{} is set but valgrind is not installed", xtask::c::VALGRIND_VAR).into());
    }
    let mut cmd = if memcheck { xtask::c::memcheck(&exe) } else { Command::new(&exe) };
    for var in mempool_emu::ENV_ALL {
        cmd.env_remove(var);
    }
    for (_, var, value, why) in ENV.iter().filter(|e| e.0 == name) {
        println!("{name}: {var}={value}: {why}");
        cmd.env(var, value);
    }
    cmd.env(mempool_emu::ENV_PROFILE, profile.name());
    let tag = format!("{}-{name}", profile.name());
    let stdout_path = setup.out.join(format!("{tag}.stdout"));
    let stderr_path = setup.out.join(format!("{tag}.stderr"));
    let (status, stdout, stderr) = run_bounded(cmd, &stdout_path, &stderr_path, deadline(memcheck))?;
    let failed = |why: String| -> Result<(), Failed> {
        Err(format!(
            "{name} on {profile}: {why} ({status}){}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            if memcheck { ", or valgrind memcheck reported errors" } else { "" },
        )
        .into())
    };
    let runtime = stdout.lines().filter(|l| l.starts_with("runtime: ")).collect::<Vec<_>>();
    if MEASURES_RUNTIME.contains(&name.as_str()) {
        let want = runtime_line(profile);
        if runtime != [want.as_str()] {
            return failed(format!("measured {runtime:?}, the profile gives {want:?}"));
        }
        println!("{want}");
    } else if !runtime.is_empty() {
        return failed(format!("prints {runtime:?} but is not in MEASURES_RUNTIME"));
    }
    let last = stdout.lines().last().unwrap_or_default();
    let counts = last.strip_prefix(&format!("{name}: ")).and_then(|rest| rest.split_once(" passed, "));
    let counts =
        counts.and_then(|(p, f)| Some((p.parse::<u32>().ok()?, f.strip_suffix(" failed")?.parse::<u32>().ok()?)));
    let Some((passed, failures)) = counts.filter(|(p, _)| *p > 0) else {
        return failed(format!("no summary line; last line: {last:?}"));
    };
    if let Some((_, _, checks, lacks)) = LIBRARY_GAPS.iter().find(|g| g.0 == profile.name() && g.1 == name) {
        return library_gap(&name, profile, checks, lacks, (passed, failures, status.success()), &stdout, &stderr);
    }
    if !status.success() || failures > 0 {
        return failed(format!("last line: {last:?}"));
    }
    println!("{}{last}", if memcheck { "valgrind memcheck clean: " } else { "" });
    Ok(())
}

/// A sample of [`LIBRARY_GAPS`] on its profile: it must fail, and only at the checks listed.
fn library_gap(
    name: &str,
    profile: Profile,
    checks: &[&str],
    lacks: &str,
    (passed, failures, success): (u32, u32, bool),
    stdout: &str,
    stderr: &str,
) -> Result<(), Failed> {
    if success && failures == 0 {
        return Err(
            format!("{name} passes on {profile} now: the library has {lacks}; remove its LIBRARY_GAPS entry").into()
        );
    }
    let fails: Vec<&str> = stdout.lines().filter(|l| l.trim_start().starts_with("FAIL ")).collect();
    let other: Vec<&str> =
        fails.iter().copied().filter(|l| !checks.iter().any(|c| l.contains(&format!(": {c} ")))).collect();
    if !other.is_empty() || fails.len() != failures as usize || success {
        return Err(format!(
            "{name} on {profile} fails for more than the library gap listed ({failures} failed, {} FAIL lines, \
             exit {}):\n{}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            fails.len(),
            if success { "0" } else { "non-zero" },
            other.join("\n")
        )
        .into());
    }
    println!(
        "known library gap on {profile}: {name}: {passed} passed, {failures} failed, every failure one of {checks:?}: \
         the library lacks {lacks}"
    );
    Ok(())
}

/// A sample the headers cannot compile yet: every compiler error must be about a name the
/// list gives, and once it compiles the list is stale.
fn not_yet_compilable(name: &str, names: &[&str], compiled: Result<(), String>) -> Result<(), Failed> {
    let Err(out) = compiled else {
        return Err(format!(
            "{name} compiles now: move it from NOT_YET_COMPILABLE to NEEDS_NEWER_LIBRARY, or off both lists"
        )
        .into());
    };
    let other: Vec<&str> =
        out.lines().filter(|l| l.contains("error:") && !names.iter().any(|n| l.contains(n))).collect();
    if !other.is_empty() {
        return Err(
            format!("{name} fails to compile for more than the missing declarations:\n{}", other.join("\n")).into()
        );
    }
    println!("not compiled: {name} needs declarations of {}", names.join(", "));
    Ok(())
}

/// Runs `cmd` with its output in two files, killing it past `limit`.
fn run_bounded(
    mut cmd: Command,
    stdout_path: &Path,
    stderr_path: &Path,
    limit: Duration,
) -> Result<(ExitStatus, String, String), Failed> {
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    cmd.stdin(Stdio::null()).stdout(file(stdout_path)?).stderr(file(stderr_path)?);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let out = std::fs::read_to_string(stdout_path).unwrap_or_default();
            return Err(format!("{cmd:?} still ran after {limit:?}; killed\n--- stdout\n{out}").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Ok((status, read(stdout_path), read(stderr_path)))
}
