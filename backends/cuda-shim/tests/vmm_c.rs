//! `tests/c/vmm.c`, a program in the driver API's style that grows one reserved range
//! chunk by chunk as PyTorch's expandable segments do and checks the codes of misuse,
//! compiled against `include/cuda.h` with every warning an error, linked against the built
//! `libcuda.so` by its path, and run on every profile of the emulator with the stream-order
//! checker on, each in a process of its own.
//!
//! A missing C compiler fails the test: it is not skipped.

mod common;

use common::{CRATE, library};
use mempool_hal::Profile;
use std::path::Path;
use std::process::Command;

#[test]
fn the_expandable_segment_program_passes_on_every_profile() {
    let lib = library();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda-vmm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let exe = dir.join("vmm");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let lib_dir = lib.parent().expect("the library has a folder");
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", &format!("{CRATE}/include")])
        .arg(Path::new(CRATE).join("tests/c/vmm.c"))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap_or_else(|e| panic!("the compiler `{cc}` could not run (it is required, not optional): {e}"));
    assert!(out.status.success(), "{cc} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    for profile in Profile::ALL {
        let mut run = Command::new(&exe);
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
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "on {profile} ({}):\n{stdout}\n{stderr}", out.status);
        let line = stdout.trim_end();
        let want_end = format!(" checks, 0 failed, granularity 2097152, on mempool-emu-{}", env!("CARGO_PKG_VERSION"));
        assert!(line.starts_with("cuda vmm: ") && line.ends_with(&want_end), "on {profile}: {line}");
        let checks: u32 = line["cuda vmm: ".len()..].split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(checks > 80, "on {profile}: only {checks} checks ran");
        println!("{profile}: {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
