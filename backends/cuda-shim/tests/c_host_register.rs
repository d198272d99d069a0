//! `tests/c/host_register.c`, a program in the driver API's style for host registration
//! (contract §15), compiled against `include/cuda.h` with every warning an error, linked
//! against the built `libcuda.so`, and run on each of the emulator's profiles
//! (`documented`, `cann-open`, `cuda`) with the stream-order checker on: it registers a
//! malloc'd buffer, copies to and from device memory on a stream, checks the bytes,
//! unregisters, and checks the driver's codes for misuse.
//!
//! A missing C compiler fails the test: it is not skipped.

mod common;

use common::{CRATE, library};
use std::path::Path;
use std::process::Command;

#[test]
fn the_host_registration_program_passes_on_every_profile_with_the_checker_on() {
    let lib = library();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda-host-register-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let exe = dir.join("host_register");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let lib_dir = lib.parent().expect("the library has a folder");
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", &format!("{CRATE}/include")])
        .arg(Path::new(CRATE).join("tests/c/host_register.c"))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap_or_else(|e| panic!("the compiler `{cc}` could not run (it is required, not optional): {e}"));
    assert!(out.status.success(), "{cc} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    for profile in ["documented", "cann-open", "cuda"] {
        let mut run = Command::new(&exe);
        for var in cuda::ENV_ALL {
            run.env_remove(var);
        }
        let out = run
            .env(cuda::ENV_DEVICE_MEMORY, "1G")
            .env(cuda::ENV_PROFILE, profile)
            .env(cuda::ENV_CHECKER, "1")
            .output()
            .expect("the C program runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "on {profile}, the C program failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout.trim_end(), "cuda host register: 262144 bytes round-tripped, 0 failure(s)", "on {profile}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
