//! The real traces of the folder named by `MEMPOOL_TRACES` (`cargo xtask ci` sets it when a
//! `shared/traces` folder lies beside the repository), replayed through the small-block
//! layer and straight to the pool: RESERVED_HIGH against the peak of live requested bytes.
//! Without the folder every trial is reported ignored, "not run", never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_trace::{ReplayOptions, Report, parse, replay};
use std::path::PathBuf;

const VAR: &str = "MEMPOOL_TRACES";

/// The small-block threshold the checks use: every request goes through the layer.
const LAYER: u64 = 16 << 30;

/// Each trace, and the bound on RESERVED_HIGH / peak requested through the layer when the
/// trace has one of its own (`None`: no worse than the pool alone).
const TRACES: [(&str, Option<f64>); 5] = [
    // The target: at most 1.03 (PyTorch's caching allocator: at least 1.019).
    ("cs336-medium-ctx512-train.csv", Some(1.03)),
    // The target: at most 1.06 (PyTorch: 1.064).
    ("decomfl-opt125m-zo-finetune.csv", Some(1.06)),
    ("hta-ddp-v100-rank1.csv", None),
    ("somas-pangu-2.6B.csv", None),
    ("somas-resnet50.csv", None),
];

fn run(path: PathBuf, bound: Option<f64>) -> Result<(), Failed> {
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let trace = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let go = |small_blocks| -> Result<Report, Failed> {
        let options = ReplayOptions { small_blocks, ..ReplayOptions::default() };
        Ok(replay(&trace, &options, |_| {}).map_err(|e| e.to_string())?)
    };
    let alone = go(None)?;
    let layer = go(Some(LAYER))?;
    let (a, l) = (alone.reserved_over_requested(), layer.reserved_over_requested());
    println!("{}: pool alone {a:.3}, through the layer {l:.3}", path.display());
    if alone.requested_high != layer.requested_high || layer.requested_high == 0 {
        return Err(
            format!("peaks of requested bytes differ: {} and {}", alone.requested_high, layer.requested_high).into()
        );
    }
    if l > a {
        return Err(format!("through the layer {l:.3} is worse than the pool alone {a:.3}").into());
    }
    if let Some(b) = bound.filter(|&b| l > b) {
        return Err(format!("through the layer {l:.3} is above {b}").into());
    }
    let small = layer.small.ok_or("no statistics of the layer")?;
    if small.requested_high != layer.requested_high || small.requested_current != 0 && small.held_current == 0 {
        return Err(format!("the layer's counters disagree with the trace: {small:?}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = std::env::var_os(VAR).map(PathBuf::from).filter(|d| d.is_dir());
    let trials = TRACES
        .iter()
        .map(|&(name, bound)| {
            let test = format!("small_blocks::{}", name.trim_end_matches(".csv"));
            match &dir {
                Some(d) => {
                    let path = d.join(name);
                    Trial::test(test, move || run(path, bound))
                }
                None => Trial::test(test, || Err(format!("not run: {VAR} does not name a folder of traces").into()))
                    .with_ignored_flag(true)
                    .with_kind("not-run"),
            }
        })
        .collect();
    if dir.is_none() {
        println!("not run: set {VAR} to the folder of real traces");
    }
    libtest_mimic::run(&args, trials).exit();
}
