//! C programs on the drop-in ACL library: the one compiler line, used by the test
//! `tests/c_smoke.rs` for `tests/c/smoke.c` and by `cargo xtask shim FILE.c`, and valgrind
//! memcheck as `cargo xtask ci` runs that test under it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// When set (to anything), the test `tests/c_smoke.rs` runs the smoke program under
/// [`memcheck`]; `cargo xtask ci` sets it for that test's second run.
pub const VALGRIND_VAR: &str = "MEMPOOL_SMOKE_VALGRIND";

/// The folder of `acl_mempool.h` and `smoke.c`: `tests/c` in the workspace.
pub fn headers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").join("tests/c")
}

/// Compiles the C program `src` into `exe` with `$CC` (or `cc`), against `libacl_rt.so`
/// in `lib_dir` (also its run-time search path) and the headers of [`headers`]. `strict`
/// adds `-Wall -Wextra -Werror`, as for the project's own programs.
///
/// # Errors
///
/// A message when the compiler cannot run or fails, with what it printed.
pub fn compile(src: &Path, exe: &Path, lib_dir: &Path, strict: bool) -> Result<(), String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.arg("-std=c11");
    if strict {
        cmd.args(["-Wall", "-Wextra", "-Werror"]);
    }
    let out = cmd
        .args(["-O1", "-I"])
        .arg(headers())
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lacl_rt")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .map_err(|e| format!("the C compiler `{cc}` could not run: {e}"))?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("compiling {} failed ({}):\n{}", src.display(), out.status, String::from_utf8_lossy(&out.stderr)))
    }
}

/// Whether `valgrind` runs here.
pub fn valgrind_installed() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `exe` under valgrind memcheck: any memcheck error (invalid read or write, use of
/// uninitialised memory, bad free) and any definitely lost block make it exit with 1.
/// Other leak kinds are not errors: the drop-in library keeps process-wide state until
/// exit by design (the emulator, its registries, the worker threads of default streams,
/// whose stacks show as "possibly lost"), and the Rust runtime has its own thread-local
/// and static allocations.
pub fn memcheck(exe: &Path) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.args(["--error-exitcode=1", "--leak-check=full", "--show-leak-kinds=definite"])
        .args(["--errors-for-leak-kinds=definite", "-q"])
        .arg(exe);
    cmd
}
