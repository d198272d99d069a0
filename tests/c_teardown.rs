//! The teardown patterns of CANN's own programs (`tests/c/teardown/`): kernels (host
//! functions reading device memory through raw pointers) or copies queued on a stream,
//! then at once a stream destroy (plain or force), `aclrtFreeHost`, `aclrtFree`, a device
//! reset and `aclFinalize`; also a pool buffer, a host function already running when the
//! destroy comes, an `aclrtFree` under queued work, and copies whose kind names live or
//! freed device memory as host memory. The same program is compiled as C11 and C++17
//! against the project's headers, linked against the drop-in library and run on both
//! profiles with random worker delays (`MEMPOOL_EMU_WORKER_DELAY`, a new seed each run).
//!
//! Each run checks the rule itself: every task queued before a destroy or a reset has
//! completed when the call returns, or never runs. A run passes when the program exits 0
//! (no crash) and its last line is `<file>: N passed, 0 failed`.
//!
//! Runs per trial: [`RUNS_VAR`] (default 13, so the 4 trials make 52 runs in `cargo test`;
//! `cargo xtask teardown` runs 250 per trial, 1,000 in all). With `MEMPOOL_SMOKE_VALGRIND`
//! set (`cargo xtask ci`), the C program runs once per profile under valgrind memcheck
//! instead.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_emu::Profile;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use xtask::c::Library;

/// How many runs each trial makes (a whole number; default [`DEFAULT_RUNS`]).
pub const RUNS_VAR: &str = "MEMPOOL_TEARDOWN_RUNS";
/// Runs per trial in `cargo test`.
const DEFAULT_RUNS: u32 = 13;
/// The largest random delay before each operation of a stream's worker.
const DELAY: &str = "300us";

struct Setup {
    lib_dir: PathBuf,
    out: PathBuf,
    runs: u32,
    memcheck: bool,
}

fn main() {
    let args = Arguments::from_args();
    let lib = mempool_tests::shim_library();
    let out = std::env::temp_dir().join(format!("mempool-c-teardown-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temp folder");
    let runs = match std::env::var(RUNS_VAR) {
        Ok(v) => v.trim().parse::<u32>().unwrap_or_else(|_| panic!("{RUNS_VAR}={v:?} is not a number of runs")),
        Err(_) => DEFAULT_RUNS,
    };
    let setup = Arc::new(Setup {
        lib_dir: lib.parent().expect("the library has a folder").to_path_buf(),
        out: out.clone(),
        runs,
        memcheck: std::env::var_os(xtask::c::VALGRIND_VAR).is_some(),
    });
    let dir = xtask::c::programs().join("teardown");
    let mut trials = Vec::new();
    for file in ["teardown.c", "teardown.cpp"] {
        let compiled = Arc::new(OnceLock::new());
        for profile in Profile::ASCEND {
            let (setup, compiled, src) = (Arc::clone(&setup), Arc::clone(&compiled), dir.join(file));
            let name = format!("{}::{file}", profile.name());
            trials.push(Trial::test(name, move || trial(&src, profile, &compiled, &setup)));
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let _ = std::fs::remove_dir_all(&out);
    conclusion.exit()
}

/// One program on one profile: compiled once, then run `setup.runs` times with seeds
/// 1, 2, ... (or once under valgrind).
fn trial(
    src: &Path,
    profile: Profile,
    compiled: &OnceLock<Result<PathBuf, String>>,
    setup: &Setup,
) -> Result<(), Failed> {
    let name = src.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let exe = compiled
        .get_or_init(|| {
            let exe = setup.out.join(name.replace('.', "-"));
            xtask::c::compile(src, &exe, &setup.lib_dir, Library::AclRt, true).map(|()| exe)
        })
        .clone()?;
    if setup.memcheck {
        if name != "teardown.c" {
            println!("not run under valgrind: {name} (the C program is)");
            return Ok(());
        }
        if !xtask::c::valgrind_installed() {
            return Err(format!("{} is set but valgrind is not installed", xtask::c::VALGRIND_VAR).into());
        }
        run_once(xtask::c::memcheck(&exe), &name, profile, 1)?;
        println!("valgrind memcheck clean: {name} on {profile}");
        return Ok(());
    }
    for seed in 1..=u64::from(setup.runs) {
        run_once(Command::new(&exe), &name, profile, seed)?;
    }
    println!("{name} on {profile}: {} runs with random delays, the rule held and nothing crashed", setup.runs);
    Ok(())
}

fn run_once(mut cmd: Command, name: &str, profile: Profile, seed: u64) -> Result<(), Failed> {
    for var in mempool_emu::ENV_ALL {
        cmd.env_remove(var);
    }
    cmd.env(mempool_emu::ENV_PROFILE, profile.name())
        .env(mempool_emu::ENV_WORKER_DELAY, format!("{DELAY},{seed}"))
        // A stuck wait fails within seconds instead of a minute.
        .env(mempool_emu::ENV_WAIT_TIMEOUT, "20s")
        .stdin(Stdio::null());
    let out = cmd.output().map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let ok = last.strip_prefix(&format!("{name}: ")).is_some_and(|r| r.ends_with(" passed, 0 failed"));
    if !out.status.success() || !ok {
        return Err(format!(
            "{name} on {profile}, seed {seed}: {} (last line {last:?})\n--- stdout\n{stdout}--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}
