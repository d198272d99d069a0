//! `cargo xtask shim [--release] [PROGRAM [ARGS...]]`: builds the drop-in ACL library and
//! lays out `target/<profile>/acl-shim/lib64/` with `libacl_rt.so` and `libascendcl.so`, so
//! that `ASCEND_HOME_PATH=target/<profile>/acl-shim` makes a CANN program or the Ascend
//! backend use it. With a PROGRAM (an executable, or a `.c` file compiled first against
//! `tests/c/acl_mempool.h`), runs it on the emulator.

use crate::util::{Step, run, target_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the shim, lays out its folder, and runs `program` against it if given.
pub(crate) fn run_all(args: &[String]) -> Result<(), String> {
    let release = args.first().is_some_and(|a| a == "--release");
    let rest = if release { &args[1..] } else { args };
    let profile = if release { "release" } else { "debug" };
    let mut build = vec!["build", "-p", "mempool-acl-shim"];
    if release {
        build.push("--release");
    }
    run(&[Step::new("the drop-in ACL library", &build)], &[])?;
    let target = target_dir();
    let built = target.join(profile).join("libacl_rt.so");
    let home = target.join(profile).join("acl-shim");
    let lib64 = home.join("lib64");
    std::fs::create_dir_all(&lib64).map_err(|e| format!("{}: {e}", lib64.display()))?;
    for name in ["libacl_rt.so", "libascendcl.so"] {
        std::fs::copy(&built, lib64.join(name)).map_err(|e| format!("copying {}: {e}", built.display()))?;
    }
    eprintln!("laid out {}", lib64.display());
    let Some(program) = rest.first() else {
        println!("export ASCEND_HOME_PATH={}", home.display());
        println!("# a CANN program linked against libascendcl.so or libacl_rt.so then runs on the emulator with:");
        println!("#   LD_LIBRARY_PATH={} ./your_program", lib64.display());
        return Ok(());
    };
    let exe = if program.ends_with(".c") {
        let exe = home.join(Path::new(program).file_stem().unwrap_or_default());
        xtask::c::compile(Path::new(program), &exe, &lib64, false)?;
        exe
    } else {
        PathBuf::from(program)
    };
    let ld = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => format!("{}:{}", lib64.display(), old.to_string_lossy()),
        _ => lib64.display().to_string(),
    };
    eprintln!("==> {} (ASCEND_HOME_PATH={})", exe.display(), home.display());
    let status = Command::new(&exe)
        .args(&rest[1..])
        .env("ASCEND_HOME_PATH", &home)
        .env("LD_LIBRARY_PATH", ld)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if status.success() { Ok(()) } else { Err(format!("{} failed ({status})", exe.display())) }
}
