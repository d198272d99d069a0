//! The real traces, read from the folder `MEMPOOL_TRACES` names (`cargo xtask ci` sets it
//! when a `shared/traces` folder lies beside the repository). Each check is reported as
//! ignored ("not run") when the variable is unset or the folder or file is absent.
//!
//! - `import/*`: the raw PyTorch snapshots (`raw/*.pickle.gz`) convert to exactly the
//!   converted CSVs beside them, and replay to the same peak of live requested bytes.
//! - `replay/*`: every converted CSV parses, replays on the emulator with default
//!   settings, and reaches the peak of live requested bytes its README records.
//! - `export/*`: every converted CSV, exported as a PyTorch memory snapshot
//!   (`mempool_trace::snapshot`), imports back to the same allocations and frees (same
//!   addresses, sizes, streams and order).

mod roundtrip;

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_trace::import::{ImportOptions, import};
use mempool_trace::{ReplayOptions, parse, replay};
use std::path::{Path, PathBuf};

/// The snapshots: raw file, its converted CSV, the peak of live requested bytes and the
/// rows the traces' README records.
const SNAPSHOTS: &[(&str, &str, u64, usize)] = &[
    ("cs336_medium_512_training_memory_snapshot.pickle.gz", "cs336-medium-ctx512-train.csv", 12_426_629_128, 15_625),
    ("decomfl_memory.pickle.gz", "decomfl-opt125m-zo-finetune.csv", 1_783_664_516, 15_495),
];

/// Every converted trace with its recorded peak of live requested bytes and rows.
const CSVS: &[(&str, u64, usize)] = &[
    ("cs336-medium-ctx512-train.csv", 12_426_629_128, 15_625),
    ("decomfl-opt125m-zo-finetune.csv", 1_783_664_516, 15_495),
    ("hta-ddp-v100-rank1.csv", 2_532_893_696, 26_770),
    ("somas-pangu-2.6B.csv", 5_530_099_775, 37_384),
    ("somas-resnet50.csv", 1_515_472_556, 2_084),
];

fn folder() -> Result<PathBuf, String> {
    match std::env::var_os("MEMPOOL_TRACES") {
        None => Err("not run: MEMPOOL_TRACES is unset".into()),
        Some(d) if !Path::new(&d).is_dir() => {
            Err(format!("not run: MEMPOOL_TRACES={} is not a folder", Path::new(&d).display()))
        }
        Some(d) => Ok(PathBuf::from(d)),
    }
}

/// A trial that needs `files` under the traces folder, or a "not run" one.
fn trial(name: String, files: &[PathBuf], body: impl FnOnce(&Path) -> Result<(), Failed> + Send + 'static) -> Trial {
    let why = match folder() {
        Err(why) => Some(why),
        Ok(dir) => files
            .iter()
            .find(|f| !dir.join(f).is_file())
            .map(|f| format!("not run: {} is absent", dir.join(f).display())),
    };
    match why {
        Some(why) => {
            println!("{name}: {why}");
            Trial::test(name, move || Err(why.into())).with_ignored_flag(true).with_kind("not-run")
        }
        None => {
            let dir = folder().expect("checked above");
            Trial::test(name, move || body(&dir))
        }
    }
}

fn import_matches(dir: &Path, raw: &str, csv: &str, peak: u64, rows: usize) -> Result<(), Failed> {
    let bytes = std::fs::read(dir.join("raw").join(raw))?;
    let imported = import(&bytes, &ImportOptions::default()).map_err(|e| format!("{raw}: {e}"))?;
    let text = std::fs::read_to_string(dir.join(csv))?;
    let expected = parse(&text).map_err(|e| format!("{csv}: {e}"))?;
    if imported.trace.rows.len() != rows || expected.rows.len() != rows {
        return Err(format!(
            "rows: imported {}, {csv} {}, recorded {rows}",
            imported.trace.rows.len(),
            expected.rows.len()
        )
        .into());
    }
    if let Some(i) = (0..rows).find(|&i| imported.trace.rows[i] != expected.rows[i]) {
        return Err(
            format!("row {i} differs: imported {}, {csv} has {}", imported.trace.rows[i], expected.rows[i]).into()
        );
    }
    if imported.trace.to_csv() != text {
        return Err(format!("the imported CSV text differs from {csv}").into());
    }
    let report = replay(&imported.trace, &ReplayOptions::default(), |_| {})?;
    if report.requested_high != peak {
        return Err(format!("peak live requested {} after replay, recorded {peak}", report.requested_high).into());
    }
    Ok(())
}

fn replays_to_peak(dir: &Path, csv: &str, peak: u64, rows: usize) -> Result<(), Failed> {
    let text = std::fs::read_to_string(dir.join(csv))?;
    let trace = parse(&text).map_err(|e| format!("{csv}: {e}"))?;
    if trace.rows.len() != rows {
        return Err(format!("{} rows, recorded {rows}", trace.rows.len()).into());
    }
    let report = replay(&trace, &ReplayOptions::default(), |_| {})?;
    if report.requested_high != peak {
        return Err(format!("peak live requested {}, recorded {peak}", report.requested_high).into());
    }
    if report.used_high < peak || report.reserved_high < report.used_high {
        return Err(format!(
            "USED_HIGH {} / RESERVED_HIGH {} below the peak {peak}",
            report.used_high, report.reserved_high
        )
        .into());
    }
    Ok(())
}

fn exports_and_imports_back(dir: &Path, csv: &str, rows: usize) -> Result<(), Failed> {
    let text = std::fs::read_to_string(dir.join(csv))?;
    let trace = parse(&text).map_err(|e| format!("{csv}: {e}"))?;
    let back = roundtrip::round_trip(&trace).map_err(|e| format!("{csv}: {e}"))?;
    // The real traces are allocations and frees only (and failures): every row comes back.
    if back != rows {
        return Err(format!("{back} rows came back, the trace has {rows}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for &(raw, csv, peak, rows) in SNAPSHOTS {
        let files = [Path::new("raw").join(raw), PathBuf::from(csv)];
        trials.push(trial(format!("import/{raw}"), &files, move |dir| import_matches(dir, raw, csv, peak, rows)));
    }
    for &(csv, peak, rows) in CSVS {
        trials.push(trial(format!("replay/{csv}"), &[PathBuf::from(csv)], move |dir| {
            replays_to_peak(dir, csv, peak, rows)
        }));
    }
    for &(csv, _, rows) in CSVS {
        trials.push(trial(format!("export/{csv}"), &[PathBuf::from(csv)], move |dir| {
            exports_and_imports_back(dir, csv, rows)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
