//! `replay`: each bundled trace replayed against the emulator, with the release threshold
//! at the pool size (everything stays cached, as in a training loop). Criterion times the
//! whole replay; the peaks, RESERVED_HIGH / USED_HIGH and operations per second of each
//! trace go to `target/bench-replay.tsv` for `cargo xtask bench`'s report.
//!
//! `replay_real`: the same for the real traces in the folder `MEMPOOL_TRACES` names (its
//! top-level `*.csv` files), once per entry of [`settings`]; "not run" when the variable
//! is unset or the folder absent. Each trace's peaks and the operations per second of its
//! replay loop ([`loop_speed`]: the best and the median of repeated replays, each on a
//! fresh emulator) go to `target/bench-real-traces.tsv` and its plot (USED, RESERVED and
//! the live requested bytes, from a replay that reads the statistics after every row) to
//! `target/bench-plots/TRACE.svg`. Criterion times the whole replay (the emulator's setup
//! included, no statistics per row; the trace parsed and its ids resolved beforehand,
//! once, as [`Prepared`] does) of the pool alone (`emu`) and through the small-block layer
//! taking every request (`small-blocks`), and the same harness over a null pool (`null`: a
//! bump pointer that frees nothing, no emulator), the harness's own ceiling beside the
//! pool's figures; the null pool's loop speeds go to `target/bench-replay-harness.tsv`
//! (`trace ops best_ops_per_s median_ops_per_s`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mempool_trace::generate::bundled;
use mempool_trace::replay::{Harness, Prepared, ReplayOptions, Report, replay, replay_prepared, replay_with};
use mempool_trace::{Trace, parse, svg};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `target/`, next to the bench binary's profile folder.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench binary knows its path");
    // target/<profile>/deps/<bench>
    exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), PathBuf::from)
}

fn write(path: &Path, text: &str) {
    let written = std::fs::File::create(path).and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot write {}: {e}", path.display());
    }
}

fn bench_replay(c: &mut Criterion) {
    let opts = ReplayOptions::default();
    let mut group = c.benchmark_group("replay");
    let mut lines = String::new();
    for (name, trace) in bundled() {
        let report = replay_with(&trace, &opts, &Harness::default(), |_| {}).expect("the bundled traces replay");
        lines.push_str(&format!(
            "{name}\t{}\t{}\t{}\t{:.3}\t{:.0}\n",
            report.ops,
            report.used_high,
            report.reserved_high,
            report.ratio(),
            report.ops_per_sec()
        ));
        println!(
            "replay/{name}: {} ops, USED_HIGH {} MiB, RESERVED_HIGH {} MiB, ratio {:.3}, {:.2} M ops/s",
            report.ops,
            report.used_high >> 20,
            report.reserved_high >> 20,
            report.ratio(),
            report.ops_per_sec() / 1e6
        );
        group.bench_function(criterion::BenchmarkId::new("emu", name), |b| {
            b.iter(|| replay_with(&trace, &opts, &Harness::default(), |_| {}).expect("the bundled traces replay").ops);
        });
    }
    group.finish();
    write(&target_dir().join("bench-replay.tsv"), &lines);
}

/// The settings each real trace is replayed with: a label (a column of the report) and the
/// options. The first is the pool alone; a setting whose label starts with
/// "small blocks" is read by the report as the small-block layer's figure.
fn settings() -> Vec<(&'static str, ReplayOptions)> {
    let through = |t: u64| ReplayOptions { small_blocks: Some(t), ..ReplayOptions::default() };
    vec![
        ("pool alone", ReplayOptions::default()),
        ("small blocks 1 MiB", through(1 << 20)),
        ("small blocks 64 MiB", through(64 << 20)),
        ("small blocks all", through(16 << 30)),
    ]
}

/// The real traces: `(file name, trace)` for every top-level `*.csv` of `MEMPOOL_TRACES`,
/// by name; `Err` says why none are read.
fn real_traces() -> Result<Vec<(String, Trace)>, String> {
    let dir = std::env::var_os("MEMPOOL_TRACES").ok_or("MEMPOOL_TRACES is unset")?;
    let dir = PathBuf::from(dir);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("MEMPOOL_TRACES={}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let trace = parse(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        out.push((p.file_name().unwrap_or_default().to_string_lossy().into_owned(), trace));
    }
    Ok(out)
}

/// The fewest replays [`loop_speed`] runs, and the time after which it stops adding more.
const LOOP_REPLAYS: usize = 15;
const LOOP_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// The replay loop's operations per second over repeated replays of `prepared` (each on
/// a fresh emulator, as criterion's are): at least [`LOOP_REPLAYS`], more until
/// [`LOOP_BUDGET`] has passed. Returns the best (the fastest replay) and the median.
///
/// A replay is deterministic: the same calls in the same order, whatever the run. What
/// varies between runs is the machine (on a shared virtual machine the same replay's loop
/// time swings by up to 1.8 times from one second to the next), so the fastest replay is
/// the loop's cost and the median says how much the machine took from it.
fn loop_speed(prepared: &Prepared<'_>, opts: &ReplayOptions, harness: &Harness) -> Result<(f64, f64), String> {
    let start = std::time::Instant::now();
    let mut speeds = Vec::new();
    while speeds.len() < LOOP_REPLAYS || start.elapsed() < LOOP_BUDGET {
        let r = replay_prepared(prepared, opts, harness, |_| {}).map_err(|e| e.to_string())?;
        speeds.push(r.ops_per_sec());
    }
    speeds.sort_by(f64::total_cmp);
    Ok((speeds[speeds.len() - 1], speeds[speeds.len() / 2]))
}

/// The figures a replay's settings decide (not its times nor its samples).
fn figures(r: &Report) -> impl PartialEq + std::fmt::Debug {
    (r.ops, r.skipped_failures, r.requested_high, r.used_high, r.reserved_high, r.reserved_end, r.reuse, r.small)
}

/// The setting criterion times through the small-block layer.
const LAYER_TIMED: &str = "small blocks all";

fn bench_real(c: &mut Criterion) {
    let tsv = target_dir().join("bench-real-traces.tsv");
    let harness_tsv = target_dir().join("bench-replay-harness.tsv");
    let _ = std::fs::remove_file(&tsv);
    let _ = std::fs::remove_file(&harness_tsv);
    let traces = match real_traces() {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => return println!("replay_real: not run: no *.csv in MEMPOOL_TRACES"),
        Err(why) => return println!("replay_real: not run: {why}"),
    };
    let plots = target_dir().join("bench-plots");
    let _ = std::fs::create_dir_all(&plots);
    let mut lines = String::new();
    let mut null_lines = String::new();
    let null = Harness { null_pool: true, ..Harness::default() };
    let mut group = c.benchmark_group("replay_real");
    group.sample_size(10);
    for (name, trace) in &traces {
        let prepared = Prepared::new(trace);
        // The harness alone, over the null pool.
        match replay_with(trace, &ReplayOptions::default(), &null, |_| {})
            .map_err(|e| e.to_string())
            .and_then(|r| Ok((r, loop_speed(&prepared, &ReplayOptions::default(), &null)?)))
        {
            Ok((report, (best, median))) => {
                null_lines.push_str(&format!("{name}\t{}\t{best:.0}\t{median:.0}\n", report.ops));
                println!(
                    "replay_real/{name} (null pool): {} ops, {:.2} M ops/s in the replay loop (best; median {:.2})",
                    report.ops,
                    best / 1e6,
                    median / 1e6
                );
                group.throughput(Throughput::Elements(trace.rows.len() as u64));
                group.bench_function(criterion::BenchmarkId::new("null", name), |b| {
                    b.iter(|| {
                        replay_prepared(&prepared, &ReplayOptions::default(), &null, |_| {}).map(|r| r.ops).unwrap_or(0)
                    });
                });
            }
            Err(e) => eprintln!("replay_real/{name} (null pool): {e}"),
        }
        for (k, (label, opts)) in settings().into_iter().enumerate() {
            // The figures and speed without statistics per row, the plot from a replay with.
            let (report, plotted, (best, median)) = match replay_with(trace, &opts, &Harness::default(), |_| {})
                .and_then(|r| Ok((r, replay(trace, &opts, |_| {})?)))
                .map_err(|e| e.to_string())
                .and_then(|(r, p)| Ok((r, p, loop_speed(&prepared, &opts, &Harness::default())?)))
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("replay_real/{name} ({label}): {e}");
                    continue;
                }
            };
            assert_eq!(figures(&report), figures(&plotted), "{name} ({label}): the samples changed the figures");
            lines.push_str(&format!(
                "{name}\t{label}\t{}\t{}\t{}\t{}\t{best:.0}\t{median:.0}\n",
                report.ops, report.requested_high, report.used_high, report.reserved_high,
            ));
            println!(
                "replay_real/{name} ({label}): {} ops, peak requested {} B, USED_HIGH {} B, RESERVED_HIGH {} B, RESERVED_HIGH / peak requested {:.3}, {:.2} M ops/s in the replay loop (best; median {:.2})",
                report.ops,
                report.requested_high,
                report.used_high,
                report.reserved_high,
                report.reserved_over_requested(),
                best / 1e6,
                median / 1e6
            );
            let suffix = if k == 0 { String::new() } else { format!(" ({label})") };
            let title = format!("{name}{suffix}: USED, RESERVED and requested (MiB)");
            let file = if k == 0 { format!("{name}.svg") } else { format!("{name}.{k}.svg") };
            write(&plots.join(file), &svg::plot(&title, &plotted.samples));
            // The whole replay (the emulator's setup included) of the pool alone, and
            // through the layer.
            let timed = match k {
                0 => "emu",
                _ if label == LAYER_TIMED => "small-blocks",
                _ => continue,
            };
            group.throughput(Throughput::Elements(trace.rows.len() as u64));
            group.bench_function(criterion::BenchmarkId::new(timed, name), |b| {
                b.iter(|| replay_prepared(&prepared, &opts, &Harness::default(), |_| {}).map(|r| r.ops).unwrap_or(0));
            });
        }
    }
    group.finish();
    write(&tsv, &lines);
    write(&harness_tsv, &null_lines);
}

criterion_group!(benches, bench_replay, bench_real);
criterion_main!(benches);
