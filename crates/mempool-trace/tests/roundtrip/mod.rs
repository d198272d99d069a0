//! A trace through a memory snapshot and back: `Snapshot::from_trace`, `to_pickle`, then
//! the importer (shared by `tests/snapshot.rs` and `tests/real_traces.rs`).

use mempool_trace::import::{Format, ImportOptions, import};
use mempool_trace::snapshot::Snapshot;
use mempool_trace::{Op, Row, Trace};
use std::collections::HashMap;

/// What the importer must give back for `trace`: its allocate, free and allocate-failure
/// rows in order, with their addresses and sizes; streams numbered 1, 2, ... in order of
/// first mention (the importer's rule for a snapshot's raw streams); thread 1; times in
/// whole microseconds since the first of those rows, never decreasing.
pub fn expected(trace: &Trace) -> Vec<Row> {
    let mut streams: HashMap<u64, u64> = HashMap::new();
    let mut renumber = |s: u64| {
        let next = streams.len() as u64 + 1;
        *streams.entry(s).or_insert(next)
    };
    let (mut first, mut last) = (None, 0u64);
    let mut rows = Vec::new();
    for r in &trace.rows {
        let op = match r.op {
            Op::Allocate { ptr, size, stream } => Op::Allocate { ptr, size, stream: renumber(stream) },
            Op::Free { ptr, size, stream } => Op::Free { ptr, size, stream: renumber(stream) },
            Op::AllocateFailure { size, stream } => Op::AllocateFailure { size, stream: renumber(stream) },
            _ => continue,
        };
        last = last.max(r.time_ns / 1000);
        let first = *first.get_or_insert(last);
        rows.push(Row { thread: 1, time_ns: (last - first) * 1000, op });
    }
    rows
}

/// Exports `trace` as a snapshot pickle, imports it, and compares the rows with
/// [`expected`]; returns the number of rows.
pub fn round_trip(trace: &Trace) -> Result<usize, String> {
    let pickle = Snapshot::from_trace(trace).to_pickle();
    let imported = import(&pickle, &ImportOptions::default()).map_err(|e| format!("import: {e}"))?;
    if imported.format != Format::Snapshot {
        return Err(format!("imported as {}", imported.format));
    }
    let want = expected(trace);
    let got = &imported.trace.rows;
    if let Some(i) = (0..want.len().min(got.len())).find(|&i| got[i] != want[i]) {
        return Err(format!("row {i}: imported {}, expected {}", got[i], want[i]));
    }
    if got.len() != want.len() {
        return Err(format!("{} rows imported, {} expected", got.len(), want.len()));
    }
    // Nothing was rebuilt as allocated before recording: every row is the trace's own.
    if let Some(note) = imported.notes.iter().find(|n| n.contains("reconstruct")) {
        return Err(format!("unexpected note: {note}"));
    }
    Ok(got.len())
}
