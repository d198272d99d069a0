//! `replay`: each bundled trace replayed against the emulator, with the release threshold
//! at the pool size (everything stays cached, as in a training loop). Criterion times the
//! whole replay; the peaks, RESERVED_HIGH / USED_HIGH and operations per second of each
//! trace go to `target/bench-replay.tsv` for `cargo xtask bench`'s report.

use criterion::{Criterion, criterion_group, criterion_main};
use mempool_trace::generate::bundled;
use mempool_trace::replay::{ReplayOptions, replay};
use std::io::Write;
use std::path::PathBuf;

/// `target/bench-replay.tsv`, next to the bench binary's profile folder.
fn report_file() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench binary knows its path");
    // target/<profile>/deps/<bench>
    exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), PathBuf::from).join("bench-replay.tsv")
}

fn bench_replay(c: &mut Criterion) {
    let opts = ReplayOptions::default();
    let mut group = c.benchmark_group("replay");
    let mut lines = String::new();
    for (name, trace) in bundled() {
        let report = replay(&trace, &opts, |_| {}).expect("the bundled traces replay");
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
            b.iter(|| replay(&trace, &opts, |_| {}).expect("the bundled traces replay").ops);
        });
    }
    group.finish();
    let written = std::fs::File::create(report_file()).and_then(|mut f| f.write_all(lines.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot write {}: {e}", report_file().display());
    }
}

criterion_group!(benches, bench_replay);
criterion_main!(benches);
