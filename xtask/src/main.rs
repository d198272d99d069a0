//! Project automation, in plain Rust: `cargo xtask <task>`.
//!
//! - `ci`: what `.ci/run` runs: the README's test command, the C smoke program under
//!   valgrind memcheck, the feature combinations, then formatting, clippy and the docs
//!   with warnings denied.
//! - `features`: the facade `mempool` tested (and linted) with every combination of its
//!   backend features (none, each alone, all), the downstream example `tensor-cache`
//!   built without its dev-dependencies and tested with them, and a check that its
//!   normal dependency tree carries no mockall.
//! - `shim [--release] [PROGRAM [ARGS...]]`: builds the drop-in ACL library and lays out
//!   `target/<profile>/acl-shim/lib64/` with `libacl_rt.so` and `libascendcl.so`, so that
//!   `ASCEND_HOME_PATH=target/<profile>/acl-shim` makes a CANN program or the Ascend
//!   backend use it. With a PROGRAM (an executable, or a `.c` file compiled first against
//!   `tests/c/acl_mempool.h`), runs it on the emulator.
//! - `soak`: the model-based property test (`tests/model_props.rs`, the reference model
//!   against the emulator) with 100,000 random cases, built in release mode. Not part of
//!   `ci`: the normal test run already has a smaller number of cases.
//! - `bench`: the benchmarks (release), the emulator's against `offset-allocator` and
//!   `std::alloc`, and the Ascend backend over the drop-in library against raw calls into
//!   it; writes `target/bench-report.md` with the medians and the ratios.
//! - `tidy`: the repository hygiene that rustfmt and clippy do not check (see [`tidy`]);
//!   also a test of this crate, so `cargo test --workspace` runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod tidy;

/// One step of a task: a description, a cargo command line and extra environment.
struct Step {
    what: String,
    args: Vec<String>,
    env: &'static [(&'static str, &'static str)],
}

impl Step {
    fn new(what: impl Into<String>, args: &[&str]) -> Self {
        Step { what: what.into(), args: args.iter().map(|a| a.to_string()).collect(), env: &[] }
    }
}

fn ci_before_features() -> Vec<Step> {
    vec![Step::new("tests (the README's test command)", &["test", "--workspace"])]
}

fn ci_after_features() -> Vec<Step> {
    vec![
        Step::new("formatting", &["fmt", "--all", "--check"]),
        Step::new("clippy", &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"]),
        Step {
            what: "docs".into(),
            args: ["doc", "--workspace", "--no-deps"].map(String::from).to_vec(),
            env: &[("RUSTDOCFLAGS", "-D warnings")],
        },
    ]
}

/// `tests/c/smoke.c` on the drop-in library under valgrind memcheck, as `.ci/run` runs it:
/// any memcheck error or definitely lost block fails. Other leak kinds are not errors: the
/// shim keeps process-wide state until exit by design (the emulator, its registries, the
/// worker threads of default streams), and the Rust runtime has its own static allocations.
fn valgrind_smoke() -> Result<(), String> {
    eprintln!("==> the C smoke program under valgrind memcheck");
    let found = Command::new("valgrind").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        return Err("valgrind is not installed; the ci task needs it (e.g. apt-get install valgrind)".into());
    }
    run(&[Step::new("the drop-in ACL library", &["build", "-p", "mempool-acl-shim"])])?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let lib_dir = if target.is_absolute() { target } else { workspace_root().join(target) }.join("debug");
    let dir = std::env::temp_dir().join(format!("mempool-valgrind-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let exe = dir.join("smoke");
    let c = workspace_root().join("tests/c");
    let built = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(&c)
        .arg(c.join("smoke.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lacl_rt")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .status()
        .map_err(|e| format!("cannot run the C compiler: {e}"));
    let ran = built
        .and_then(|s| if s.success() { Ok(()) } else { Err(format!("compiling smoke.c failed ({s})")) })
        .and_then(|()| {
            Command::new("valgrind")
                .args(["--error-exitcode=1", "--leak-check=full", "--show-leak-kinds=definite"])
                .args(["--errors-for-leak-kinds=definite", "-q"])
                .arg(&exe)
                .env_remove("MEMPOOL_EMU_GRANULARITY")
                .env_remove("MEMPOOL_EMU_DEVICE_MEMORY")
                .env_remove("MEMPOOL_EMU_MODE")
                .output()
                .map_err(|e| format!("cannot run valgrind: {e}"))
        });
    let _ = std::fs::remove_dir_all(&dir);
    let out = ran?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "valgrind reported errors for tests/c/smoke.c, or the program failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    eprintln!("    {}", stdout.lines().last().unwrap_or_default());
    Ok(())
}

/// The model-based property test with many more cases than the normal test run.
fn soak_steps() -> Vec<Step> {
    vec![Step {
        what: "the reference model against the emulator, 100,000 cases".into(),
        args: ["test", "--release", "-p", "mempool-tests", "--test", "model_props", "--", "model_and_emulator_agree"]
            .map(String::from)
            .to_vec(),
        env: &[("PROPTEST_CASES", "100000")],
    }]
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf()
}

fn run(steps: &[Step]) -> Result<(), String> {
    for step in steps {
        eprintln!("==> {}: cargo {}", step.what, step.args.join(" "));
        let status = Command::new(cargo())
            .args(&step.args)
            .envs(step.env.iter().copied())
            .current_dir(workspace_root())
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!("{} failed ({status})", step.what));
        }
    }
    Ok(())
}

/// The backend features of the facade: every feature of `crates/mempool/Cargo.toml`
/// except `default`, in the order written there. Reading the manifest means a new
/// backend feature is covered without touching this file.
fn backend_features(manifest: &str) -> Vec<String> {
    let mut in_features = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && name != "default" {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// No feature, each feature alone, and all of them together.
fn combinations(features: &[String]) -> Vec<Vec<String>> {
    let mut sets = vec![Vec::new()];
    sets.extend(features.iter().map(|f| vec![f.clone()]));
    if features.len() > 1 {
        sets.push(features.to_vec());
    }
    sets
}

fn feature_steps(features: &[String]) -> Vec<Step> {
    let mut steps = Vec::new();
    for set in combinations(features) {
        let list = set.join(",");
        let mut selection = vec!["-p", "mempool", "--no-default-features"];
        if !set.is_empty() {
            selection.extend(["--features", &list]);
        }
        let mut test = vec!["test"];
        test.extend(&selection);
        steps.push(Step::new(format!("mempool with features [{list}]: tests"), &test));
        let mut clippy = vec!["clippy"];
        clippy.extend(&selection);
        clippy.extend(["--all-targets", "--", "-D", "warnings"]);
        steps.push(Step::new(format!("mempool with features [{list}]: clippy"), &clippy));
    }
    steps.push(Step::new(
        "tensor-cache without dev-dependencies (mempool with no backend)",
        &["build", "-p", "tensor-cache", "--lib"],
    ));
    steps.push(Step::new(
        "tensor-cache tests (unit tests on mocks, integration tests on the emulator)",
        &["test", "-p", "tensor-cache"],
    ));
    steps
}

/// The crates `cargo tree` prints for `args`, one name per line.
fn tree(args: &[&str]) -> Result<Vec<String>, String> {
    let out = Command::new(cargo())
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo tree {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// The example's release build must not carry mockall: it is a dev-dependency feature.
/// The full tree (dev-dependencies included) must show it, or the check proves nothing.
fn check_no_mockall_in_normal_tree() -> Result<(), String> {
    eprintln!("==> tensor-cache: no mockall in `cargo tree -e normal`");
    let normal = tree(&["-e", "normal", "-p", "tensor-cache"])?;
    if let Some(m) = normal.iter().find(|c| c.starts_with("mockall")) {
        return Err(format!("tensor-cache's normal dependencies include {m}"));
    }
    let all = tree(&["-p", "tensor-cache"])?;
    if !all.iter().any(|c| c == "mockall") {
        return Err("mockall is missing from tensor-cache's dev-dependency tree: the check is broken".into());
    }
    eprintln!("    {} normal dependencies, none of them mockall (the dev tree has it)", normal.len());
    Ok(())
}

fn features() -> Result<(), String> {
    let manifest = workspace_root().join("crates/mempool/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let features = backend_features(&text);
    if features.is_empty() {
        return Err(format!("no backend features found in {}", manifest.display()));
    }
    eprintln!("==> backend features of mempool: {}", features.join(", "));
    run(&feature_steps(&features))?;
    check_no_mockall_in_normal_tree()
}

/// Builds the shim, lays out its folder, and runs `program` against it if given.
fn shim(args: &[String]) -> Result<(), String> {
    let release = args.first().is_some_and(|a| a == "--release");
    let rest = if release { &args[1..] } else { args };
    let profile = if release { "release" } else { "debug" };
    let mut build = vec!["build", "-p", "mempool-acl-shim"];
    if release {
        build.push("--release");
    }
    run(&[Step::new("the drop-in ACL library", &build)])?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let target = if target.is_absolute() { target } else { workspace_root().join(target) };
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
        let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-std=c11", "-O1", "-I"])
            .arg(workspace_root().join("tests/c"))
            .arg(program)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib64.display()))
            .arg("-lacl_rt")
            .status()
            .map_err(|e| format!("cannot run the C compiler: {e}"))?;
        if !status.success() {
            return Err(format!("compiling {program} failed ({status})"));
        }
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

/// The benchmark groups, what each measures, and which implementation is measured (the
/// others in the group are its baselines).
const BENCH_GROUPS: &[(&str, &str, &str)] = &[
    ("same_stream_pair", "malloc_async + free_async on one stream (same-stream reuse)", "emu"),
    ("live_100k", "a free and an allocation of random sizes (1-16 pages), 100,000 blocks live", "emu"),
    ("cross_stream", "an allocation on stream B of memory freed on stream A, per reuse rule", "emu"),
    ("stream_ops", "stream operations", "emu"),
    ("ffi_overhead", "malloc + free through the Ascend backend over the drop-in library", "ascend-backend"),
    ("replay", "a whole bundled trace replayed on the emulator", "emu"),
];

/// Runs the benchmarks and writes `target/bench-report.md`.
fn bench() -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let target = if target.is_absolute() { target } else { workspace_root().join(target) };
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let percentiles = target.join("bench-percentiles.tsv");
    let _ = std::fs::remove_file(&percentiles);
    let criterion = target.join("criterion");
    for (group, _, _) in BENCH_GROUPS {
        let _ = std::fs::remove_dir_all(criterion.join(group));
    }
    // The bench binaries write their timed loops' percentiles next to `criterion/`.
    run(&[
        Step::new("emulator benchmarks", &["bench", "-p", "mempool-tests", "--bench", "pool"]),
        Step::new("FFI overhead benchmark", &["bench", "-p", "mempool-tests", "--bench", "ffi_overhead"]),
        Step::new("trace replay benchmark", &["bench", "-p", "mempool-trace", "--bench", "replay"]),
    ])?;
    let tsv = std::fs::read_to_string(&percentiles).unwrap_or_default();
    let replay_tsv = std::fs::read_to_string(target.join("bench-replay.tsv")).unwrap_or_default();
    let mut report = bench_report(&criterion, &tsv);
    report.push_str(&replay_report(&replay_tsv));
    report.push_str(&targets_report(&criterion, &tsv, &replay_tsv));
    let path = target.join("bench-report.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{report}");
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The `replay` section: one row per bundled trace (`trace ops used_high reserved_high
/// ratio ops_per_sec` lines written by the replay bench).
fn replay_report(tsv: &str) -> String {
    let rows: Vec<Vec<&str>> =
        tsv.lines().map(|l| l.split('\t').collect()).filter(|f: &Vec<&str>| f.len() == 6).collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## `replay`: the bundled traces on the emulator (threshold = pool size)\n\n| trace | operations | USED_HIGH | RESERVED_HIGH | RESERVED_HIGH / USED_HIGH | operations/s |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let mib = |s: &str| s.parse::<u64>().map_or_else(|_| s.to_string(), |b| format!("{} MiB", b >> 20));
    for f in rows {
        let ops_s = f[5].parse::<f64>().map_or_else(|_| f[5].to_string(), |v| format!("{:.2} M", v / 1e6));
        md.push_str(&format!("| {} | {} | {} | {} | {} | {} |\n", f[0], f[1], mib(f[2]), mib(f[3]), f[4], ops_s));
    }
    md
}

/// The targets, each with the figure measured in this run and whether it is met.
fn targets_report(criterion: &Path, tsv: &str, replay_tsv: &str) -> String {
    let median = |group: &str, imp: &str, case: &str| case_median(&criterion.join(group), imp, case);
    let timed = |group: &str, imp: &str, col: usize| timed_loop(tsv, group, imp, col);
    let verdict = |ok: Option<bool>| match ok {
        Some(true) => "met",
        Some(false) => "**not met**",
        None => "not measured",
    };
    let mut md = String::from("\n## Targets\n\n| target | measured | |\n|---|---|---|\n");
    let cases = subdirs(&criterion.join("same_stream_pair").join("emu"));
    let pairs: Vec<(f64, f64)> = cases
        .iter()
        .filter_map(|c| {
            Some((median("same_stream_pair", "emu", c)?, median("same_stream_pair", "offset-allocator", c)?))
        })
        .collect();
    let worst = pairs.iter().map(|p| p.0).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    md.push_str(&format!(
        "| `same_stream_pair` at most 100 ns | slowest size {} | {} |\n",
        worst.map_or("-".into(), fmt_ns),
        verdict(worst.map(|w| w <= 100.0))
    ));
    let ratio = pairs.iter().map(|p| p.0 / p.1).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    md.push_str(&format!(
        "| `same_stream_pair` no slower than `offset-allocator` | up to {} x its time | {} |\n",
        ratio.map_or("-".into(), |r| format!("{r:.2}")),
        verdict(ratio.map(|r| r <= 1.0))
    ));
    let p99 = timed("live_100k", "emu", 3);
    md.push_str(&format!(
        "| `live_100k` p99 under 1 µs | {} (offset-allocator: {}) | {} |\n",
        p99.map_or("-".into(), fmt_ns),
        timed("live_100k", "offset-allocator", 3).map_or("-".into(), fmt_ns),
        verdict(p99.map(|p| p < 1000.0))
    ));
    let over = match (timed("ffi_overhead", "ascend-backend (rounds)", 2), timed("ffi_overhead", "raw-ffi (rounds)", 2))
    {
        (Some(m), Some(raw)) if raw > 0.0 => Some((m / raw - 1.0) * 100.0),
        _ => None,
    };
    md.push_str(&format!(
        "| `ffi_overhead` under 5 % | {} (alternating rounds) | {} |\n",
        over.map_or("-".into(), |o| format!("{o:+.1} %")),
        verdict(over.map(|o| o < 5.0))
    ));
    let training = replay_tsv
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f.len() == 6 && f[0] == "training.csv")
        .and_then(|f| f[4].parse::<f64>().ok());
    md.push_str(&format!(
        "| RESERVED_HIGH / USED_HIGH at most 1.05 on the training trace | {} | {} |\n",
        training.map_or("-".into(), |r| format!("{r:.3}")),
        verdict(training.map(|r| r <= 1.05))
    ));
    md
}

/// Criterion's median (ns) for implementation `imp` and case `case` of the group whose
/// folder is `dir`.
fn case_median(dir: &Path, imp: &str, case: &str) -> Option<f64> {
    let f = dir.join(imp).join(case).join("new").join("estimates.json");
    std::fs::read_to_string(f).ok().as_deref().and_then(criterion_median)
}

/// Column `col` (2: median, 3: p99) of a timed loop's line in the percentiles file.
fn timed_loop(tsv: &str, group: &str, imp: &str, col: usize) -> Option<f64> {
    tsv.lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f.len() == 5 && f[0] == group && f[1] == imp)
        .and_then(|f| f[col].parse::<f64>().ok())
}

/// The median (ns) in a criterion `estimates.json`.
fn criterion_median(json: &str) -> Option<f64> {
    let rest = &json[json.find("\"median\"")?..];
    let rest = &rest[rest.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = rest.find([',', '}'])?;
    rest[..end].trim().parse().ok()
}

/// Sorted subfolder names of `dir`.
fn subdirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// The Markdown report: per group, one row per case with the measured implementation's
/// median, each baseline's median and the ratio measured / baseline; then the per-operation
/// percentiles of the timed loops (`group impl median p99 ops` lines in `tsv`).
fn bench_report(criterion: &Path, tsv: &str) -> String {
    let mut md = String::from(
        "# Benchmark report\n\nCriterion medians per iteration; ratio = measured / baseline (below 1: faster than the baseline).\n",
    );
    for &(group, what, subject) in BENCH_GROUPS {
        let dir = criterion.join(group);
        let impls = subdirs(&dir);
        if impls.is_empty() {
            continue;
        }
        let baselines: Vec<&String> = impls.iter().filter(|i| *i != subject).collect();
        let mut cases: Vec<String> = impls.iter().flat_map(|i| subdirs(&dir.join(i))).collect();
        // Sizes in numeric order (2MiB before 8MiB before 64MiB), names alphabetically.
        let lead = |c: &String| c.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u64>().ok();
        cases.sort_by(|a, b| lead(a).cmp(&lead(b)).then_with(|| a.cmp(b)));
        cases.dedup();
        let median = |imp: &str, case: &str| case_median(&dir, imp, case);
        md.push_str(&format!("\n## `{group}`: {what}\n\n| case | {subject} |"));
        for b in &baselines {
            md.push_str(&format!(" {b} | ratio |"));
        }
        md.push_str("\n|---|---:|");
        md.push_str(&"---:|---:|".repeat(baselines.len()));
        md.push('\n');
        for case in &cases {
            let m = median(subject, case);
            md.push_str(&format!("| {case} | {} |", m.map_or("-".into(), fmt_ns)));
            for b in &baselines {
                let bm = median(b, case);
                let ratio = match (m, bm) {
                    (Some(m), Some(bm)) if bm > 0.0 => format!("{:.2}", m / bm),
                    _ => "-".into(),
                };
                md.push_str(&format!(" {} | {ratio} |", bm.map_or("-".into(), fmt_ns)));
            }
            md.push('\n');
        }
        if group == "ffi_overhead" {
            if let (Some(m), Some(raw)) = (median(subject, "2MiB"), median("raw-ffi", "2MiB")) {
                md.push_str(&format!(
                    "\nThe backend's added cost (criterion medians): {:+.1} %.\n",
                    (m / raw - 1.0) * 100.0
                ));
            }
            let round = |name: &str| timed_loop(tsv, group, &format!("{name} (rounds)"), 2);
            if let (Some(m), Some(raw)) = (round(subject), round("raw-ffi")) {
                md.push_str(&format!(
                    "The backend's added cost (medians of alternating rounds): {:+.1} %.\n",
                    (m / raw - 1.0) * 100.0
                ));
            }
        }
    }
    let rows: Vec<Vec<&str>> =
        tsv.lines().map(|l| l.split('\t').collect()).filter(|f: &Vec<&str>| f.len() == 5).collect();
    if !rows.is_empty() {
        md.push_str("\n## Timed loops\n\n`live_100k`: one `Instant` pair per operation. `ffi_overhead`: time per pair in each of the alternating rounds.\n\n| benchmark | implementation | median | p99 | samples |\n|---|---|---:|---:|---:|\n");
        for f in rows {
            let ns = |s: &str| s.parse::<f64>().map_or_else(|_| s.to_string(), fmt_ns);
            md.push_str(&format!("| {} | {} | {} | {} | {} |\n", f[0], f[1], ns(f[2]), ns(f[3]), f[4]));
        }
    }
    md
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().cloned();
    let result = match task.as_deref() {
        Some("shim") => shim(&args[1..]),
        Some("soak") => run(&soak_steps()),
        Some("ci") => run(&ci_before_features())
            .and_then(|()| valgrind_smoke())
            .and_then(|()| features())
            .and_then(|()| run(&ci_after_features())),
        Some("features") => features(),
        Some("bench") => bench(),
        Some("tidy") => match tidy::check(&workspace_root()).as_slice() {
            [] => Ok(()),
            problems => Err(format!("{} hygiene problems:\n{}", problems.len(), problems.join("\n"))),
        },
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  ci        tests, feature combinations, fmt, clippy and docs, as .ci/run does\n  features  the facade under every backend-feature combination, and the downstream example\n  shim      [--release] [PROGRAM|FILE.c [ARGS...]]: build and lay out the drop-in libacl_rt.so; run PROGRAM on it\n  soak      the reference model against the emulator, 100,000 random cases (release build)\n  bench     the benchmarks against their baselines; writes target/bench-report.md\n  tidy      repository hygiene: whitespace, unfinished code, manifests, the README's test command in .ci/run"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_report_has_a_row_per_trace() {
        let md = replay_report("training.csv\t1857\t10770972672\t11274289152\t1.047\t1724841\nbad line\n");
        assert!(md.contains("| training.csv | 1857 | 10272 MiB | 10752 MiB | 1.047 | 1.72 M |"), "{md}");
        assert_eq!(replay_report(""), "");
    }

    #[test]
    fn the_facade_manifest_lists_the_backend_features() {
        let text = std::fs::read_to_string(workspace_root().join("crates/mempool/Cargo.toml")).unwrap();
        let features = backend_features(&text);
        assert!(features.contains(&"emu".to_string()) && features.contains(&"mock".to_string()), "{features:?}");
        assert!(!features.contains(&"default".to_string()));
    }

    #[test]
    fn features_are_read_from_the_features_table_only() {
        let manifest = "[package]\nname = \"x\"\n[features]\n# a comment\ndefault = [\"a\"]\na = []\nb = [\"dep:c\"]\n\n[dependencies]\nc = \"1\"\n";
        assert_eq!(backend_features(manifest), ["a", "b"]);
    }

    #[test]
    fn combinations_are_none_each_and_all() {
        let f = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(combinations(&f(&["emu", "mock"])), [f(&[]), f(&["emu"]), f(&["mock"]), f(&["emu", "mock"])]);
        assert_eq!(combinations(&f(&["emu"])), [f(&[]), f(&["emu"])]);
    }

    /// Writes a criterion estimate file with `median` ns.
    fn estimate(criterion: &Path, group: &str, imp: &str, case: &str, median: f64) {
        let dir = criterion.join(group).join(imp).join(case).join("new");
        std::fs::create_dir_all(&dir).unwrap();
        let json = format!(
            "{{\"mean\":{{\"point_estimate\":1.0}},\"median\":{{\"point_estimate\":{median},\"standard_error\":0.1}}}}"
        );
        std::fs::write(dir.join("estimates.json"), json).unwrap();
    }

    /// The report reads criterion's files and the timed loops, computes the ratios, and
    /// marks each target from those figures.
    #[test]
    fn report_ratios_and_targets_come_from_the_measurements() {
        let criterion = std::env::temp_dir().join(format!("xtask-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&criterion);
        estimate(&criterion, "same_stream_pair", "emu", "2MiB", 80.0);
        estimate(&criterion, "same_stream_pair", "offset-allocator", "2MiB", 40.0);
        estimate(&criterion, "same_stream_pair", "emu", "64MiB", 120.0);
        estimate(&criterion, "same_stream_pair", "offset-allocator", "64MiB", 60.0);
        estimate(&criterion, "ffi_overhead", "ascend-backend", "2MiB", 210.0);
        estimate(&criterion, "ffi_overhead", "raw-ffi", "2MiB", 200.0);
        let tsv = "live_100k\temu\t400\t900\t1000\n\
                   ffi_overhead\tascend-backend (rounds)\t206\t250\t300\n\
                   ffi_overhead\traw-ffi (rounds)\t200\t240\t300\n";
        let replay = "training.csv\t1857\t1\t1\t1.047\t3000000\n";

        let report = bench_report(&criterion, tsv);
        assert!(report.contains("| 2MiB | 80.0 ns | 40.0 ns | 2.00 |"), "{report}");
        assert!(report.contains("| 64MiB | 120.0 ns | 60.0 ns | 2.00 |"), "{report}");
        assert!(report.contains("(criterion medians): +5.0 %"), "{report}");
        assert!(report.contains("(medians of alternating rounds): +3.0 %"), "{report}");

        let targets = targets_report(&criterion, tsv, replay);
        assert!(targets.contains("slowest size 120.0 ns | **not met** |"), "{targets}");
        assert!(targets.contains("up to 2.00 x its time | **not met** |"), "{targets}");
        assert!(targets.contains("| 900.0 ns (offset-allocator: -) | met |"), "{targets}");
        assert!(targets.contains("| +3.0 % (alternating rounds) | met |"), "{targets}");
        assert!(targets.contains("| 1.047 | met |"), "{targets}");
        let _ = std::fs::remove_dir_all(&criterion);
    }
}
