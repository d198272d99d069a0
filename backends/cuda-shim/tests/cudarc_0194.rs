//! cudarc 0.19.4, the last release whose loader resolves every driver function when the
//! library is first used (and panics at the first missing name), on this library.
//!
//! `tests/cudarc-0.19.4/` is a Cargo project of its own (its own `[workspace]` and
//! lockfile: Cargo allows one semver-compatible cudarc per lockfile, and `tests/cudarc.rs`
//! uses the current one). This test builds it with `cargo build --locked` (cudarc comes
//! from crates.io) and runs it as a child process whose `LD_LIBRARY_PATH` names a folder
//! with the built library as `libcuda.so` and `libcuda.so.1`, on the `cuda` profile with
//! the stream-order checker on.

use std::path::Path;
use std::process::Command;

fn main() {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the crate's cdylib was not built", lib.display());
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cudarc-0.19.4");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp.join("cudarc-0.19.4");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(&cargo)
        .args(["build", "--locked", "--quiet", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        build.status.success(),
        "building cudarc 0.19.4 failed ({}):\n{}",
        build.status,
        String::from_utf8_lossy(&build.stderr)
    );
    let dir = tmp.join(format!("cudarc-0194-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    for name in ["libcuda.so", "libcuda.so.1"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).expect("a link to the library");
    }
    let out = Command::new(target.join("debug/cudarc-0194-on-the-cpu-libcuda"))
        .env("LD_LIBRARY_PATH", &dir)
        .env("MEMPOOL_EMU_PROFILE", "cuda")
        .env("MEMPOOL_EMU_CHECKER", "on")
        .env("MEMPOOL_EMU_DEVICE_MEMORY", (4u64 << 30).to_string())
        .output()
        .expect("the cudarc 0.19.4 program runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("cudarc 0.19.4: every path passed"),
        "cudarc 0.19.4 on the library failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    println!("cudarc 0.19.4 on the CPU libcuda.so.1: every path passed");
}
