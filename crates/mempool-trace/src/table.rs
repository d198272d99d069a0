//! Statistics tables (Markdown) for one or more replays.

use crate::replay::Report;

const MIB: f64 = (1u64 << 20) as f64;

/// `b` for people: whole GiB, MiB or KiB when exact, bytes below 1 MiB, else MiB with
/// one decimal.
///
/// ```
/// use mempool_trace::table::bytes;
/// assert_eq!([bytes(0), bytes(64 << 20), bytes(16 << 30), bytes(3 << 19), bytes(64 << 10)], ["0 B", "64 MiB", "16 GiB", "1.5 MiB", "64 KiB"]);
/// assert_eq!([bytes(1), bytes(1000)], ["1 B", "1000 B"]);
/// ```
pub fn bytes(b: u64) -> String {
    if b == 0 {
        "0 B".into()
    } else if b.is_multiple_of(1 << 30) {
        format!("{} GiB", b >> 30)
    } else if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b < 1 << 20 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else if b < 1 << 20 {
        format!("{b} B")
    } else {
        format!("{:.1} MiB", b as f64 / MIB)
    }
}

/// The rows of the table: a label and one value per report.
fn rows(reports: &[Report]) -> Vec<(String, Vec<String>)> {
    let col = |f: &dyn Fn(&Report) -> String| reports.iter().map(f).collect::<Vec<_>>();
    let mut rows = vec![
        ("threshold".to_string(), col(&|r| bytes(r.options.threshold.unwrap_or(r.options.pool_size)))),
        ("granularity".into(), col(&|r| bytes(r.options.granularity))),
        ("reuse flags".into(), col(&|r| r.options.flags.to_string())),
        (
            "small blocks".into(),
            col(&|r| r.options.small_blocks.map_or_else(|| "off".into(), |t| format!("up to {}", bytes(t)))),
        ),
        ("operations".into(), col(&|r| r.ops.to_string())),
        ("peak requested (live)".into(), col(&|r| bytes(r.requested_high))),
        ("USED_HIGH (rounded)".into(), col(&|r| bytes(r.used_high))),
        ("USED_HIGH / peak requested".into(), col(&|r| format!("{:.3}", r.used_over_requested()))),
        ("RESERVED_HIGH".into(), col(&|r| bytes(r.reserved_high))),
        ("RESERVED_HIGH / peak requested".into(), col(&|r| format!("{:.3}", r.reserved_over_requested()))),
        ("RESERVED_HIGH / USED_HIGH".into(), col(&|r| format!("{:.3}", r.ratio()))),
        ("fragmentation".into(), col(&|r| format!("{:.1} %", 100.0 * r.fragmentation()))),
        ("RESERVED at end".into(), col(&|r| bytes(r.reserved_end))),
    ];
    type Get = fn(&Report) -> u64;
    let rules: [(&str, Get); 6] = [
        ("reuse: same stream", |r| r.reuse.same_stream),
        ("reuse: known complete", |r| r.reuse.known_complete),
        ("reuse: event dependency", |r| r.reuse.event_dependency),
        ("reuse: opportunistic", |r| r.reuse.opportunistic),
        ("reuse: internal dependency", |r| r.reuse.internal_dependency),
        ("fresh", |r| r.reuse.fresh),
    ];
    for (name, get) in rules {
        rows.push((name.into(), col(&|r| get(r).to_string())));
    }
    let mut actions: Vec<&str> = Vec::new();
    for r in reports {
        for t in &r.times {
            if !actions.contains(&t.action) {
                actions.push(t.action);
            }
        }
    }
    for a in actions {
        rows.push((
            format!("time/op: {a}"),
            col(&|r| match r.times.iter().find(|t| t.action == a) {
                Some(t) => format!("{:.0} ns ({}x, {} timed)", t.mean_ns(), t.count, t.timed),
                None => "-".into(),
            }),
        ));
    }
    rows.push(("operations/s".into(), col(&|r| format!("{:.2} M", r.ops_per_sec() / 1e6))));
    if reports.iter().any(|r| r.skipped_failures > 0) {
        rows.push(("skipped allocate failures".into(), col(&|r| r.skipped_failures.to_string())));
    }
    rows
}

/// A Markdown table with one column per report, headed by `names`.
///
/// # Panics
///
/// If `names` and `reports` differ in length.
pub fn render(names: &[String], reports: &[Report]) -> String {
    assert_eq!(names.len(), reports.len(), "one name per report");
    let rows = rows(reports);
    let mut header = vec!["".to_string()];
    header.extend(names.iter().cloned());
    let mut all = vec![header];
    all.extend(rows.into_iter().map(|(l, v)| std::iter::once(l).chain(v).collect()));
    let cols = all[0].len();
    let width: Vec<usize> =
        (0..cols).map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0).max(3)).collect();
    let line = |r: &[String]| {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| if c == 0 { format!("{v:<w$}", w = width[c]) } else { format!("{v:>w$}", w = width[c]) })
            .collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(&all[0]);
    let sep: Vec<String> = (0..cols)
        .map(|c| if c == 0 { "-".repeat(width[c] + 2) } else { format!("{}:", "-".repeat(width[c] + 1)) })
        .collect();
    out.push_str(&format!("|{}|\n", sep.join("|")));
    for r in &all[1..] {
        out.push_str(&line(r));
    }
    out
}
