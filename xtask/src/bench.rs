//! `cargo xtask bench`: the benchmarks (release), the emulator's against `offset-allocator`
//! and `std::alloc`, host threads against independent pools and a mutex, dense stream
//! graphs (where `tests/benches/graph.rs` exists), and the Ascend backend over the drop-in
//! library against raw calls into it, each binary of the tests crate after the machine's
//! floors; writes `target/bench-report.md` with the medians and the ratios
//! ([`crate::report`]).

use crate::report::{
    BENCH_GROUPS, MORE_GROUPS, alloc_threads_report, bench_report, real_traces_report, replay_report, targets_report,
    threads_report,
};
use crate::util::{Step, run, target_dir, traces_env, workspace_root};

/// Runs the benchmarks and writes `target/bench-report.md`.
pub(crate) fn run_all() -> Result<(), String> {
    let target = target_dir();
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let percentiles = target.join("bench-percentiles.tsv");
    let _ = std::fs::remove_file(&percentiles);
    let _ = std::fs::remove_file(target.join("bench-floors.tsv"));
    let criterion = target.join("criterion");
    for group in BENCH_GROUPS.iter().map(|g| g.0).chain(MORE_GROUPS.iter().copied()) {
        let _ = std::fs::remove_dir_all(criterion.join(group));
    }
    // The bench binaries write their timed loops' percentiles (and the floors' notes) next
    // to `criterion/`; each of the tests crate's runs the floors first.
    let mut steps = vec![
        Step::new("emulator benchmarks", &["bench", "-p", "mempool-tests", "--bench", "pool"]),
        Step::new("thread scaling benchmark", &["bench", "-p", "mempool-tests", "--bench", "threads"]),
    ];
    // The dense stream graphs' bench, where this checkout has it.
    if workspace_root().join("tests/benches/graph.rs").exists() {
        steps.push(Step::new("dense stream graph benchmark", &["bench", "-p", "mempool-tests", "--bench", "graph"]));
    }
    steps.extend([
        Step::new("FFI overhead benchmark", &["bench", "-p", "mempool-tests", "--bench", "ffi_overhead"]),
        Step::new("library threads benchmark", &["bench", "-p", "mempool-tests", "--bench", "alloc_threads"]),
        Step::new("trace replay benchmark", &["bench", "-p", "mempool-trace", "--bench", "replay"]),
        Step::new("history switch benchmark", &["bench", "-p", "mempool-alloc", "--bench", "history"]),
    ]);
    run(&steps, &traces_env())?;
    let tsv = std::fs::read_to_string(&percentiles).unwrap_or_default();
    let replay_tsv = std::fs::read_to_string(target.join("bench-replay.tsv")).unwrap_or_default();
    let real_tsv = std::fs::read_to_string(target.join("bench-real-traces.tsv")).unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut report = bench_report(&criterion, &tsv);
    report.push_str(&threads_report(&criterion, cores));
    report.push_str(&alloc_threads_report(&criterion));
    report.push_str(&replay_report(&replay_tsv));
    report.push_str(&real_traces_report(&criterion, &real_tsv));
    report.push_str(&targets_report(&criterion, &tsv, &replay_tsv, &real_tsv));
    let path = target.join("bench-report.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{report}");
    eprintln!("wrote {}", path.display());
    Ok(())
}
