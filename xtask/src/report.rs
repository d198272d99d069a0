//! The benchmark report that `cargo xtask bench` writes to `target/bench-report.md`, from
//! criterion's files and the timed loops' percentiles.

use std::path::Path;

mod scaling;

pub(crate) use scaling::{GROUPS as MORE_GROUPS, alloc_threads_report, threads_report};

/// The benchmark groups, what each measures, and which implementation is measured (the
/// others in the group are its baselines).
pub(crate) const BENCH_GROUPS: &[(&str, &str, &str)] = &[
    ("same_stream_pair", "malloc_async + free_async on one stream (same-stream reuse)", "emu"),
    (
        "small_blocks_pair",
        "malloc_async + free_async through the small-block layer (threshold 64 MiB) on one stream, against the pool's own pair and offset-allocator's at 512-byte units",
        "small-blocks",
    ),
    (
        "live_100k",
        "a free and an allocation of random sizes (1-16 pages), 100,000 blocks live; `-1k-live`: the same with 1,000 live, where both fit in the caches; `offset-allocator+map`: `offset-allocator` behind a pointer API (a free names an address, found in a hash map)",
        "emu",
    ),
    ("cross_stream", "an allocation on stream B of memory freed on stream A, per reuse rule", "emu"),
    ("stream_ops", "stream operations", "emu"),
    (
        "copy_contention",
        "malloc_async + free_async on a pool while 256 MiB copies into it run on another thread, against none running",
        "during-copy",
    ),
    (
        "streams_scaling",
        "malloc + free + record + wait, round-robin over N live streams (N-live), and on two streams after N streams were created and destroyed (N-ever)",
        "emu",
    ),
    (
        "two_threads",
        "malloc_async + free_async pairs on one pool, time per pair: two threads on streams of their own against one thread",
        "two-threads",
    ),
    (
        "dense_graph",
        "malloc + free on stream k mod N, a record there and a wait on stream (7k + 3) mod N, so that the waits touch all N live streams (`emu`), against waits round a ring (`ring`)",
        "emu",
    ),
    ("ffi_overhead", "malloc + free through the Ascend backend over the drop-in library", "ascend-backend"),
    ("ffi_overhead_cuda", "malloc + free through the CUDA backend over the CPU libcuda.so.1", "cuda-backend"),
    (
        "history_switch",
        "an allocation and its free through libmempool_alloc's exports with the allocation history off, against it on and the small-block layer called directly",
        "history-off",
    ),
    ("replay", "a whole bundled trace replayed on the emulator", "emu"),
    ("replay_real", "a whole real trace replayed on the emulator (the folder `MEMPOOL_TRACES` names)", "emu"),
];

/// What PyTorch's caching allocator reserved on the real traces it recorded, against the
/// trace's peak of live requested bytes, as recorded with each trace (the traces' README):
/// (trace, ratio, what was recorded).
pub(crate) const PYTORCH_RECORDED: &[(&str, &str, &str)] = &[
    (
        "cs336-medium-ctx512-train.csv",
        "≥ 1.019",
        "the caching allocator held 12,660,506,624 bytes in 400 segments when the snapshot was dumped (a lower bound on its peak reserved), against 12,426,629,128 bytes peak live",
    ),
    (
        "decomfl-opt125m-zo-finetune.csv",
        "1.064",
        "PyTorch reserved 1,897,922,560 bytes (61 `segment_alloc`, no `segment_free`) against 1,783,664,516 bytes peak live",
    ),
];

/// The bounds on RESERVED_HIGH / peak requested through the small-block layer.
const SMALL_BLOCK_BOUNDS: &[(&str, f64)] =
    &[("cs336-medium-ctx512-train.csv", 1.03), ("decomfl-opt125m-zo-finetune.csv", 1.06)];

/// Whole-trace replay speed the issue asks for, operations per second.
const REPLAY_TARGET_OPS: f64 = 10e6;

/// One line of `bench-real-traces.tsv`: a real trace replayed with one setting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RealRow {
    trace: String,
    setting: String,
    ops: u64,
    requested_high: u64,
    used_high: u64,
    reserved_high: u64,
    /// The replay loop's operations per second: the fastest of repeated replays.
    loop_best: f64,
    /// The same, the median replay.
    loop_median: f64,
}

impl RealRow {
    fn ratio(&self) -> f64 {
        if self.requested_high == 0 { 1.0 } else { self.reserved_high as f64 / self.requested_high as f64 }
    }
}

/// The lines of `bench-real-traces.tsv` (`trace setting ops requested_high used_high
/// reserved_high loop_best_ops_per_s loop_median_ops_per_s`); malformed lines are skipped.
pub(crate) fn real_rows(tsv: &str) -> Vec<RealRow> {
    tsv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != 8 {
                return None;
            }
            Some(RealRow {
                trace: f[0].to_string(),
                setting: f[1].to_string(),
                ops: f[2].parse().ok()?,
                requested_high: f[3].parse().ok()?,
                used_high: f[4].parse().ok()?,
                reserved_high: f[5].parse().ok()?,
                loop_best: f[6].parse().ok()?,
                loop_median: f[7].parse().ok()?,
            })
        })
        .collect()
}

/// Whole-trace replays per second of `trace` by criterion's median (`replay_real/emu`).
fn real_ops_per_sec(criterion: &Path, row: &RealRow) -> Option<f64> {
    let ns = case_median(&criterion.join("replay_real"), "emu", &row.trace)?;
    (ns > 0.0).then(|| row.ops as f64 / (ns * 1e-9))
}

/// A row's replay loop speeds, "fastest / median M ops/s".
fn loop_speeds(r: &RealRow) -> String {
    format!("{:.2} / {:.2} M ops/s", r.loop_best / 1e6, r.loop_median / 1e6)
}

/// A setting that replays through the small-block layer.
fn is_small_blocks(setting: &str) -> bool {
    setting.starts_with("small blocks")
}

fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The real traces' section: per trace the peak of live requested bytes, the pool's
/// USED_HIGH and RESERVED_HIGH, RESERVED_HIGH / peak requested for every setting replayed
/// (a column each; "through the small-block layer" is marked not measured while no such
/// setting exists), PyTorch's recorded figure, the whole-trace replay speed, and the plot.
pub(crate) fn real_traces_report(criterion: &Path, tsv: &str) -> String {
    let rows = real_rows(tsv);
    if rows.is_empty() {
        return "\n## Real traces\n\nNot run: `MEMPOOL_TRACES` was unset or its folder absent.\n".into();
    }
    let mut traces: Vec<&str> = Vec::new();
    let mut settings: Vec<&str> = Vec::new();
    for r in &rows {
        if !traces.contains(&r.trace.as_str()) {
            traces.push(&r.trace);
        }
        if !settings.contains(&r.setting.as_str()) {
            settings.push(&r.setting);
        }
    }
    let base = settings[0];
    let no_layer = !settings.iter().any(|s| is_small_blocks(s));
    let mut md = format!(
        "\n## Real traces\n\nThe traces in the folder `MEMPOOL_TRACES` names, replayed on the emulator with default settings (2 MiB granularity, threshold = pool size). Peak requested: the most live requested bytes at once (before rounding); USED_HIGH and RESERVED_HIGH: the first setting, `{base}`. Replay speed: operations / criterion's median of a whole replay (the emulator's setup included), and counting only the replay loop (one clock around it, handles made beforehand), the fastest and the median of repeated replays (at least 15, each on a fresh emulator: the calls are the same in every replay, so the fastest is the loop's cost and the median what the machine took from it); the harness's own ceiling is the `null` rows of the `replay_real` group and `bench-replay-harness.tsv`.\n\n| trace | operations | peak requested | USED_HIGH | USED_HIGH / peak requested | RESERVED_HIGH |"
    );
    for s in &settings {
        md.push_str(&format!(" RESERVED_HIGH / peak requested: {s} |"));
    }
    if no_layer {
        md.push_str(" RESERVED_HIGH / peak requested: through the small-block layer |");
    }
    md.push_str(
        " PyTorch (recorded) | whole-trace replay | in the loop, fastest / median |\n|---|---:|---:|---:|---:|---:|",
    );
    md.push_str(&"---:|".repeat(settings.len() + usize::from(no_layer) + 3));
    md.push('\n');
    for t in &traces {
        let get = |s: &str| rows.iter().find(|r| r.trace == *t && r.setting == s);
        let Some(b) = get(base) else { continue };
        md.push_str(&format!(
            "| {t} | {} | {} | {} | {:.3} | {} |",
            thousands(b.ops),
            thousands(b.requested_high),
            thousands(b.used_high),
            if b.requested_high == 0 { 1.0 } else { b.used_high as f64 / b.requested_high as f64 },
            thousands(b.reserved_high)
        ));
        for s in &settings {
            md.push_str(&format!(" {} |", get(s).map_or("-".into(), |r| format!("{:.3}", r.ratio()))));
        }
        if no_layer {
            md.push_str(" not measured (no layer yet) |");
        }
        let pytorch = PYTORCH_RECORDED.iter().find(|p| p.0 == *t).map_or("-", |p| p.1);
        let speed = real_ops_per_sec(criterion, b).map_or("-".into(), |v| format!("{:.2} M ops/s", v / 1e6));
        md.push_str(&format!(" {pytorch} | {speed} | {} |\n", loop_speeds(b)));
    }
    md.push_str("\nThe replay loop per setting, M operations/s (fastest / median of repeated replays):\n\n| trace |");
    for s in &settings {
        md.push_str(&format!(" {s} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(settings.len()));
    md.push('\n');
    for t in &traces {
        md.push_str(&format!("| {t} |"));
        for s in &settings {
            let cell = rows.iter().find(|r| r.trace == *t && r.setting == *s).map_or("-".into(), loop_speeds);
            md.push_str(&format!(" {cell} |"));
        }
        md.push('\n');
    }
    md.push_str("\nPyTorch's figures, as recorded with the traces:\n\n");
    for (t, ratio, what) in PYTORCH_RECORDED {
        md.push_str(&format!("- `{t}` ({ratio}): {what}.\n"));
    }
    md.push_str("\nPlots (USED, RESERVED and the live requested bytes over the replay, pool alone):");
    for t in &traces {
        md.push_str(&format!(" [{t}](bench-plots/{t}.svg)"));
    }
    md.push('\n');
    md
}

/// The `replay` section: one row per bundled trace (`trace ops used_high reserved_high
/// ratio ops_per_sec` lines written by the replay bench).
pub(crate) fn replay_report(tsv: &str) -> String {
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
pub(crate) fn targets_report(criterion: &Path, tsv: &str, replay_tsv: &str, real_tsv: &str) -> String {
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
    // The target is the small class: requests of at most 1 MiB, carved from 2 MiB blocks
    // (cases are named by their size in bytes).
    let small = subdirs(&criterion.join("small_blocks_pair").join("small-blocks"))
        .iter()
        .filter(|c| c.trim_end_matches('B').parse::<u64>().is_ok_and(|b| b <= 1 << 20))
        .filter_map(|c| median("small_blocks_pair", "small-blocks", c))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    md.push_str(&format!(
        "| the small-block layer's pair under 50 ns (requests up to 1 MiB) | slowest size {} | {} |\n",
        small.map_or("-".into(), fmt_ns),
        verdict(small.map(|w| w < 50.0))
    ));
    let p99 = timed("live_100k", "emu", 3);
    md.push_str(&format!(
        "| `live_100k` p99 under 1 µs | {} (offset-allocator: {}) | {} |\n",
        p99.map_or("-".into(), fmt_ns),
        timed("live_100k", "offset-allocator", 3).map_or("-".into(), fmt_ns),
        verdict(p99.map(|p| p < 1000.0))
    ));
    let emu_live = median("live_100k", "emu", "free+alloc");
    let live = emu_live.zip(median("live_100k", "offset-allocator", "free+alloc"));
    // For context, not judged: the same against `offset-allocator` behind a pointer API.
    let mapped = emu_live
        .zip(median("live_100k", "offset-allocator+map", "free+alloc"))
        .map_or(String::new(), |(m, b)| format!(" ({:.2} x `offset-allocator+map`'s)", m / b));
    md.push_str(&format!(
        "| `live_100k` within 1.5 x `offset-allocator` | {} x its time{mapped} | {} |\n",
        live.map_or("-".into(), |(m, b)| format!("{:.2}", m / b)),
        verdict(live.map(|(m, b)| m <= 1.5 * b))
    ));
    let p99s = p99.zip(timed("live_100k", "offset-allocator", 3));
    md.push_str(&format!(
        "| `live_100k` p99 no worse than `offset-allocator`'s | {} | {} |\n",
        p99s.map_or("-".into(), |(m, b)| format!("{} against {}", fmt_ns(m), fmt_ns(b))),
        verdict(p99s.map(|(m, b)| m <= b))
    ));
    let threads =
        median("two_threads", "one-thread", "malloc+free").zip(median("two_threads", "two-threads", "malloc+free"));
    md.push_str(&format!(
        "| two threads on their own streams of one pool: at least 1.5 x one thread's throughput | {} x | {} |\n",
        threads.map_or("-".into(), |(one, two)| format!("{:.2}", one / two)),
        verdict(threads.map(|(one, two)| one >= 1.5 * two))
    ));
    md.push_str(&scaling::targets_rows(criterion, verdict));
    let scaling = |case: &str| median("streams_scaling", "emu", case);
    let live64 = scaling("64-live").zip(scaling("4-live"));
    md.push_str(&format!(
        "| `streams_scaling`: 64 live streams within 2 x the cost with 4 | {} x ({} against {}) | {} |\n",
        live64.map_or("-".into(), |(m, b)| format!("{:.2}", m / b)),
        scaling("64-live").map_or("-".into(), fmt_ns),
        scaling("4-live").map_or("-".into(), fmt_ns),
        verdict(live64.map(|(m, b)| m <= 2.0 * b))
    ));
    let ever = scaling("10000-ever").zip(scaling("100-ever"));
    md.push_str(&format!(
        "| `streams_scaling`: cost independent of the streams ever created (10,000 within 1.5 x 100) | {} x ({} against {}) | {} |\n",
        ever.map_or("-".into(), |(m, b)| format!("{:.2}", m / b)),
        scaling("10000-ever").map_or("-".into(), fmt_ns),
        scaling("100-ever").map_or("-".into(), fmt_ns),
        verdict(ever.map(|(m, b)| m <= 1.5 * b))
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
    let real = real_rows(real_tsv);
    let base = real.first().map(|r| r.setting.clone());
    for &(trace, bound) in SMALL_BLOCK_BOUNDS {
        let layer = real
            .iter()
            .filter(|r| r.trace == trace && is_small_blocks(&r.setting))
            .min_by(|a, b| a.ratio().total_cmp(&b.ratio()));
        let alone = real.iter().find(|r| r.trace == trace && Some(&r.setting) == base.as_ref());
        let measured = match (layer, alone) {
            (Some(l), _) => format!("{:.3} ({})", l.ratio(), l.setting),
            (None, Some(a)) => format!("no small-block layer yet; pool alone {:.3}", a.ratio()),
            (None, None) => "-".into(),
        };
        md.push_str(&format!(
            "| RESERVED_HIGH / peak requested at most {bound} on `{trace}` through the small-block layer | {measured} | {} |\n",
            verdict(layer.map(|l| l.ratio() <= bound))
        ));
    }
    // Judged on the replay loop's fastest replay, every trace and every setting (the pool
    // alone and each threshold of the small-block layer); the medians and criterion's
    // whole replays (setup included) beside it.
    let slowest_of = |layer: bool| {
        real.iter().filter(|r| is_small_blocks(&r.setting) == layer).min_by(|a, b| a.loop_best.total_cmp(&b.loop_best))
    };
    let (alone, layer) = (slowest_of(false), slowest_of(true));
    let slowest = [alone, layer].into_iter().flatten().min_by(|a, b| a.loop_best.total_cmp(&b.loop_best));
    let describe = |what: &str, r: Option<&RealRow>| {
        r.map(|r| {
            let median = real
                .iter()
                .filter(|m| is_small_blocks(&m.setting) == is_small_blocks(&r.setting))
                .map(|m| m.loop_median)
                .min_by(f64::total_cmp)
                .unwrap_or(0.0);
            format!(
                "{what}: slowest {:.2} M ops/s ({}, {}; the slowest median {:.2})",
                r.loop_best / 1e6,
                r.trace,
                r.setting,
                median / 1e6
            )
        })
    };
    let whole = real
        .iter()
        .filter(|r| Some(&r.setting) == base.as_ref())
        .filter_map(|r| Some((r.trace.clone(), real_ops_per_sec(criterion, r)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let parts: Vec<String> = [
        describe("the replay loop, pool alone", alone),
        describe("through the small-block layer", layer),
        whole.map(|(t, v)| format!("whole replays with setup, pool alone: slowest {:.2} M ops/s ({t})", v / 1e6)),
    ]
    .into_iter()
    .flatten()
    .collect();
    md.push_str(&format!(
        "| whole-trace replay of the real traces at 10 M operations/s or more | {} | {} |\n",
        if parts.is_empty() { "-".into() } else { parts.join("; ") },
        verdict(slowest.map(|s| s.loop_best >= REPLAY_TARGET_OPS))
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

/// The cases of an implementation's folder `dir`: its subfolders, or one unnamed case
/// (`""`) for a benchmark without cases, whose folder holds criterion's own (`new`, `base`).
fn cases_of(dir: &Path) -> Vec<String> {
    if dir.join("new").join("estimates.json").is_file() {
        return vec![String::new()];
    }
    subdirs(dir)
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
pub(crate) fn bench_report(criterion: &Path, tsv: &str) -> String {
    let mut md = String::from(
        "# Benchmark report\n\nCriterion medians per iteration; ratio = measured / baseline (below 1: faster than the baseline).\n",
    );
    // The bench binaries write `bench-floors.tsv` beside criterion's folder.
    let notes = criterion.parent().map(|t| std::fs::read_to_string(t.join("bench-floors.tsv")).unwrap_or_default());
    md.push_str(&scaling::floors_report(criterion, &notes.unwrap_or_default()));
    for &(group, what, subject) in BENCH_GROUPS {
        let dir = criterion.join(group);
        let impls = subdirs(&dir);
        if impls.is_empty() {
            continue;
        }
        let baselines: Vec<&String> = impls.iter().filter(|i| *i != subject).collect();
        let mut cases: Vec<String> = impls.iter().flat_map(|i| cases_of(&dir.join(i))).collect();
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
            let label = if case.is_empty() { "(one case)" } else { case };
            md.push_str(&format!("| {label} | {} |", m.map_or("-".into(), fmt_ns)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_report_has_a_row_per_trace() {
        let md = replay_report("training.csv\t1857\t10770972672\t11274289152\t1.047\t1724841\nbad line\n");
        assert!(md.contains("| training.csv | 1857 | 10272 MiB | 10752 MiB | 1.047 | 1.72 M |"), "{md}");
        assert_eq!(replay_report(""), "");
    }

    /// The real traces' table has a column per setting replayed, PyTorch's figure beside
    /// it, the speed from criterion's median, and a marked column while no setting goes
    /// through the small-block layer.
    #[test]
    fn the_real_traces_report_compares_settings_with_pytorch() {
        let criterion = std::env::temp_dir().join(format!("xtask-real-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&criterion);
        estimate(&criterion, "replay_real", "emu", "decomfl-opt125m-zo-finetune.csv", 1_549_500.0);
        let tsv = "decomfl-opt125m-zo-finetune.csv\tpool alone\t15495\t1783664516\t1801453568\t2675965952\t12000000\t4000000\n\
                   somas-resnet50.csv\tpool alone\t2084\t1515472556\t1520435200\t1520435200\t11000000\t9000000\n\
                   garbage\n";
        let md = real_traces_report(&criterion, tsv);
        assert!(md.contains("RESERVED_HIGH / peak requested: pool alone | RESERVED_HIGH / peak requested: through the small-block layer | PyTorch (recorded) |"), "{md}");
        assert!(
            md.contains("| decomfl-opt125m-zo-finetune.csv | 15,495 | 1,783,664,516 | 1,801,453,568 | 1.010 | 2,675,965,952 | 1.500 | not measured (no layer yet) | 1.064 | 10.00 M ops/s | 12.00 / 4.00 M ops/s |"),
            "{md}"
        );
        assert!(md.contains("| somas-resnet50.csv | 2,084 |"), "{md}");
        assert!(md.contains("[somas-resnet50.csv](bench-plots/somas-resnet50.csv.svg)"), "{md}");

        // With a small-block setting, it gets its own column and the marked one goes.
        let tsv = format!(
            "{tsv}decomfl-opt125m-zo-finetune.csv\tsmall blocks 1 MiB\t15495\t1783664516\t1783664516\t1872000000\t10500000\t8000000\n"
        );
        let md = real_traces_report(&criterion, &tsv);
        assert!(!md.contains("through the small-block layer"), "{md}");
        assert!(md.contains("| 1.500 | 1.050 | 1.064 |"), "{md}");
        let targets = targets_report(&criterion, "", "", &tsv);
        assert!(targets.contains("| 1.050 (small blocks 1 MiB) | met |"), "{targets}");
        assert!(
            targets.contains(
                "| the replay loop, pool alone: slowest 11.00 M ops/s (somas-resnet50.csv, pool alone; the slowest median 4.00); \
                 through the small-block layer: slowest 10.50 M ops/s (decomfl-opt125m-zo-finetune.csv, small blocks 1 MiB; the slowest median 8.00); \
                 whole replays with setup, pool alone: slowest 10.00 M ops/s (decomfl-opt125m-zo-finetune.csv) | met |"
            ),
            "{targets}"
        );
        assert!(
            md.contains("| decomfl-opt125m-zo-finetune.csv | 12.00 / 4.00 M ops/s | 10.50 / 8.00 M ops/s |"),
            "{md}"
        );
        assert!(md.contains("| somas-resnet50.csv | 11.00 / 9.00 M ops/s | - |"), "{md}");
        // The slowest fastest replay decides, whatever the setting.
        let slow = tsv.replace("\t10500000\t8000000", "\t9900000\t8000000");
        assert!(targets_report(&criterion, "", "", &slow).contains("**not met**"), "{slow}");

        assert!(real_traces_report(&criterion, "").contains("Not run: `MEMPOOL_TRACES`"));
        let _ = std::fs::remove_dir_all(&criterion);
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
        estimate(&criterion, "small_blocks_pair", "small-blocks", "256B", 30.0);
        estimate(&criterion, "small_blocks_pair", "small-blocks", "1048576B", 45.0);
        estimate(&criterion, "small_blocks_pair", "small-blocks", "9437184B", 95.0);
        estimate(&criterion, "small_blocks_pair", "offset-allocator", "256B", 20.0);
        estimate(&criterion, "ffi_overhead", "ascend-backend", "2MiB", 210.0);
        estimate(&criterion, "ffi_overhead", "raw-ffi", "2MiB", 200.0);
        estimate(&criterion, "live_100k", "emu", "free+alloc", 90.0);
        estimate(&criterion, "live_100k", "offset-allocator", "free+alloc", 60.0);
        estimate(&criterion, "two_threads", "one-thread", "malloc+free", 50.0);
        estimate(&criterion, "two_threads", "two-threads", "malloc+free", 40.0);
        estimate(&criterion, "streams_scaling", "emu", "4-live", 200.0);
        estimate(&criterion, "streams_scaling", "emu", "64-live", 300.0);
        let tsv = "live_100k\temu\t400\t900\t1000\n\
                   ffi_overhead\tascend-backend (rounds)\t206\t250\t300\n\
                   ffi_overhead\traw-ffi (rounds)\t200\t240\t300\n";
        let replay = "training.csv\t1857\t1\t1\t1.047\t3000000\n";

        // A group whose benchmarks have no cases: one row, not criterion's folders.
        estimate(&criterion, "history_switch", "history-off", "", 30.0);
        estimate(&criterion, "history_switch", "history-on", "", 60.0);
        std::fs::create_dir_all(criterion.join("history_switch/history-off/base")).unwrap();

        let report = bench_report(&criterion, tsv);
        assert!(report.contains("| (one case) | 30.0 ns |"), "{report}");
        assert!(!report.contains("| base |") && !report.contains("| new |"), "{report}");
        assert!(report.contains("| 2MiB | 80.0 ns | 40.0 ns | 2.00 |"), "{report}");
        assert!(report.contains("| 64MiB | 120.0 ns | 60.0 ns | 2.00 |"), "{report}");
        assert!(report.contains("(criterion medians): +5.0 %"), "{report}");
        assert!(report.contains("(medians of alternating rounds): +3.0 %"), "{report}");

        let real = "cs336-medium-ctx512-train.csv\tpool alone\t15625\t1000\t1040\t1060\t5000000\t4000000\n";
        estimate(&criterion, "replay_real", "emu", "cs336-medium-ctx512-train.csv", 3_125_000.0);
        let targets = targets_report(&criterion, tsv, replay, real);
        assert!(targets.contains("slowest size 120.0 ns | **not met** |"), "{targets}");
        assert!(targets.contains("up to 2.00 x its time | **not met** |"), "{targets}");
        assert!(targets.contains("| 900.0 ns (offset-allocator: -) | met |"), "{targets}");
        assert!(targets.contains("(requests up to 1 MiB) | slowest size 45.0 ns | met |"), "{targets}");
        assert!(report.contains("| 256B | 30.0 ns | 20.0 ns | 1.50 |"), "{report}");
        assert!(targets.contains("| +3.0 % (alternating rounds) | met |"), "{targets}");
        assert!(targets.contains("| 1.047 | met |"), "{targets}");
        assert!(
            targets.contains(
                "through the small-block layer | no small-block layer yet; pool alone 1.060 | not measured |"
            ),
            "{targets}"
        );
        // 15,625 operations in 3.125 ms for the whole replay.
        assert!(
            targets.contains(
                "| the replay loop, pool alone: slowest 5.00 M ops/s (cs336-medium-ctx512-train.csv, pool alone; the slowest median 4.00); \
                 whole replays with setup, pool alone: slowest 5.00 M ops/s (cs336-medium-ctx512-train.csv) | **not met** |"
            ),
            "{targets}"
        );
        assert!(targets.contains("| 1.50 x its time | met |"), "{targets}");
        // With the pointer-API baseline measured, its ratio is given beside (not judged).
        estimate(&criterion, "live_100k", "offset-allocator+map", "free+alloc", 75.0);
        let targets = targets_report(&criterion, tsv, replay, real);
        assert!(targets.contains("| 1.50 x its time (1.20 x `offset-allocator+map`'s) | met |"), "{targets}");
        assert!(targets.contains("| 1.25 x | **not met** |"), "{targets}");
        assert!(targets.contains("| 1.50 x (300.0 ns against 200.0 ns) | met |"), "{targets}");
        assert!(targets.contains("| - | not measured |"), "{targets}");
        let _ = std::fs::remove_dir_all(&criterion);
    }
}
