//! PyTorch memory snapshots (`torch.cuda.memory._dump_snapshot`).
//!
//! A snapshot is a pickle of plain Python values: a dict with `device_traces` (one list
//! of events per device, each a dict with `action`, `addr`, `size`, `stream`, `time_us`
//! and the Python frames) and `segments` (the allocator's state when the snapshot was
//! dumped: segments, each with its `blocks`). It is read with `deser-pickle`, which runs
//! no code: a class or function the pickle names is never imported or called. Only the
//! fields below are kept; frames and the rest are skipped.
//!
//! (`serde-pickle` 1.2 cannot read real snapshots: its reference counting of the pickle
//! memo drops values that are shared many times, such as the frames, and the read then
//! fails with "recursive structure found".)

use super::{ImportError, Imported, Place};
use crate::format::{Op, Row, Trace};
use std::collections::{HashMap, HashSet};

/// The parts of a snapshot the conversion reads.
#[derive(Debug, deser::Deserialize)]
struct Snapshot {
    device_traces: Option<Vec<Vec<Event>>>,
    segments: Option<Vec<Segment>>,
}

/// One entry of `device_traces[device]`.
#[derive(Debug, deser::Deserialize)]
struct Event {
    action: Option<String>,
    addr: Option<u64>,
    size: Option<u64>,
    stream: Option<u64>,
    time_us: Option<u64>,
}

/// One entry of `segments`.
#[derive(Debug, deser::Deserialize)]
struct Segment {
    device: Option<u64>,
    stream: Option<u64>,
    blocks: Option<Vec<Block>>,
}

/// One entry of a segment's `blocks`.
#[derive(Debug, deser::Deserialize)]
struct Block {
    address: Option<u64>,
    size: Option<u64>,
    requested_size: Option<u64>,
    state: Option<String>,
}

/// At most this many events per byte of pickle are emitted for values the pickle shares
/// (strings and frames many events have in common): a real 3.8 MB snapshot needs between
/// one and four per byte; a small pickle that nests shared values could otherwise ask for
/// billions.
const MAX_SHARED_EVENTS_PER_BYTE: usize = 32;

/// Reads a snapshot pickle (already un-gzipped) and converts the events of `device`
/// (default: the only device with events).
pub(super) fn import(bytes: &[u8], device: Option<usize>) -> Result<Imported, ImportError> {
    let mut config = deser_pickle::DeserializerConfig::new();
    config.set_max_shared_events(bytes.len().saturating_mul(MAX_SHARED_EVENTS_PER_BYTE).max(1 << 20));
    let mut de = deser_pickle::Deserializer::from_slice_with_config(bytes, config);
    // The crate's errors name the byte offset themselves.
    let snapshot: Snapshot = de
        .deserialize()
        .map_err(|e| ImportError { place: None, message: format!("not a memory snapshot pickle: {e}") })?;
    let whole = |message: String| ImportError { place: None, message };
    let Some(traces) = snapshot.device_traces else {
        return Err(whole("no `device_traces`: not a memory snapshot (record it with `torch.cuda.memory._record_memory_history()` before dumping)".into()));
    };
    let device = match device {
        Some(d) if d < traces.len() => d,
        Some(d) => return Err(whole(format!("no device {d}: the snapshot has traces for {} device(s)", traces.len()))),
        None => {
            let with_events: Vec<usize> = (0..traces.len()).filter(|&i| !traces[i].is_empty()).collect();
            match with_events[..] {
                [d] => d,
                [] => return Err(whole("the snapshot has no events (was memory history recorded?)".into())),
                _ => return Err(whole(format!("events on devices {with_events:?}: choose one with --device"))),
            }
        }
    };
    convert(&traces[device], snapshot.segments.as_deref().unwrap_or(&[]), device)
}

/// A field that must be there.
fn need<T: Copy>(v: Option<T>, key: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("no `{key}`"))
}

/// What one event becomes.
enum Kind {
    Alloc,
    Free,
    Oom,
    Dropped,
}

fn convert(events: &[Event], segments: &[Segment], device: usize) -> Result<Imported, ImportError> {
    let at = |i: usize| move |message: String| ImportError { place: Some(Place::Event(i)), message };
    // Raw `cudaStream_t` values -> 1, 2, ... in order of first mention.
    let mut streams: HashMap<u64, u64> = HashMap::new();
    let mut stream_id = |raw: u64| {
        let next = streams.len() as u64 + 1;
        *streams.entry(raw).or_insert(next)
    };
    let mut first_us: Option<u64> = None;
    let mut last_us = 0u64;
    let mut rows: Vec<Row> = Vec::with_capacity(events.len());
    // Live allocations (address -> requested size), and every address the events name.
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut seen: HashSet<u64> = HashSet::new();
    // Blocks freed but never allocated in the trace: allocated before recording started.
    let mut before: Vec<Row> = Vec::new();
    let (mut dropped, mut completed) = (0usize, 0usize);
    for (i, ev) in events.iter().enumerate() {
        let err = at(i);
        let action = ev.action.as_deref().ok_or_else(|| err("no `action`".into()))?;
        let what = match action {
            "alloc" => Kind::Alloc,
            "free_requested" => Kind::Free,
            "oom" => Kind::Oom,
            "free_completed" => {
                completed += 1;
                Kind::Dropped
            }
            "segment_alloc" | "segment_free" | "segment_map" | "segment_unmap" | "snapshot" | "user_defined" => {
                dropped += 1;
                Kind::Dropped
            }
            other => return Err(err(format!("unknown action {other:?}"))),
        };
        // Times: microseconds of one clock; a snapshot from before `time_us` existed
        // keeps the previous event's time.
        let us = ev.time_us.unwrap_or_else(|| last_us.max(first_us.unwrap_or(0)));
        let first = *first_us.get_or_insert(us);
        if us < last_us {
            return Err(err(format!("time_us {us} is before the previous event's {last_us}")));
        }
        last_us = us;
        let time_ns = (us - first).checked_mul(1000).ok_or_else(|| err(format!("time_us {us} is out of range")))?;
        if matches!(what, Kind::Dropped) {
            continue;
        }
        let size = need(ev.size, "size").map_err(&err)?;
        let stream = stream_id(need(ev.stream, "stream").map_err(&err)?);
        match what {
            Kind::Alloc => {
                let ptr = need(ev.addr, "addr").map_err(&err)?;
                if ptr == 0 {
                    return Err(err("alloc at address 0".into()));
                }
                if live.insert(ptr, size).is_some() {
                    return Err(err(format!("alloc at {ptr:#x}, which is still allocated")));
                }
                seen.insert(ptr);
                rows.push(Row { thread: 1, time_ns, op: Op::Allocate { ptr, size, stream } });
            }
            Kind::Free => {
                let ptr = need(ev.addr, "addr").map_err(&err)?;
                match live.remove(&ptr) {
                    Some(s) if s != size => {
                        return Err(err(format!("free of {ptr:#x} with size {size}, allocated with size {s}")));
                    }
                    Some(_) => {}
                    None if seen.contains(&ptr) => {
                        return Err(err(format!("free of {ptr:#x}, which was already freed")));
                    }
                    None => {
                        // First mention of the address is its free: the block was
                        // allocated before recording started.
                        if ptr == 0 {
                            return Err(err("free of address 0".into()));
                        }
                        before.push(Row { thread: 1, time_ns: 0, op: Op::Allocate { ptr, size, stream } });
                    }
                }
                seen.insert(ptr);
                rows.push(Row { thread: 1, time_ns, op: Op::Free { ptr, size, stream } });
            }
            Kind::Oom => rows.push(Row { thread: 1, time_ns, op: Op::AllocateFailure { size, stream } }),
            Kind::Dropped => {}
        }
    }
    // Blocks active when the snapshot was dumped that the events never mention: allocated
    // before recording started and never freed.
    let mut at_dump = Vec::new();
    let mut unexplained = 0usize;
    for (k, seg) in segments.iter().enumerate() {
        let serr = |message: String| ImportError { place: None, message: format!("segments[{k}]: {message}") };
        if seg.device.is_some_and(|d| d != device as u64) {
            continue;
        }
        let raw_stream = seg.stream.unwrap_or(0);
        let Some(blocks) = &seg.blocks else { continue };
        for (j, b) in blocks.iter().enumerate() {
            let berr = |message: String| serr(format!("blocks[{j}]: {message}"));
            if b.state.as_deref().ok_or_else(|| berr("no `state`".into()))? != "active_allocated" {
                continue;
            }
            let ptr = need(b.address, "address").map_err(berr)?;
            if seen.contains(&ptr) {
                if !live.contains_key(&ptr) {
                    unexplained += 1;
                }
                continue;
            }
            // Older snapshots have the block's size only.
            let size = b.requested_size.or(b.size).ok_or_else(|| berr("no `requested_size` or `size`".into()))?;
            at_dump.push(Row { thread: 1, time_ns: 0, op: Op::Allocate { ptr, size, stream: stream_id(raw_stream) } });
        }
    }
    let mut notes = vec![format!(
        "device {device}: {} events; {dropped} segment, snapshot and annotation events and {completed} free_completed dropped",
        events.len()
    )];
    if !before.is_empty() || !at_dump.is_empty() {
        notes.push(format!(
            "{} rows at time 0 reconstruct memory allocated before recording started: {} blocks freed but never allocated in the events, {} blocks active at the dump that the events never mention",
            before.len() + at_dump.len(),
            before.len(),
            at_dump.len()
        ));
    }
    if unexplained > 0 {
        notes.push(format!(
            "{unexplained} blocks active at the dump were freed in the events and never allocated again: left out"
        ));
    }
    let mut all = before;
    all.append(&mut at_dump);
    all.append(&mut rows);
    Ok(Imported { trace: Trace::from_rows(all), format: super::Format::Snapshot, notes })
}
