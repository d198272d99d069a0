//! A trace resolved for replay, in one pass before the replay loop: dense indices for its
//! streams, events and pointers (so that the loop indexes vectors instead of hashing ids),
//! and the live requested bytes.

use crate::format::{Op, Trace};
use rustc_hash::FxHashMap;

/// An index the trace does not resolve: a free of a pointer that is not live.
pub(crate) const UNKNOWN: u32 = u32::MAX;

/// The kinds of row, in this order (an index into [`KINDS`]).
pub(crate) const KINDS: [&str; 8] =
    ["allocate", "allocate failure", "free", "record", "wait", "sync_stream", "sync_event", "sync_device"];
// Each kind's index in [`KINDS`].
pub(crate) const ALLOCATE: u8 = 0;
pub(crate) const ALLOCATE_FAILURE: u8 = 1;
pub(crate) const FREE: u8 = 2;
pub(crate) const RECORD: u8 = 3;
pub(crate) const WAIT: u8 = 4;
pub(crate) const SYNC_STREAM: u8 = 5;
pub(crate) const SYNC_EVENT: u8 = 6;
pub(crate) const SYNC_DEVICE: u8 = 7;

/// `op`'s index in [`KINDS`].
#[inline]
pub(crate) fn kind(op: &Op) -> u8 {
    match op {
        Op::Allocate { .. } => ALLOCATE,
        Op::AllocateFailure { .. } => ALLOCATE_FAILURE,
        Op::Free { .. } => FREE,
        Op::Record { .. } => RECORD,
        Op::Wait { .. } => WAIT,
        Op::SyncStream { .. } => SYNC_STREAM,
        Op::SyncEvent { .. } => SYNC_EVENT,
        Op::SyncDevice => SYNC_DEVICE,
    }
}

/// One row as the replay loop reads it: its kind, its handles as indices, its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// The row's kind ([`kind`]).
    pub kind: u8,
    /// An `allocate` row's requested size (0 for other rows).
    pub size: u64,
    /// The row's stream, numbered 0, 1, ... in order of first mention (0 for rows without
    /// one, and for `allocate failure` rows, which the replay skips).
    pub stream: u32,
    /// For an `allocate` or a `free`, the pointer's slot ([`UNKNOWN`]: a free of a
    /// pointer that is not live); for `record`, `wait` and `sync_event`, the event,
    /// numbered 0, 1, ... in order of first mention; 0 otherwise.
    pub aux: u32,
}

/// A trace's rows as indices, and what the trace alone says about its requested bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// `steps[i]` resolves row `i`: the loop reads these, not the rows.
    pub steps: Vec<Step>,
    /// How many pointer slots the steps use: one per distinct pointer of the trace (a
    /// caching allocator's trace reuses few addresses many times).
    pub slots: usize,
    /// The live requested bytes after each row, when asked for (else empty).
    pub requested: Vec<u64>,
    /// The peak of the live requested bytes.
    pub requested_high: u64,
}

/// Dense indices in order of first mention, the last one looked up remembered (most rows
/// name the stream or pointer the row before named, or one stream alone).
#[derive(Default)]
struct Ids {
    map: FxHashMap<u64, u32>,
    last: Option<(u64, u32)>,
}

impl Ids {
    #[inline]
    fn get(&mut self, id: u64) -> u32 {
        if let Some((last, index)) = self.last
            && last == id
        {
            return index;
        }
        let next = self.map.len() as u32;
        let index = *self.map.entry(id).or_insert(next);
        self.last = Some((id, index));
        index
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

/// A pointer slot's allocation is not live.
const NOT_LIVE: u64 = u64::MAX;

/// Resolves `trace`: streams and events are numbered in order of first mention, pointers
/// get slots. With `per_row`, the live requested bytes after each row are kept too.
///
/// The requested bytes follow the rules of `live_requested` (in `requested.rs`): an
/// `allocate` adds its size (taking away the size of a live allocation at the same
/// pointer, which a checked trace never has), a `free` takes away its allocation's size.
pub(crate) fn resolve(trace: &Trace, per_row: bool) -> Resolved {
    let mut streams = Ids::default();
    let mut events = Ids::default();
    // A slot per distinct pointer; `live[slot]`: the requested size of its live
    // allocation, or NOT_LIVE.
    let mut ptrs = Ids::default();
    let mut live: Vec<u64> = Vec::new();
    let mut steps = Vec::with_capacity(trace.rows.len());
    let mut requested = Vec::with_capacity(if per_row { trace.rows.len() } else { 0 });
    let (mut now, mut high) = (0u64, 0u64);
    for row in &trace.rows {
        // (stream, aux, size) of the row.
        let (stream, aux, size) = match row.op {
            Op::Allocate { ptr, size, stream } => {
                let stream = streams.get(stream);
                let slot = ptrs.get(ptr);
                if slot as usize == live.len() {
                    live.push(NOT_LIVE);
                }
                let old = std::mem::replace(&mut live[slot as usize], size);
                if old != NOT_LIVE {
                    // An allocation over a live one (not a valid trace): the old one is gone.
                    now = now.saturating_sub(old);
                }
                now = now.saturating_add(size);
                high = high.max(now);
                (stream, slot, size)
            }
            Op::Free { ptr, stream, .. } => {
                let stream = streams.get(stream);
                // A pointer never allocated gets a slot too (never live), found by the
                // next lookup.
                let slot = ptrs.get(ptr);
                if slot as usize == live.len() {
                    live.push(NOT_LIVE);
                }
                match std::mem::replace(&mut live[slot as usize], NOT_LIVE) {
                    NOT_LIVE => (stream, UNKNOWN, 0),
                    size => {
                        now = now.saturating_sub(size);
                        (stream, slot, 0)
                    }
                }
            }
            Op::SyncStream { stream } => (streams.get(stream), 0, 0),
            // The replay skips the row and creates no stream for it.
            Op::AllocateFailure { .. } => (0, 0, 0),
            // The stream is named first: the replay creates handles in this order.
            Op::Record { event, stream } | Op::Wait { event, stream } => {
                let stream = streams.get(stream);
                (stream, events.get(event), 0)
            }
            Op::SyncEvent { event } => (0, events.get(event), 0),
            Op::SyncDevice => (0, 0, 0),
        };
        let step = Step { kind: kind(&row.op), size, stream, aux };
        steps.push(step);
        if per_row {
            requested.push(now);
        }
    }
    Resolved { steps, slots: ptrs.len(), requested, requested_high: high }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    /// The live requested bytes as a plain map computes them.
    fn reference(trace: &Trace) -> (Vec<u64>, u64) {
        let mut sizes = std::collections::HashMap::new();
        let (mut live, mut peak) = (0u64, 0u64);
        let mut out = Vec::new();
        for row in &trace.rows {
            match row.op {
                Op::Allocate { ptr, size, .. } => {
                    if let Some(old) = sizes.insert(ptr, size) {
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

    #[test]
    fn requested_bytes_match_a_plain_map() {
        let mut traces = generate::bundled();
        // An allocation over a live one, and a free of an unknown pointer.
        let odd = "1,0,allocate,0x1000,10,1\n1,0,allocate,0x1000,30,1\n1,0,free,0x9000,5,1\n1,0,free,0x1000,30,1\n";
        let rows = odd.lines().map(|l| crate::format::parse_row(l).unwrap()).collect();
        traces.push(("odd", Trace::from_rows(rows)));
        for (name, trace) in traces {
            let r = resolve(&trace, true);
            let (live, high) = reference(&trace);
            assert_eq!((r.requested, r.requested_high), (live, high), "{name}");
            assert_eq!(resolve(&trace, false).requested_high, high, "{name}");
        }
    }

    #[test]
    fn indices_follow_first_mention_with_a_slot_per_pointer() {
        let trace = crate::parse(
            "1,0,allocate,0x1000,10,7\n1,0,record,5,,9\n1,0,free,0x1000,10,7\n\
             1,0,allocate,0x2000,20,9\n1,0,sync_event,5,,\n1,0,wait,3,,7\n",
        )
        .unwrap();
        let r = resolve(&trace, false);
        let steps: Vec<(u32, u32)> = r.steps.iter().map(|s| (s.stream, s.aux)).collect();
        assert_eq!(steps, [(0, 0), (1, 0), (0, 0), (1, 1), (0, 0), (0, 1)]);
        assert_eq!((r.slots, r.requested_high), (2, 20));
        let bad = crate::Trace::from_rows(vec![crate::Row {
            thread: 1,
            time_ns: 0,
            op: Op::Free { ptr: 0x10, size: 1, stream: 0 },
        }]);
        assert_eq!(resolve(&bad, false).steps[0].aux, UNKNOWN);
    }

    #[test]
    fn kinds_follow_the_action_names() {
        let ops = [
            Op::Allocate { ptr: 1, size: 1, stream: 0 },
            Op::AllocateFailure { size: 1, stream: 0 },
            Op::Free { ptr: 1, size: 1, stream: 0 },
            Op::Record { event: 0, stream: 0 },
            Op::Wait { event: 0, stream: 0 },
            Op::SyncStream { stream: 0 },
            Op::SyncEvent { event: 0 },
            Op::SyncDevice,
        ];
        for op in ops {
            assert_eq!(KINDS[usize::from(kind(&op))], op.action());
        }
    }
}
