//! `cargo xtask bench`: the benchmarks (release), the emulator's against `offset-allocator`
//! and `std::alloc`, and the Ascend backend over the drop-in library against raw calls into
//! it; writes `target/bench-report.md` with the medians and the ratios ([`crate::report`]).

use crate::report::{BENCH_GROUPS, bench_report, real_traces_report, replay_report, targets_report};
use crate::util::{Step, run, target_dir, traces_env};

/// Runs the benchmarks and writes `target/bench-report.md`.
pub(crate) fn run_all() -> Result<(), String> {
    let target = target_dir();
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let percentiles = target.join("bench-percentiles.tsv");
    let _ = std::fs::remove_file(&percentiles);
    let criterion = target.join("criterion");
    for (group, _, _) in BENCH_GROUPS {
        let _ = std::fs::remove_dir_all(criterion.join(group));
    }
    // The bench binaries write their timed loops' percentiles next to `criterion/`.
    run(
        &[
            Step::new("emulator benchmarks", &["bench", "-p", "mempool-tests", "--bench", "pool"]),
            Step::new("FFI overhead benchmark", &["bench", "-p", "mempool-tests", "--bench", "ffi_overhead"]),
            Step::new("trace replay benchmark", &["bench", "-p", "mempool-trace", "--bench", "replay"]),
            Step::new("history switch benchmark", &["bench", "-p", "mempool-alloc", "--bench", "history"]),
        ],
        &traces_env(),
    )?;
    let tsv = std::fs::read_to_string(&percentiles).unwrap_or_default();
    let replay_tsv = std::fs::read_to_string(target.join("bench-replay.tsv")).unwrap_or_default();
    let real_tsv = std::fs::read_to_string(target.join("bench-real-traces.tsv")).unwrap_or_default();
    let mut report = bench_report(&criterion, &tsv);
    report.push_str(&replay_report(&replay_tsv));
    report.push_str(&real_traces_report(&criterion, &real_tsv));
    report.push_str(&targets_report(&criterion, &tsv, &replay_tsv, &real_tsv));
    let path = target.join("bench-report.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{report}");
    eprintln!("wrote {}", path.display());
    Ok(())
}
