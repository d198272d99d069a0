//! The live requested bytes of a trace: what the program needed, before any rounding.

use crate::format::{Op, Trace};
use std::collections::HashMap;

/// The live requested bytes after each row of `trace`, and their peak.
///
/// An `allocate` adds its size, a `free` takes away the size its allocation was made with;
/// other rows change nothing. This depends on the trace alone, not on the pool.
///
/// ```
/// use mempool_trace::{parse, requested::live_requested};
///
/// let trace = parse("1,0,allocate,0x1000,100,1\n1,0,allocate,0x2000,50,1\n1,0,free,0x1000,100,1\n").unwrap();
/// assert_eq!(live_requested(&trace), (vec![100, 150, 50], 150));
/// ```
pub fn live_requested(trace: &Trace) -> (Vec<u64>, u64) {
    let mut sizes: HashMap<u64, u64> = HashMap::new();
    let (mut live, mut peak) = (0u64, 0u64);
    let mut out = Vec::with_capacity(trace.rows.len());
    for row in &trace.rows {
        match row.op {
            Op::Allocate { ptr, size, .. } => {
                if let Some(old) = sizes.insert(ptr, size) {
                    // An allocation over a live one (not a valid trace): the old one is gone.
                    live = live.saturating_sub(old);
                }
                live = live.saturating_add(size);
                peak = peak.max(live);
            }
            Op::Free { ptr, .. } => live = live.saturating_sub(sizes.remove(&ptr).unwrap_or(0)),
            _ => {}
        }
        out.push(live);
    }
    (out, peak)
}
