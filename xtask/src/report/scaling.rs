//! The report's sections on the machine's floors (group `floors`), host threads
//! (`thread_scaling`, `alloc_threads`) and dense stream graphs (`dense_graph`), and their
//! rows in the targets table.

use super::{case_median, fmt_ns};
use std::path::Path;

/// The floors, in the order of the table: (implementation, case, what it is).
const FLOORS: &[(&str, &str, &str)] = &[
    ("mutex", "lock+unlock", "an uncontended `std::sync::Mutex` lock and unlock"),
    ("atomic", "fetch_add", "one atomic read-modify-write (`fetch_add`) on a line the thread owns"),
    (
        "cache-line",
        "transfer",
        "a cache line moved between two threads taking turns (per transfer; meaningful only while both run at once: on a loaded machine it measures the scheduler)",
    ),
    ("dram-miss", "4KiB-pages", "a dependent load missing every cache (pointer chase over 256 MiB), 4 KiB pages"),
    ("dram-miss", "2MiB-pages", "the same with 2 MiB pages (`MADV_HUGEPAGE`)"),
    ("clock", "instant-now", "one `Instant::now()`"),
    ("fxhashmap", "hit-1k", "a hit in an `FxHashMap<u64, u64>` of 1,000 keys"),
    ("fxhashmap", "hit-100k", "a hit in an `FxHashMap<u64, u64>` of 100,000 keys"),
];

/// Groups this module reports, besides `BENCH_GROUPS`: `cargo xtask bench` clears their
/// results before a run.
pub(crate) const GROUPS: &[&str] = &["floors", "thread_scaling", "alloc_threads"];

/// Thread counts of `thread_scaling`, and its implementations in the table's order.
const THREADS: &[u32] = &[1, 2, 4, 8];
const SCALING: &[(&str, &str)] = &[
    ("one-pool", "one pool, a stream per thread"),
    ("independent", "a pool per thread (ceiling)"),
    ("mutex", "one pool behind a mutex"),
    ("mixed", "one pool, mixed"),
];

/// The last note for `floor` (`impl/case`) in `bench-floors.tsv` (`floor note` lines).
fn floor_note<'a>(notes: &'a str, floor: &str) -> Option<&'a str> {
    notes.lines().filter_map(|l| l.split_once('\t')).filter(|(f, _)| *f == floor).map(|(_, n)| n).next_back()
}

/// The floors table: criterion's median for each floor; the 2 MiB-page row only where the
/// bench found the range in huge pages (`notes`: the lines of `bench-floors.tsv`).
pub(crate) fn floors_report(criterion: &Path, notes: &str) -> String {
    let dir = criterion.join("floors");
    if !dir.is_dir() {
        return "\n## Floors\n\nNot measured: no `floors` results.\n".into();
    }
    let mut md = String::from(
        "\n## Floors\n\nWhat the machine allows, measured in the bench binaries before their groups (the figures are the last binary's). Read each result against them: a pair that takes three lock/unlock pairs cannot be faster than three of the first row; a lock shared by two threads costs at least a cache-line transfer per hand-over.\n\n| floor | median |\n|---|---:|\n",
    );
    for &(imp, case, what) in FLOORS {
        let median = case_median(&dir, imp, case);
        let cell = if case == "2MiB-pages" {
            match floor_note(notes, "dram-miss/2MiB-pages") {
                Some(n) if n.starts_with("huge") => median.map_or("-".into(), fmt_ns),
                Some(n) => format!("not available ({})", n.trim_start_matches("not available: ")),
                None => "not available (no huge-page check recorded)".into(),
            }
        } else {
            median.map_or("-".into(), fmt_ns)
        };
        md.push_str(&format!("| {what} | {cell} |\n"));
    }
    let loads: Vec<&str> =
        notes.lines().filter_map(|l| l.split_once('\t')).filter(|(f, _)| *f == "loadavg").map(|(_, n)| n).collect();
    if !loads.is_empty() {
        md.push_str(&format!(
            "\nLoad average (1, 5, 15 minutes) as each bench binary started its floors: {}.\n",
            loads.join("; ")
        ));
    }
    md
}

/// Pairs per second of `imp` at `case` in `group`, whose criterion time is per round of
/// one pair on each of `threads` threads.
fn pairs_per_sec(criterion: &Path, group: &str, imp: &str, case: &str, threads: u32) -> Option<f64> {
    let ns = case_median(&criterion.join(group), imp, case)?;
    (ns > 0.0).then(|| f64::from(threads) / (ns * 1e-9))
}

fn mpairs(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.2} M/s", v / 1e6))
}

/// The thread-scaling curve: pairs per second of each implementation at 1, 2, 4 and 8
/// threads, the one pool's speed-up over one thread and its fraction of the ceiling;
/// points beyond `cores` are marked oversubscribed.
pub(crate) fn threads_report(criterion: &Path, cores: u32) -> String {
    if !criterion.join("thread_scaling").is_dir() {
        return String::new();
    }
    let get = |imp: &str, t: u32| pairs_per_sec(criterion, "thread_scaling", imp, &t.to_string(), t);
    let mut md = format!(
        "\n## `thread_scaling`: 2 MiB malloc_async + free_async pairs from T threads, all threads' pairs per second\n\nEach thread makes the same number of pairs; the time is from their start to the last one's end. `mixed`: one pool, of 8 pairs 6 on the thread's stream, 1 on a stream all share, 1 handed off between two streams through an event, while another thread reads statistics and synchronizes streams. This machine has {cores} cores: points beyond are oversubscribed (reported, not judged).\n\n| threads |"
    );
    for (_, what) in SCALING {
        md.push_str(&format!(" {what} |"));
    }
    md.push_str(" one pool: speed-up over 1 thread | one pool / ceiling |\n|---:|");
    md.push_str(&"---:|".repeat(SCALING.len() + 2));
    md.push('\n');
    let one = get("one-pool", 1);
    for &t in THREADS {
        let over = if t > cores { " (oversubscribed)" } else { "" };
        md.push_str(&format!("| {t}{over} |"));
        for (imp, _) in SCALING {
            md.push_str(&format!(" {} |", mpairs(get(imp, t))));
        }
        let pool = get("one-pool", t);
        let speedup = pool.zip(one).map_or("-".into(), |(p, o)| format!("{:.2} x", p / o));
        let ceiling = pool.zip(get("independent", t)).map_or("-".into(), |(p, c)| format!("{:.0} %", 100.0 * p / c));
        md.push_str(&format!(" {speedup} | {ceiling} |\n"));
    }
    md
}

/// `alloc_threads`: per size, one and two threads through the library, and the ratio of
/// their throughputs.
pub(crate) fn alloc_threads_report(criterion: &Path) -> String {
    let dir = criterion.join("alloc_threads");
    if !dir.is_dir() {
        return String::new();
    }
    let mut md = String::from(
        "\n## `alloc_threads`: allocation + free pairs through `libmempool_alloc`'s exports (CUDA backend over the CPU `libcuda.so.1`), a stream per thread\n\n| size | one thread | two threads | two / one |\n|---|---:|---:|---:|\n",
    );
    for case in ["1000B", "2MiB"] {
        let one = pairs_per_sec(criterion, "alloc_threads", "one-thread", case, 1);
        let two = pairs_per_sec(criterion, "alloc_threads", "two-threads", case, 2);
        let ratio = one.zip(two).map_or("-".into(), |(o, t)| format!("{:.2} x", t / o));
        md.push_str(&format!("| {case} | {} | {} | {ratio} |\n", mpairs(one), mpairs(two)));
    }
    md
}

/// The targets' rows on threads and dense graphs: the curve's two-thread point and the
/// library's (reported), and the dense graph's bounds (judged; "not measured" while the
/// group is absent).
pub(crate) fn targets_rows(criterion: &Path, verdict: impl Fn(Option<bool>) -> &'static str) -> String {
    let mut md = String::new();
    let rate = |group: &str, one: (&str, &str), two: (&str, &str)| {
        pairs_per_sec(criterion, group, one.0, one.1, 1).zip(pairs_per_sec(criterion, group, two.0, two.1, 2))
    };
    let curve = rate("thread_scaling", ("one-pool", "1"), ("one-pool", "2"));
    let ceiling = rate("thread_scaling", ("independent", "1"), ("independent", "2"));
    md.push_str(&format!(
        "| `thread_scaling` one pool: 2 threads against 1 (reported; judged by `two_threads`) | {} (two independent pools: {}) | reported |\n",
        curve.map_or("-".into(), |(o, t)| format!("{:.2} x", t / o)),
        ceiling.map_or("-".into(), |(o, t)| format!("{:.2} x", t / o)),
    ));
    let library = rate("alloc_threads", ("one-thread", "2MiB"), ("two-threads", "2MiB"));
    md.push_str(&format!(
        "| through `libmempool_alloc`: 2 threads against 1, 2 MiB (reported) | {} | reported |\n",
        library.map_or("-".into(), |(o, t)| format!("{:.2} x", t / o)),
    ));
    let dense = |imp: &str, case: &str| case_median(&criterion.join("dense_graph"), imp, case);
    for (n, bound) in [("64", 2.0), ("512", 4.0)] {
        let pair = dense("emu", n).zip(dense("emu", "4"));
        let ring = dense("ring", n).zip(dense("ring", "4"));
        md.push_str(&format!(
            "| `dense_graph`: {n} live streams within {bound} x the cost with 4 | {}{} | {} |\n",
            pair.map_or("-".into(), |(m, b)| format!("{:.2} x ({} against {})", m / b, fmt_ns(m), fmt_ns(b))),
            ring.map_or(String::new(), |(m, b)| format!("; the ring: {:.2} x", m / b)),
            verdict(pair.map(|(m, b)| m <= bound * b))
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(criterion: &Path, group: &str, imp: &str, case: &str, median: f64) {
        let dir = criterion.join(group).join(imp).join(case).join("new");
        std::fs::create_dir_all(&dir).unwrap();
        let json = format!("{{\"median\":{{\"point_estimate\":{median},\"standard_error\":0.1}}}}");
        std::fs::write(dir.join("estimates.json"), json).unwrap();
    }

    fn verdict(ok: Option<bool>) -> &'static str {
        match ok {
            Some(true) => "met",
            Some(false) => "**not met**",
            None => "not measured",
        }
    }

    /// The floors table shows each median; the 2 MiB-page row only with a huge-page note.
    #[test]
    fn floors_show_huge_pages_only_where_they_were_huge() {
        let criterion = std::env::temp_dir().join(format!("xtask-floors-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&criterion);
        assert!(floors_report(&criterion, "").contains("Not measured"));
        estimate(&criterion, "floors", "mutex", "lock+unlock", 12.5);
        estimate(&criterion, "floors", "dram-miss", "2MiB-pages", 95.0);
        let md = floors_report(&criterion, "");
        assert!(md.contains("lock and unlock | 12.5 ns |"), "{md}");
        assert!(md.contains("| not available (no huge-page check recorded) |"), "{md}");
        assert!(md.contains("one `Instant::now()` | - |"), "{md}");
        let notes = "dram-miss/2MiB-pages\thuge: 1 of 1 KiB\ndram-miss/2MiB-pages\tnot available: 0 of 262144 KiB in huge pages (transparent_hugepage: never)\n";
        let md = floors_report(&criterion, notes);
        assert!(md.contains("| not available (0 of 262144 KiB in huge pages (transparent_hugepage: never)) |"), "{md}");
        let md = floors_report(
            &criterion,
            "loadavg\t0.52 1.10 1.43\ndram-miss/2MiB-pages\thuge: 262144 of 262144 KiB\nloadavg\t2.00 1.20 1.40\n",
        );
        assert!(md.contains("(`MADV_HUGEPAGE`) | 95.0 ns |"), "{md}");
        assert!(md.contains("started its floors: 0.52 1.10 1.43; 2.00 1.20 1.40.\n"), "{md}");
        let _ = std::fs::remove_dir_all(&criterion);
    }

    /// The curve's throughput counts every thread's pairs; points past the cores are marked;
    /// the dense-graph rows say "not measured" without the group and judge it with it.
    #[test]
    fn threads_and_dense_graphs_are_reported_from_the_measurements() {
        let criterion = std::env::temp_dir().join(format!("xtask-threads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&criterion);
        assert_eq!(threads_report(&criterion, 2), "");
        let rows = targets_rows(&criterion, verdict);
        assert!(
            rows.contains("| `dense_graph`: 64 live streams within 2 x the cost with 4 | - | not measured |"),
            "{rows}"
        );
        assert!(
            rows.contains("| `dense_graph`: 512 live streams within 4 x the cost with 4 | - | not measured |"),
            "{rows}"
        );

        // Per round of one pair on each thread: 100 ns for 1, 80 ns for 2 (2.5 x).
        estimate(&criterion, "thread_scaling", "one-pool", "1", 100.0);
        estimate(&criterion, "thread_scaling", "one-pool", "2", 80.0);
        estimate(&criterion, "thread_scaling", "independent", "1", 100.0);
        estimate(&criterion, "thread_scaling", "independent", "2", 100.0);
        estimate(&criterion, "thread_scaling", "mutex", "4", 400.0);
        let md = threads_report(&criterion, 2);
        assert!(md.contains("| 1 | 10.00 M/s | 10.00 M/s | - | - | 1.00 x | 100 % |"), "{md}");
        assert!(md.contains("| 2 | 25.00 M/s | 20.00 M/s | - | - | 2.50 x | 125 % |"), "{md}");
        assert!(md.contains("| 4 (oversubscribed) | - | - | 10.00 M/s | - | - | - |"), "{md}");

        estimate(&criterion, "alloc_threads", "one-thread", "2MiB", 100.0);
        estimate(&criterion, "alloc_threads", "two-threads", "2MiB", 200.0);
        let md = alloc_threads_report(&criterion);
        assert!(md.contains("| 2MiB | 10.00 M/s | 10.00 M/s | 1.00 x |"), "{md}");
        assert!(md.contains("| 1000B | - | - | - |"), "{md}");

        estimate(&criterion, "dense_graph", "emu", "4", 300.0);
        estimate(&criterion, "dense_graph", "emu", "64", 500.0);
        estimate(&criterion, "dense_graph", "emu", "512", 1500.0);
        estimate(&criterion, "dense_graph", "ring", "4", 200.0);
        estimate(&criterion, "dense_graph", "ring", "64", 250.0);
        let rows = targets_rows(&criterion, verdict);
        assert!(rows.contains("| 2.50 x (two independent pools: 2.00 x) | reported |"), "{rows}");
        assert!(rows.contains("2 MiB (reported) | 1.00 x | reported |"), "{rows}");
        assert!(rows.contains("| 1.67 x (500.0 ns against 300.0 ns); the ring: 1.25 x | met |"), "{rows}");
        assert!(rows.contains("| 5.00 x (1.50 µs against 300.0 ns) | **not met** |"), "{rows}");
        let _ = std::fs::remove_dir_all(&criterion);
    }
}
