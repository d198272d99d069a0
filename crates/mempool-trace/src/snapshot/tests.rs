//! The pickle's shape, read back by a small unpickler that knows only the opcodes PyTorch's
//! viewer (`torch/utils/viz/MemoryViz.js`) reads, and the rules of [`Snapshot::from_trace`].
//! The round trips through the importer are in `tests/snapshot.rs`.

use super::*;
use crate::format::Row;
use crate::generate;
use std::collections::BTreeMap;

/// A Python value as the pickle holds it.
#[derive(Debug, Clone, PartialEq)]
enum Py {
    None,
    Bool(bool),
    Int(i128),
    Str(String),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    /// Keys in the order the pickle sets them.
    Dict(Vec<(String, Py)>),
}

impl Py {
    fn get(&self, key: &str) -> &Py {
        match self {
            Py::Dict(items) => {
                &items.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no key {key:?} in {self:?}")).1
            }
            other => panic!("{other:?} is not a dict"),
        }
    }
    fn keys(&self) -> Vec<&str> {
        match self {
            Py::Dict(items) => items.iter().map(|(k, _)| k.as_str()).collect(),
            other => panic!("{other:?} is not a dict"),
        }
    }
    fn list(&self) -> &[Py] {
        match self {
            Py::List(items) => items,
            other => panic!("{other:?} is not a list"),
        }
    }
    fn int(&self) -> i128 {
        match self {
            Py::Int(i) => *i,
            other => panic!("{other:?} is not an int"),
        }
    }
    fn str(&self) -> &str {
        match self {
            Py::Str(s) => s,
            other => panic!("{other:?} is not a str"),
        }
    }
}

/// Reads a pickle, accepting only the opcodes PyTorch's viewer reads (protocols 2 to 4);
/// any other opcode is an error naming it and its offset.
fn unpickle(bytes: &[u8]) -> Result<Py, String> {
    let mut stack: Vec<Py> = Vec::new();
    let mut marks: Vec<usize> = Vec::new();
    let mut memo: BTreeMap<u32, Py> = BTreeMap::new();
    let mut at = 0usize;
    let take = |at: &mut usize, n: usize| -> Result<Vec<u8>, String> {
        let b = bytes.get(*at..*at + n).ok_or_else(|| format!("cut short at {at}"))?.to_vec();
        *at += n;
        Ok(b)
    };
    let u32_le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    loop {
        let op_at = at;
        let op = take(&mut at, 1)?[0];
        let mark = |marks: &mut Vec<usize>| marks.pop().ok_or_else(|| format!("no mark at {op_at}"));
        match op {
            0x80 => {
                let v = take(&mut at, 1)?[0];
                if !(2..=4).contains(&v) {
                    return Err(format!("protocol {v}: the viewer reads 2 to 4"));
                }
            }
            0x95 => drop(take(&mut at, 8)?),
            b'}' => stack.push(Py::Dict(Vec::new())),
            b']' => stack.push(Py::List(Vec::new())),
            b')' => stack.push(Py::Tuple(Vec::new())),
            b'N' => stack.push(Py::None),
            0x88 => stack.push(Py::Bool(true)),
            0x89 => stack.push(Py::Bool(false)),
            b'K' => stack.push(Py::Int(take(&mut at, 1)?[0].into())),
            b'M' => {
                let b = take(&mut at, 2)?;
                stack.push(Py::Int(u16::from_le_bytes([b[0], b[1]]).into()));
            }
            b'J' => stack.push(Py::Int((u32_le(&take(&mut at, 4)?) as i32).into())),
            0x8a => {
                let n = usize::from(take(&mut at, 1)?[0]);
                let b = take(&mut at, n)?;
                if n > 16 {
                    return Err(format!("a {n}-byte int at {op_at}"));
                }
                // Little-endian two's complement.
                let fill = if b.last().is_some_and(|&x| x >= 0x80) { 0xff } else { 0 };
                let mut full = [fill; 16];
                full[..n].copy_from_slice(&b);
                stack.push(Py::Int(i128::from_le_bytes(full)));
            }
            0x8c | b'X' => {
                let n =
                    if op == 0x8c { usize::from(take(&mut at, 1)?[0]) } else { u32_le(&take(&mut at, 4)?) as usize };
                let s = String::from_utf8(take(&mut at, n)?).map_err(|e| e.to_string())?;
                stack.push(Py::Str(s));
            }
            b'(' => marks.push(stack.len()),
            b'a' => {
                let v = stack.pop().ok_or("empty stack")?;
                match stack.last_mut() {
                    Some(Py::List(l)) => l.push(v),
                    _ => return Err(format!("APPEND to a non-list at {op_at}")),
                }
            }
            b'e' | b'u' | b't' | b'l' => {
                let m = mark(&mut marks)?;
                let items = stack.split_off(m);
                match op {
                    b't' => stack.push(Py::Tuple(items)),
                    b'l' => stack.push(Py::List(items)),
                    b'e' => match stack.last_mut() {
                        Some(Py::List(l)) => l.extend(items),
                        _ => return Err(format!("APPENDS to a non-list at {op_at}")),
                    },
                    _ => {
                        let Some(Py::Dict(d)) = stack.last_mut() else {
                            return Err(format!("SETITEMS to a non-dict at {op_at}"));
                        };
                        let mut it = items.into_iter();
                        while let (Some(k), Some(v)) = (it.next(), it.next()) {
                            let Py::Str(k) = k else { return Err(format!("a key that is not a str at {op_at}")) };
                            d.push((k, v));
                        }
                    }
                }
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let items = stack.split_off(stack.len().checked_sub(n).ok_or("stack too short")?);
                stack.push(Py::Tuple(items));
            }
            0x94 => {
                let v = stack.last().ok_or("empty stack")?.clone();
                memo.insert(memo.len() as u32, v);
            }
            b'h' | b'j' => {
                let i = if op == b'h' { u32::from(take(&mut at, 1)?[0]) } else { u32_le(&take(&mut at, 4)?) };
                stack.push(memo.get(&i).ok_or(format!("no memo {i}"))?.clone());
            }
            b'.' => {
                if at != bytes.len() {
                    return Err(format!("{} bytes after STOP", bytes.len() - at));
                }
                return stack.pop().ok_or_else(|| "nothing pickled".into());
            }
            other => return Err(format!("opcode {other:#04x} at {op_at}, which the viewer does not read")),
        }
    }
}

fn event(action: SnapshotAction, addr: u64, size: u64, stream: u64, time_us: u64) -> SnapshotEvent {
    SnapshotEvent { action, addr, size, stream, time_us }
}

fn py_int(v: u64) -> Py {
    Py::Int(v.into())
}

fn s(v: &str) -> Py {
    Py::Str(v.into())
}

#[test]
fn the_pickle_has_pytorchs_keys_values_and_types() {
    use SnapshotAction::*;
    let big = 0x7f3a_0000_0000u64;
    let snapshot = Snapshot {
        device_traces: vec![vec![
            event(SegmentAlloc, big, 4 << 20, 7, 10),
            event(Alloc, big, 3000, 7, 11),
            event(Oom, 123_456, 1 << 40, 7, 12),
            event(FreeRequested, big, 3000, 7, 13),
            event(FreeCompleted, big, 3000, 7, 14),
            event(SegmentFree, big, 4 << 20, u64::MAX, u64::from(u32::MAX) + 1),
        ]],
        segments: vec![
            SnapshotSegment {
                device: 0,
                address: big,
                total_size: 4 << 20,
                stream: 7,
                blocks: vec![
                    SnapshotBlock { address: big, size: 1 << 20, requested_size: 1000, active: true },
                    SnapshotBlock { address: big + (1 << 20), size: 1 << 20, requested_size: 0, active: false },
                    SnapshotBlock { address: big + (2 << 20), size: 2 << 20, requested_size: 2_000_000, active: true },
                ],
            },
            SnapshotSegment {
                device: 1,
                address: 0x1000,
                total_size: 1 << 20,
                stream: 0,
                blocks: vec![SnapshotBlock { address: 0x1000, size: 1 << 20, requested_size: 512, active: true }],
            },
        ],
    };
    let bytes = snapshot.to_pickle();
    assert_eq!(&bytes[..2], b"\x80\x04", "protocol 4");
    let py = unpickle(&bytes).unwrap();
    assert_eq!(py.keys(), ["segments", "device_traces"]);

    let events = py.get("device_traces").list()[0].list();
    let actions: Vec<&str> = events.iter().map(|e| e.get("action").str()).collect();
    assert_eq!(actions, ["segment_alloc", "alloc", "oom", "free_requested", "free_completed", "segment_free"]);
    assert_eq!(
        events[1],
        Py::Dict(vec![
            ("action".into(), s("alloc")),
            ("addr".into(), py_int(big)),
            ("size".into(), py_int(3000)),
            ("stream".into(), py_int(7)),
            ("time_us".into(), py_int(11)),
            ("frames".into(), Py::List(vec![])),
        ])
    );
    // `oom` says the device's free bytes where the others have the address.
    assert_eq!(events[2].keys(), ["action", "device_free", "size", "stream", "time_us", "frames"]);
    assert_eq!(events[2].get("device_free").int(), 123_456);
    assert_eq!(events[2].get("size").int(), 1 << 40);
    // Values beyond 32 bits are whole ints (LONG1).
    assert_eq!(events[5].get("stream").int(), u64::MAX.into());
    assert_eq!(events[5].get("time_us").int(), (1i128 << 32));

    let segs = py.get("segments").list();
    let seg = &segs[0];
    assert_eq!(
        seg.keys(),
        [
            "device",
            "address",
            "total_size",
            "allocated_size",
            "active_size",
            "requested_size",
            "stream",
            "segment_type",
            "segment_pool_id",
            "is_expandable",
            "frames",
            "blocks"
        ]
    );
    assert_eq!(seg.get("address").int(), big.into());
    assert_eq!(seg.get("total_size").int(), 4 << 20);
    assert_eq!(seg.get("allocated_size").int(), 3 << 20, "the active blocks");
    assert_eq!(seg.get("active_size").int(), 3 << 20);
    assert_eq!(seg.get("requested_size").int(), 2_001_000);
    assert_eq!(seg.get("segment_type").str(), "large");
    assert_eq!(*seg.get("segment_pool_id"), Py::Tuple(vec![py_int(0), py_int(0)]));
    assert_eq!(*seg.get("is_expandable"), Py::Bool(false));
    let blocks = seg.get("blocks").list();
    assert_eq!(blocks[0].keys(), ["address", "size", "requested_size", "state", "frames"]);
    let states: Vec<&str> = blocks.iter().map(|b| b.get("state").str()).collect();
    assert_eq!(states, ["active_allocated", "inactive", "active_allocated"]);
    assert_eq!(blocks[1].get("address").int(), (big + (1 << 20)).into());
    assert_eq!(segs[1].get("device").int(), 1);
    assert_eq!(segs[1].get("segment_type").str(), "small", "1 MiB is PyTorch's small pool");
}

#[test]
fn an_empty_snapshot_is_the_empty_dicts_lists() {
    let py = unpickle(&Snapshot::default().to_pickle()).unwrap();
    assert_eq!(py, Py::Dict(vec![("segments".into(), Py::List(vec![])), ("device_traces".into(), Py::List(vec![]))]));
}

#[test]
fn the_unpickler_refuses_what_the_viewer_cannot_read() {
    // It is the check of the tests above, so it must fail where the viewer fails.
    assert!(unpickle(b"\x80\x05}.").unwrap_err().contains("protocol 5"));
    // BINUNICODE8 and a class (GLOBAL).
    assert!(unpickle(b"\x80\x04\x8d\x01\x00\x00\x00\x00\x00\x00\x00a.").unwrap_err().contains("0x8d"));
    assert!(unpickle(b"\x80\x02cbuiltins\nset\n.").unwrap_err().contains("0x63"));
    assert_eq!(unpickle(b"\x80\x04K\x05.").unwrap(), Py::Int(5));
}

/// The bundled traces as snapshots.
fn bundled() -> Vec<(&'static str, Snapshot)> {
    generate::bundled().into_iter().map(|(name, t)| (name, Snapshot::from_trace(&t))).collect()
}

#[test]
fn bundled_traces_pickle_with_only_viewer_opcodes() {
    for (name, snapshot) in bundled() {
        let py = unpickle(&snapshot.to_pickle()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let events = py.get("device_traces").list()[0].list();
        assert_eq!(events.len(), snapshot.device_traces[0].len(), "{name}");
        assert_eq!(py.get("segments").list().len(), snapshot.segments.len(), "{name}");
    }
}

#[test]
fn every_live_block_lies_in_a_live_segment_at_every_event() {
    // What the viewer's "Allocator State History" needs: at each event, each allocated
    // block inside a segment that exists then.
    for (name, snapshot) in bundled() {
        let events = &snapshot.device_traces[0];
        let mut segments: BTreeMap<u64, u64> = BTreeMap::new();
        let mut blocks: BTreeMap<u64, u64> = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            match e.action {
                SnapshotAction::SegmentAlloc => assert!(segments.insert(e.addr, e.size).is_none(), "{name} {i}"),
                SnapshotAction::SegmentFree => {
                    assert_eq!(segments.remove(&e.addr), Some(e.size), "{name} {i}");
                    assert!(!blocks.contains_key(&e.addr), "{name} {i}: a segment freed under a block");
                }
                SnapshotAction::Alloc => {
                    let (&start, &len) = segments.range(..=e.addr).next_back().expect("a segment below");
                    assert!(e.addr + e.size <= start + len, "{name} {i}: the block leaves its segment");
                    blocks.insert(e.addr, e.size);
                }
                SnapshotAction::FreeRequested => {
                    // The viewer shows a free_requested and the free_completed right after
                    // it as one `free`.
                    assert_eq!(events[i + 1], SnapshotEvent { action: SnapshotAction::FreeCompleted, ..e.clone() });
                }
                SnapshotAction::FreeCompleted => assert_eq!(blocks.remove(&e.addr), Some(e.size), "{name} {i}"),
                SnapshotAction::Oom => {}
            }
        }
        // What is left is the dump's segments, one active block each.
        let at_dump: BTreeMap<u64, u64> = snapshot.segments.iter().map(|s| (s.address, s.total_size)).collect();
        assert_eq!(at_dump, segments, "{name}");
        assert_eq!(at_dump, blocks, "{name}");
        assert!(!at_dump.is_empty() || name == "pipeline.csv", "{name} keeps its weights allocated");
    }
}

fn row(time_ns: u64, op: Op) -> Row {
    Row { thread: 1, time_ns, op }
}

#[test]
fn from_trace_follows_the_rows() {
    use SnapshotAction::*;
    let trace = Trace::from_rows(vec![
        row(1_999, Op::Allocate { ptr: 0x2000, size: 300, stream: 4 }),
        row(2_000, Op::Record { event: 1, stream: 4 }),
        row(9_000_000, Op::SyncDevice),
        // Recorded out of order: keeps the previous event's time.
        row(1_000, Op::Allocate { ptr: 0x1000, size: 5 << 20, stream: 2 }),
        row(7_500, Op::AllocateFailure { size: 1 << 40, stream: 2 }),
        // Freed on another stream than allocated: the segment stays on its stream.
        row(8_000, Op::Free { ptr: 0x2000, size: 300, stream: 2 }),
    ]);
    let snapshot = Snapshot::from_trace(&trace);
    assert_eq!(snapshot.device_traces.len(), 1, "device 0 only");
    assert_eq!(
        snapshot.device_traces[0],
        [
            event(SegmentAlloc, 0x2000, 300, 4, 1),
            event(Alloc, 0x2000, 300, 4, 1),
            event(SegmentAlloc, 0x1000, 5 << 20, 2, 1),
            event(Alloc, 0x1000, 5 << 20, 2, 1),
            event(Oom, 0, 1 << 40, 2, 7),
            event(FreeRequested, 0x2000, 300, 2, 8),
            event(FreeCompleted, 0x2000, 300, 2, 8),
            event(SegmentFree, 0x2000, 300, 4, 8),
        ]
    );
    assert_eq!(
        snapshot.segments,
        [SnapshotSegment {
            device: 0,
            address: 0x1000,
            total_size: 5 << 20,
            stream: 2,
            blocks: vec![SnapshotBlock { address: 0x1000, size: 5 << 20, requested_size: 5 << 20, active: true }],
        }]
    );
    assert_eq!(Snapshot::from_trace(&Trace::default()), Snapshot { device_traces: vec![vec![]], segments: vec![] });
}

#[test]
fn live_segments_are_in_address_order() {
    let rows = [0x9000u64, 0x3000, 0x7000, 0x1000]
        .iter()
        .enumerate()
        .map(|(i, &ptr)| row(i as u64, Op::Allocate { ptr, size: 16, stream: 1 }))
        .collect();
    let snapshot = Snapshot::from_trace(&Trace::from_rows(rows));
    let addrs: Vec<u64> = snapshot.segments.iter().map(|s| s.address).collect();
    assert_eq!(addrs, [0x1000, 0x3000, 0x7000, 0x9000]);
}
