//! The probe (`mempool_cuda::probe`) through the backend over the project's CPU libcuda,
//! which cargo builds next to this test binary (the `mempool-cuda-shim` dev-dependency's
//! cdylib, `libcuda.so`). The library reads its settings (`MEMPOOL_EMU_*`) once per process,
//! at `cuInit`, so each probe runs in a child process of this binary with the settings it
//! needs and no others, finding the library through `MEMPOOL_CUDA_LIBRARY` as the example
//! (`cargo run -p mempool-cuda --example probe`) would.
//!
//! The rules it checks: contract §12 (`mempool_hal::contract::profiles`).

use mempool_hal::Profile;
use std::path::PathBuf;
use std::process::Command;

/// Set in a child: what it expects, `cuda` or `mixed`.
const CHILD: &str = "MEMPOOL_TEST_CUDA_PROBE_CHILD";
const BEGIN: &str = "--- probe table ---";
const END: &str = "--- end ---";

/// The CPU libcuda cargo built next to this test binary (in `target/<profile>/deps`).
fn cpu_libcuda() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the mempool-cuda-shim dev-dependency's cdylib was not built", lib.display());
    lib
}

/// The child's part: probe the library that `MEMPOOL_CUDA_LIBRARY` names, print the table
/// and check the report itself.
#[test]
fn child_probe() {
    let Some(expect) = std::env::var_os(CHILD) else { return };
    let dev = mempool_cuda::Cuda::open(0).expect("the CPU libcuda is found through MEMPOOL_CUDA_LIBRARY");
    let report = mempool_cuda::probe::run(&dev);
    println!("{BEGIN}\n{report}{END}");
    assert!(report.is_cpu_libcuda(), "\n{report}");
    assert!(report.cpu_libcuda.as_deref().is_some_and(|v| v.starts_with("mempool-emu-")), "\n{report}");
    match expect.to_str() {
        Some("cuda") => assert_eq!(report.profile(), Some(Profile::Cuda), "\n{report}"),
        Some("mixed") => assert_eq!(report.profile(), None, "\n{report}"),
        other => panic!("{CHILD}={other:?}"),
    }
}

/// Runs the probe in a child process over the CPU libcuda, with `env` as its only
/// `MEMPOOL_EMU_*` settings; the table it printed.
fn probe_table(expect: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(["--exact", "child_probe", "--nocapture", "--test-threads", "1"]);
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("MEMPOOL_EMU_") {
            cmd.env_remove(var);
        }
    }
    let out = cmd
        .env(mempool_cuda::ENV_LIBRARY, cpu_libcuda())
        .env("MEMPOOL_EMU_DEVICE_MEMORY", "1G")
        .envs(env.iter().copied())
        .env(CHILD, expect)
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{expect}: the child failed\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let table = stdout.split(BEGIN).nth(1).and_then(|t| t.split(END).next()).expect("the child printed a table");
    println!("{}", table.trim());
    table.trim().to_string()
}

fn row<'a>(table: &'a str, what: &str) -> &'a str {
    table.lines().find(|l| l.starts_with(&format!("| {what}"))).unwrap_or_else(|| panic!("no row {what:?} in\n{table}"))
}

#[test]
fn the_cpu_libcuda_is_recognized_and_behaves_as_cuda_documents() {
    let table = probe_table("cuda", &[]);
    assert!(row(&table, "CPU libcuda").contains("| exported: mempool-emu-"), "{table}");
    assert!(row(&table, "CPU libcuda").ends_with("| the project's CPU libcuda |"), "{table}");
    assert!(row(&table, "library").contains("libcuda.so"), "{table}");
    assert!(row(&table, "driver version").contains("(13050)"), "{table}");
    assert_eq!(row(&table, "granularity"), "| granularity | 2097152 bytes | - | - |");
    for what in [
        "reuse flags of a fresh pool",
        "same-stream reuse",
        "event-dependency reuse",
        "release at synchronization",
        "trim_to below USED",
        "HIGH reset",
    ] {
        assert!(row(&table, what).ends_with("| as documented |"), "{what}:\n{table}");
    }
    assert_eq!(row(&table, "profile"), "| profile (contract §12) | cuda | cuda | as documented |");
}

/// On the emulator's `cann-open` profile the CPU library keeps CUDA's attribute and trim
/// rules but reuses and releases nothing: the probe sees the mix and names no profile.
#[test]
fn a_library_that_mixes_the_rules_gets_no_profile() {
    let table = probe_table("mixed", &[("MEMPOOL_EMU_PROFILE", "cann-open")]);
    assert!(row(&table, "same-stream reuse").contains("| fresh memory |"), "{table}");
    assert!(row(&table, "release at synchronization").contains("| kept until trim_to |"), "{table}");
    assert!(row(&table, "reuse flags of a fresh pool").ends_with("| as documented |"), "{table}");
    assert_eq!(row(&table, "profile"), "| profile (contract §12) | mixed or unknown | cuda | differs |");
}
