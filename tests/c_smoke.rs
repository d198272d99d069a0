//! The C program `tests/c/smoke.c`, written for CANN, compiled with the system C compiler,
//! linked against the drop-in `libacl_rt.so`, and run.

use std::path::Path;
use std::process::Command;

#[test]
fn the_c_smoke_program_runs_on_the_shim() {
    let lib = mempool_tests::shim_library();
    let lib_dir = lib.parent().expect("the library has a folder");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c");
    let out = std::env::temp_dir().join(format!("mempool-c-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let exe = out.join("smoke");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let build = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(&src)
        .arg(src.join("smoke.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lacl_rt")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap_or_else(|e| panic!("the C compiler `{cc}` could not run: {e}"));
    assert!(build.status.success(), "compiling smoke.c failed:\n{}", String::from_utf8_lossy(&build.stderr));

    let run = Command::new(&exe)
        .env_remove("MEMPOOL_EMU_GRANULARITY")
        .env_remove("MEMPOOL_EMU_DEVICE_MEMORY")
        .env_remove("MEMPOOL_EMU_MODE")
        .output()
        .expect("the smoke program runs");
    // A setting that does not parse stops the program at its first call, naming the variable.
    let misspelled = Command::new(&exe).env("MEMPOOL_EMU_MODE", "defered").output().expect("the smoke program runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let _ = std::fs::remove_dir_all(&out);
    let refused = String::from_utf8_lossy(&misspelled.stdout);
    assert!(!misspelled.status.success(), "ran with MEMPOOL_EMU_MODE=defered:\n{refused}");
    assert!(
        refused.contains("aclInit(NULL)")
            && refused.contains("returned 507000")
            && refused.contains("MEMPOOL_EMU_MODE"),
        "{refused}"
    );
    assert!(
        run.status.success(),
        "smoke program failed ({}):\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let reused =
        stdout.lines().filter(|l| l.starts_with("iter ") && l.contains("reused=yes") && l.ends_with("sum ok")).count();
    assert_eq!(reused, 19, "every iteration after the first reuses the same addresses with right sums:\n{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "closing line: {last}");
    println!(
        "{}",
        stdout.lines().filter(|l| l.starts_with("iter ") || l.starts_with("summary")).collect::<Vec<_>>().join("\n")
    );
}
