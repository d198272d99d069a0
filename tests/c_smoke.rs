//! The C program `tests/c/smoke.c`, written for CANN, compiled with the system C compiler
//! against the project's ACL headers, linked against the drop-in `libacl_rt.so` (the
//! compiler line is `xtask::c::compile`), and run; under valgrind memcheck when
//! `MEMPOOL_SMOKE_VALGRIND` is set (`cargo xtask ci`).
//!
//! The rules it checks: contract §8 (`mempool_hal::contract::c_abi`).

use std::process::Command;

#[test]
fn the_c_smoke_program_runs_on_the_shim() {
    let lib = mempool_tests::shim_library();
    let lib_dir = lib.parent().expect("the library has a folder");
    let out = std::env::temp_dir().join(format!("mempool-c-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let exe = out.join("smoke");
    let src = xtask::c::programs().join("smoke.c");
    if let Err(e) = xtask::c::compile(&src, &exe, lib_dir, xtask::c::Library::AclRt, true) {
        panic!("{e}");
    }
    // Every emulator setting cleared, so the program runs on the defaults.
    let smoke = |mut cmd: Command| {
        for var in mempool_emu::ENV_ALL {
            cmd.env_remove(var);
        }
        cmd
    };
    // `cargo xtask ci` runs this test a second time with the program under valgrind memcheck.
    let memcheck = std::env::var_os(xtask::c::VALGRIND_VAR).is_some();
    let run = smoke(if memcheck { xtask::c::memcheck(&exe) } else { Command::new(&exe) })
        .output()
        .expect("the smoke program runs");
    // A setting that does not parse stops the program at its first call, naming the variable.
    let misspelled =
        smoke(Command::new(&exe)).env("MEMPOOL_EMU_MODE", "defered").output().expect("the smoke program runs");
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
        "smoke program failed{} ({}):\n{stdout}\n{}",
        if memcheck { ", or valgrind memcheck reported errors" } else { "" },
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
