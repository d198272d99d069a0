//! The live requested bytes of a trace: what the program needed, before any rounding.

use crate::format::Trace;

/// The live requested bytes after each row of `trace`, and their peak.
///
/// An `allocate` adds its size, a `free` takes away the size its allocation was made with;
/// other rows change nothing; an `allocate` at a pointer that is still live (which
/// [`parse`](crate::parse) refuses) replaces that allocation. This depends on the trace
/// alone, not on the pool.
///
/// ```
/// use mempool_trace::{parse, requested::live_requested};
///
/// let trace = parse("1,0,allocate,0x1000,100,1\n1,0,allocate,0x2000,50,1\n1,0,free,0x1000,100,1\n").unwrap();
/// assert_eq!(live_requested(&trace), (vec![100, 150, 50], 150));
/// ```
pub fn live_requested(trace: &Trace) -> (Vec<u64>, u64) {
    let r = crate::resolve::resolve(trace, true);
    (r.requested, r.requested_high)
}
