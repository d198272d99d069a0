//! `replay`: a trace (RMM-style CSV, `mempool_trace`'s format) replayed on a fresh emulator
//! with `mempool_trace::replay`, as `mempool-trace replay` does.

use crate::error::error;
use mempool_trace::{ReplayOptions, parse};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::path::PathBuf;

/// The trace's text: `trace` itself when it is a `str` holding CSV (a line break, or the
/// header at its start), else the file `trace` names (a `str` or an `os.PathLike`).
fn trace_text(trace: &Bound<'_, PyAny>) -> PyResult<String> {
    if trace.is_instance_of::<PyString>() {
        let s: String = trace.extract()?;
        if s.contains('\n') || s.starts_with(mempool_trace::HEADER) {
            return Ok(s);
        }
    }
    let path: PathBuf = trace.extract()?;
    std::fs::read_to_string(&path).map_err(|e| error(format!("cannot read the trace {}: {e}", path.display())))
}

/// Replays a trace on a fresh emulated device of `pool_size` bytes with one pool of that
/// size (deferred streams, so the result does not depend on timing), through the
/// small-block layer with that threshold when `small_blocks` is given, releasing down to
/// `release_threshold` at synchronizations (`None`: keep everything cached).
///
/// `trace` is the CSV text (`Thread,Time,Action,Pointer,Size,Stream` and its rows) or the
/// path of a trace file. Returns `reserved_high` (RESERVED_HIGH), `used_high`
/// (USED_HIGH), `requested_high` (the peak of the live requested bytes), `ratio`
/// (RESERVED_HIGH / USED_HIGH), `reserved_over_requested`, `reserved_end`, `ops` (rows
/// replayed) and `skipped_failures` (`allocate failure` rows).
///
/// Raises `MempoolError` for a trace that does not parse (with its line), bad options or a
/// row the emulator refuses.
#[pyfunction]
#[pyo3(signature = (trace, pool_size = 16 << 30, small_blocks = None, release_threshold = None, granularity = 2 << 20))]
pub(crate) fn replay<'py>(
    py: Python<'py>,
    trace: &Bound<'py, PyAny>,
    pool_size: u64,
    small_blocks: Option<u64>,
    release_threshold: Option<u64>,
    granularity: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let text = trace_text(trace)?;
    let options = ReplayOptions {
        pool_size,
        granularity,
        threshold: release_threshold,
        small_blocks,
        ..ReplayOptions::default()
    };
    let report = py
        .detach(|| {
            let trace = parse(&text).map_err(|e| e.to_string())?;
            mempool_trace::replay(&trace, &options, |_| {}).map_err(|e| e.to_string())
        })
        .map_err(error)?;
    let d = PyDict::new(py);
    d.set_item("reserved_high", report.reserved_high)?;
    d.set_item("used_high", report.used_high)?;
    d.set_item("requested_high", report.requested_high)?;
    d.set_item("ratio", report.ratio())?;
    d.set_item("reserved_over_requested", report.reserved_over_requested())?;
    d.set_item("reserved_end", report.reserved_end)?;
    d.set_item("ops", report.ops)?;
    d.set_item("skipped_failures", report.skipped_failures)?;
    Ok(d)
}
