//! A small SVG line plot of USED, RESERVED and the live requested bytes over a replay.

use crate::replay::Sample;
use std::fmt::Write as _;

const W: f64 = 800.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
/// At most this many points per series; each keeps the maximum of the operations it covers.
const MAX_POINTS: usize = 1000;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Plots USED, RESERVED and the live requested bytes (in MiB) against the operation
/// index. The polylines have the ids `used`, `reserved` and `requested` (the last only
/// when some sample has requested bytes); text is plain SVG `<text>`, so no fonts are
/// needed to write it.
///
/// ```
/// use mempool_trace::{replay::Sample, svg::plot};
///
/// let s = plot("demo", &[Sample { used: 2 << 20, reserved: 4 << 20, requested: 1 << 20 }, Sample { used: 0, reserved: 4 << 20, requested: 0 }]);
/// assert!(s.starts_with("<svg") && s.contains("id=\"used\"") && s.contains("id=\"reserved\""));
/// assert!(s.contains("id=\"requested\""));
/// ```
pub fn plot(title: &str, samples: &[Sample]) -> String {
    let n = samples.len().max(1);
    let chunk = n.div_ceil(MAX_POINTS).max(1);
    let points: Vec<(usize, Sample)> = samples
        .chunks(chunk)
        .enumerate()
        .map(|(i, c)| {
            let used = c.iter().map(|s| s.used).max().unwrap_or(0);
            let reserved = c.iter().map(|s| s.reserved).max().unwrap_or(0);
            let requested = c.iter().map(|s| s.requested).max().unwrap_or(0);
            (i * chunk, Sample { used, reserved, requested })
        })
        .collect();
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let peak = samples.iter().map(|s| s.reserved.max(s.used).max(s.requested)).max().unwrap_or(0);
    let with_requested = samples.iter().any(|s| s.requested > 0);
    let ymax = nice(mib(peak).max(1.0));
    let xmax = (n.saturating_sub(1)).max(1) as f64;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |i: usize| LEFT + pw * i as f64 / xmax;
    let py = |m: f64| TOP + ph * (1.0 - m / ymax);

    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">"#);
    let _ = writeln!(s, "<title>{}</title>", escape(title));
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let font = r#"font-family="sans-serif" font-size="12""#;
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-family="sans-serif" font-size="14" text-anchor="middle">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    // Axes, grid and tick labels.
    for k in 0..=4 {
        let m = ymax * k as f64 / 4.0;
        let y = py(m);
        let _ = writeln!(s, r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##, W - RIGHT);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" {font} text-anchor="end">{m:.0}</text>"#, LEFT - 6.0, y + 4.0);
        let i = ((n - 1) as f64 * k as f64 / 4.0).round() as usize;
        let x = px(i);
        let _ = writeln!(s, r#"<text x="{x:.1}" y="{:.1}" {font} text-anchor="middle">{i}</text>"#, H - BOTTOM + 18.0);
    }
    let _ =
        writeln!(s, r##"<path d="M{LEFT},{TOP} V{:.1} H{:.1}" fill="none" stroke="#333"/>"##, H - BOTTOM, W - RIGHT);
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" {font} text-anchor="middle">operation</text>"#,
        LEFT + pw / 2.0,
        H - 12.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" {font} text-anchor="middle" transform="rotate(-90 16 {:.1})">MiB</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );
    // Series.
    type Get = fn(&Sample) -> u64;
    let mut series: Vec<(&str, &str, &str, Get)> =
        vec![("reserved", "RESERVED", "#d62728", |p| p.reserved), ("used", "USED", "#1f77b4", |p| p.used)];
    if with_requested {
        series.push(("requested", "requested", "#2ca02c", |p| p.requested));
    }
    for &(id, _, color, get) in &series {
        let pts: Vec<String> = points.iter().map(|(i, p)| format!("{:.1},{:.1}", px(*i), py(mib(get(p))))).collect();
        let _ = writeln!(
            s,
            r#"<polyline id="{id}" fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#,
            pts.join(" ")
        );
    }
    // Legend.
    for (k, &(_, label, color, _)) in series.iter().enumerate() {
        let x = LEFT + 12.0 + 110.0 * k as f64;
        let _ = writeln!(s, r#"<rect x="{x}" y="{}" width="14" height="4" fill="{color}"/>"#, TOP + 8.0);
        let _ = writeln!(s, r#"<text x="{}" y="{}" {font}>{label}</text>"#, x + 20.0, TOP + 14.0);
    }
    s.push_str("</svg>\n");
    s
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten that is at least `v`.
fn nice(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0].iter().map(|m| m * p).find(|c| *c >= v).unwrap_or(10.0 * p)
}
