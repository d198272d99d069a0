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

/// The kinds that name a stream the replay uses, in [`KINDS`]' order.
pub(crate) const HAS_STREAM: [bool; 8] = [true, false, true, true, true, true, false, false];
/// The kinds that name an event.
pub(crate) const HAS_EVENT: [bool; 8] = [false, false, false, true, true, false, true, false];

/// [`Step::flags`]: the row names a stream or an event for the first time (the replay
/// creates its handles, in order of first mention, before the call).
pub(crate) const NEW_HANDLES: u8 = 1;
/// [`Step::flags`]: the first row of its kind (always timed).
pub(crate) const FIRST_OF_KIND: u8 = 2;

/// One row as the replay loop reads it: its kind, its handles as indices, its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// The row's kind ([`kind`]).
    pub kind: u8,
    /// [`NEW_HANDLES`] and [`FIRST_OF_KIND`]: what the loop does besides the call, known
    /// before it runs, so that a common row tests one byte.
    pub flags: u8,
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
    /// How many pointer slots the steps use: the most allocations live at once (a free
    /// hands its slot to the next allocation, so the loop's slots stay few and in cache,
    /// whether the trace reuses its addresses or, as a synthetic one may, never does).
    pub slots: usize,
    /// The live requested bytes after each row, when asked for (else empty).
    pub requested: Vec<u64>,
    /// The peak of the live requested bytes.
    pub requested_high: u64,
    /// How many rows of each kind ([`KINDS`]' order).
    pub counts: [u64; KINDS.len()],
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
}

/// Resolves `trace`: streams and events are numbered in order of first mention, pointers
/// get slots. With `per_row`, the live requested bytes after each row are kept too.
///
/// The requested bytes follow the rules of `live_requested` (in `requested.rs`): an
/// `allocate` adds its size (taking away the size of a live allocation at the same
/// pointer, which a checked trace never has), a `free` takes away its allocation's size.
pub(crate) fn resolve(trace: &Trace, per_row: bool) -> Resolved {
    let mut streams = Ids::default();
    let mut events = Ids::default();
    // Each live pointer's slot, and `live[slot]`: the requested size of its allocation.
    // A freed slot goes to the next allocation.
    let mut slot_of: FxHashMap<u64, u32> = FxHashMap::default();
    let mut live: Vec<u64> = Vec::new();
    let mut spare: Vec<u32> = Vec::new();
    let mut steps = Vec::with_capacity(trace.rows.len());
    let mut requested = Vec::with_capacity(if per_row { trace.rows.len() } else { 0 });
    let (mut now, mut high) = (0u64, 0u64);
    let mut counts = [0u64; KINDS.len()];
    // The handles the replay will have made before each row.
    let (mut streams_made, mut events_made) = (0usize, 0usize);
    for row in &trace.rows {
        // (stream, aux, size) of the row.
        let (stream, aux, size) = match row.op {
            Op::Allocate { ptr, size, stream } => {
                let stream = streams.get(stream);
                let slot = match slot_of.get(&ptr) {
                    Some(&slot) => {
                        // An allocation over a live one (not a valid trace): the old one
                        // is gone, its slot taken over.
                        now = now.saturating_sub(live[slot as usize]);
                        slot
                    }
                    None => {
                        let slot = spare.pop().unwrap_or_else(|| {
                            live.push(0);
                            (live.len() - 1) as u32
                        });
                        slot_of.insert(ptr, slot);
                        slot
                    }
                };
                live[slot as usize] = size;
                now = now.saturating_add(size);
                high = high.max(now);
                (stream, slot, size)
            }
            Op::Free { ptr, stream, .. } => {
                let stream = streams.get(stream);
                match slot_of.remove(&ptr) {
                    None => (stream, UNKNOWN, 0),
                    Some(slot) => {
                        now = now.saturating_sub(live[slot as usize]);
                        spare.push(slot);
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
        let kind = kind(&row.op);
        let k = usize::from(kind);
        let mut flags = 0;
        if counts[k] == 0 {
            flags |= FIRST_OF_KIND;
        }
        counts[k] += 1;
        // Indices are numbered in order of first mention, so a new one is the next one.
        if HAS_STREAM[k] && stream as usize == streams_made {
            streams_made += 1;
            flags |= NEW_HANDLES;
        }
        if HAS_EVENT[k] && aux as usize == events_made {
            events_made += 1;
            flags |= NEW_HANDLES;
        }
        steps.push(Step { kind, flags, size, stream, aux });
        if per_row {
            requested.push(now);
        }
    }
    Resolved { steps, slots: live.len(), requested, requested_high: high, counts }
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
    fn indices_follow_first_mention_and_freed_slots_are_reused() {
        let trace = crate::parse(
            "1,0,allocate,0x1000,10,7\n1,0,record,5,,9\n1,0,free,0x1000,10,7\n\
             1,0,allocate,0x2000,20,9\n1,0,sync_event,5,,\n1,0,wait,3,,7\n",
        )
        .unwrap();
        let r = resolve(&trace, false);
        let steps: Vec<(u32, u32)> = r.steps.iter().map(|s| (s.stream, s.aux)).collect();
        // The second allocation takes the slot the free gave back.
        assert_eq!(steps, [(0, 0), (1, 0), (0, 0), (1, 0), (0, 0), (0, 1)]);
        // New handles (stream 7, then stream 9 and event 5, then event 3) and each kind's
        // first row are marked; the kinds are counted.
        let flags: Vec<u8> = r.steps.iter().map(|s| s.flags).collect();
        let (new, first) = (NEW_HANDLES, FIRST_OF_KIND);
        assert_eq!(flags, [new | first, new | first, first, 0, first, new | first]);
        assert_eq!(r.counts, [2, 0, 1, 1, 1, 0, 1, 0]);
        assert_eq!((r.slots, r.requested_high), (1, 20));
        // Two live at once take two slots; an allocation over a live pointer keeps its.
        // (A trace the parser refuses, built from its rows.)
        let odd = "1,0,allocate,0x1000,10,7\n1,0,allocate,0x2000,20,7\n1,0,allocate,0x1000,30,7\n\
                   1,0,free,0x1000,30,7\n1,0,free,0x1000,30,7\n1,0,allocate,0x3000,5,7\n";
        let rows = odd.lines().map(|l| crate::format::parse_row(l.trim()).unwrap()).collect();
        let r = resolve(&Trace::from_rows(rows), false);
        let aux: Vec<u32> = r.steps.iter().map(|s| s.aux).collect();
        assert_eq!(aux, [0, 1, 0, 0, UNKNOWN, 0]);
        assert_eq!((r.slots, r.requested_high), (2, 50));
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
