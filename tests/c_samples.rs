//! The CANN-style samples in `tests/c/samples/`: C11 and C++17 programs written for the ACL
//! runtime API, compiled with `-Wall -Wextra -Werror` against the project's headers
//! (`#include <acl/acl.h>`, the compiler line is `xtask::c::compile`), linked against the
//! drop-in library and run on the emulator with every `MEMPOOL_EMU_*` setting cleared
//! except those of [`ENV`]. Each program checks its own results, exits non-zero on any
//! failure and prints `<file>: N passed, M failed` last; a sample passes when it exits 0
//! and that line says `0 failed`.
//!
//! Every `.c`, `.cpp`, `.cc` and `.cxx` file of the folder is one trial, so a new sample runs
//! without being listed. Two lists hold back the samples that use what the library does not
//! offer yet: [`NEEDS_NEWER_LIBRARY`] (compiled, not run) and [`NOT_YET_COMPILABLE`] (the
//! headers lack declarations they use). When `MEMPOOL_SMOKE_VALGRIND` is set
//! (`cargo xtask ci`), the samples of [`VALGRIND`] run under valgrind memcheck.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
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

/// Emulator settings of single samples, and why.
const ENV: &[(&str, &str, &str, &str)] =
    &[("pool_basics.c", "MEMPOOL_EMU_DEVICE_MEMORY", "32G", "two 10 GiB pools (address space only)")];

/// Samples linked as `-lascendcl`, the name most CANN programs link by; the rest link as
/// `-lacl_rt`.
const LINKED_AS_ASCENDCL: &[&str] = &["pool_pageable_hostfn.cpp"];

/// Samples run under valgrind memcheck when `MEMPOOL_SMOKE_VALGRIND` is set.
const VALGRIND: &[&str] = &["pool_pageable_hostfn.cpp", "host_callback.c"];

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
        let setup = Arc::clone(&setup);
        trials.push(Trial::test(file_name(&src), move || sample(&src, &setup)));
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
    let missing: Vec<&str> = listed.chain(VALGRIND.iter().copied()).filter(|n| !names.iter().any(|s| s == n)).collect();
    if !missing.is_empty() {
        return Err(format!("listed but not in tests/c/samples: {missing:?}").into());
    }
    if let Some(n) = VALGRIND.iter().find(|n| held_back(n)) {
        return Err(format!("{n} is to run under valgrind but is held back").into());
    }
    Ok(())
}

fn held_back(name: &str) -> bool {
    NEEDS_NEWER_LIBRARY.iter().any(|(n, _)| *n == name) || NOT_YET_COMPILABLE.iter().any(|(n, _)| *n == name)
}

/// One sample: compiled, then run and checked, or held back by a list.
fn sample(src: &Path, setup: &Setup) -> Result<(), Failed> {
    let name = file_name(src);
    let exe = setup.out.join(src.file_stem().unwrap_or_default());
    let (library, lib_dir) = if LINKED_AS_ASCENDCL.contains(&name.as_str()) {
        (Library::AscendCl, setup.home.path().join("lib64"))
    } else {
        (Library::AclRt, setup.lib_dir.clone())
    };
    let compiled = xtask::c::compile(src, &exe, &lib_dir, library, true);
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
    let stdout_path = setup.out.join(format!("{name}.stdout"));
    let stderr_path = setup.out.join(format!("{name}.stderr"));
    let (status, stdout, stderr) = run_bounded(cmd, &stdout_path, &stderr_path, deadline(memcheck))?;
    let last = stdout.lines().last().unwrap_or_default();
    let summary_ok = last
        .strip_prefix(&format!("{name}: "))
        .and_then(|rest| rest.strip_suffix(" passed, 0 failed"))
        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n > 0));
    if !status.success() || !summary_ok {
        return Err(format!(
            "{name} failed{} ({status}); last line: {last:?}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            if memcheck { ", or valgrind memcheck reported errors" } else { "" },
        )
        .into());
    }
    println!("{}{last}", if memcheck { "valgrind memcheck clean: " } else { "" });
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
