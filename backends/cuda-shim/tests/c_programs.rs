//! The programs in the driver API's style under `tests/c/`, each compiled against
//! `include/cuda.h` with every warning an error, linked against the built `libcuda.so` by
//! its path, and run on every profile of the emulator (`documented`, `cann-open`, `cuda`)
//! with the stream-order checker on, each run in a process of its own:
//!
//! - `vmm.c` grows one reserved range chunk by chunk as PyTorch's expandable segments do
//!   and checks the codes of misuse (contract §14);
//! - `host_register.c` registers a malloc'd buffer, copies to and from device memory on a
//!   stream through it, checks the bytes, unregisters, and checks the driver's codes for
//!   misuse (contract §15).
//!
//! A missing C compiler fails the tests: they are not skipped.

mod common;

use common::{CRATE, library};
use mempool_hal::Profile;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/c/{name}.c` compiled and linked in a folder of its own: the folder and the program.
fn compile(name: &str) -> (PathBuf, PathBuf) {
    let lib = library();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let exe = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let lib_dir = lib.parent().expect("the library has a folder");
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", &format!("{CRATE}/include")])
        .arg(Path::new(CRATE).join(format!("tests/c/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap_or_else(|e| panic!("the compiler `{cc}` could not run (it is required, not optional): {e}"));
    assert!(out.status.success(), "{cc} failed on {name}.c:\n{}", String::from_utf8_lossy(&out.stderr));
    (dir, exe)
}

/// Runs `exe` on `profile` with the checker on and a 1 GiB device; its output line.
fn run(exe: &Path, profile: Profile) -> String {
    let mut run = Command::new(exe);
    for var in cuda::ENV_ALL {
        run.env_remove(var);
    }
    let out = run
        .env(cuda::ENV_PROFILE, profile.name())
        .env(cuda::ENV_CHECKER, "on")
        .env(cuda::ENV_DEVICE_MEMORY, "1G")
        .output()
        .expect("the C program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "on {profile}, {} failed ({}):\n{stdout}\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.trim_end().to_string()
}

#[test]
fn the_expandable_segment_program_passes_on_every_profile() {
    let (dir, exe) = compile("vmm");
    for profile in Profile::ALL {
        let line = run(&exe, profile);
        let want_end = format!(" checks, 0 failed, granularity 2097152, on mempool-emu-{}", env!("CARGO_PKG_VERSION"));
        assert!(line.starts_with("cuda vmm: ") && line.ends_with(&want_end), "on {profile}: {line}");
        let checks: u32 = line["cuda vmm: ".len()..].split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(checks > 80, "on {profile}: only {checks} checks ran");
        println!("{profile}: {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_host_registration_program_passes_on_every_profile_with_the_checker_on() {
    let (dir, exe) = compile("host_register");
    for profile in Profile::ALL {
        let line = run(&exe, profile);
        assert_eq!(line, "cuda host register: 262144 bytes round-tripped, 0 failure(s)", "on {profile}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
