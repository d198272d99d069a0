//! Writing PyTorch memory snapshots: the pickle `torch.cuda.memory._dump_snapshot()` writes,
//! which PyTorch's viewer (<https://pytorch.org/memory_viz>) plots and
//! [`import()`](crate::import::import) reads back.
//!
//! A [`Snapshot`] holds what such a pickle holds: the recorded events of each device
//! (`device_traces`) and the segments live at the dump with their blocks (`segments`).
//! [`Snapshot::to_pickle`] writes it as PyTorch does (protocol 4, written with
//! `deser-pickle`), with the keys and value types PyTorch uses:
//!
//! - the top-level dict has `segments` and `device_traces` (the `allocator_settings` and
//!   `external_annotations` newer PyTorch versions add are left out: nothing here knows
//!   them, and neither the viewer nor the importer reads them);
//! - an event has `action` (`'alloc'`, `'free_requested'`, `'free_completed'`,
//!   `'segment_alloc'`, `'segment_free'` or `'oom'`), `addr`, `size`, `stream`, `time_us`
//!   and `frames` (an empty list: no stacks are known). An `oom` event has `device_free`
//!   in place of `addr`, as in PyTorch, with the value of [`SnapshotEvent::addr`];
//! - a segment has `device`, `address`, `total_size`, `allocated_size` and `active_size`
//!   (the bytes of its active blocks), `requested_size` (their requested bytes), `stream`,
//!   `segment_type` (`'small'` for at most 1 MiB, PyTorch's small pool, else `'large'`),
//!   `segment_pool_id` (the tuple `(0, 0)`, the default pool), `is_expandable` (`False`),
//!   `frames` (empty) and `blocks`;
//! - a block has `address`, `size`, `requested_size`, `state` (`'active_allocated'` or
//!   `'inactive'`) and `frames` (empty).
//!
//! Integers are written as Python ints (`BININT`/`LONG1`), strings as `SHORT_BINUNICODE`:
//! only opcodes the viewer's own unpickler reads. PyTorch writes streams as signed 64-bit
//! values; stream ids and addresses above `i64::MAX` are written as the larger unsigned
//! ints they are.
//!
//! [`Snapshot::from_trace`] converts a project trace (see the [crate docs](crate)):
//!
//! ```
//! use mempool_trace::snapshot::{Snapshot, SnapshotAction};
//!
//! let trace = mempool_trace::parse(
//!     "Thread,Time,Action,Pointer,Size,Stream\n\
//!      1,0.000000000,allocate,0x1000,512,1\n\
//!      1,0.000002000,allocate,0x2000,256,1\n\
//!      1,0.000003000,free,0x1000,512,1\n",
//! )?;
//! let snapshot = Snapshot::from_trace(&trace);
//! let actions: Vec<SnapshotAction> = snapshot.device_traces[0].iter().map(|e| e.action).collect();
//! use SnapshotAction::*;
//! assert_eq!(
//!     actions,
//!     [SegmentAlloc, Alloc, SegmentAlloc, Alloc, FreeRequested, FreeCompleted, SegmentFree]
//! );
//! // 0x2000 is still allocated: it is the one segment at the dump.
//! assert_eq!(snapshot.segments.len(), 1);
//! assert_eq!(snapshot.segments[0].address, 0x2000);
//!
//! // The importer gives the allocations and the free back.
//! let back = mempool_trace::import::import(&snapshot.to_pickle(), &Default::default())?;
//! assert_eq!(back.trace.to_csv(), trace.to_csv());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::format::{Op, Trace};
use std::collections::HashMap;
use std::path::Path;

/// What happened, as PyTorch's snapshot names it (`action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SnapshotAction {
    /// `alloc`: a block was handed out (`size` is the requested bytes).
    Alloc,
    /// `free_requested`: the program freed a block.
    FreeRequested,
    /// `free_completed`: the block can be reused (the streams that used it are done).
    FreeCompleted,
    /// `segment_alloc`: memory was reserved from the device (`cudaMalloc`).
    SegmentAlloc,
    /// `segment_free`: reserved memory went back to the device (`cudaFree`).
    SegmentFree,
    /// `oom`: an allocation failed; `addr` holds the device's free bytes (PyTorch's
    /// `device_free`), or 0 where unknown.
    Oom,
}

impl SnapshotAction {
    /// The `action` string.
    fn name(self) -> &'static str {
        match self {
            SnapshotAction::Alloc => "alloc",
            SnapshotAction::FreeRequested => "free_requested",
            SnapshotAction::FreeCompleted => "free_completed",
            SnapshotAction::SegmentAlloc => "segment_alloc",
            SnapshotAction::SegmentFree => "segment_free",
            SnapshotAction::Oom => "oom",
        }
    }
}

/// One entry of `device_traces[device]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotEvent {
    /// What happened.
    pub action: SnapshotAction,
    /// The block's or segment's address; for [`SnapshotAction::Oom`], the device's free
    /// bytes (written as `device_free`).
    pub addr: u64,
    /// Bytes.
    pub size: u64,
    /// The stream (PyTorch writes the raw `cudaStream_t`; 0 is the default stream).
    pub stream: u64,
    /// Microseconds on one clock; the importer wants them in order.
    pub time_us: u64,
}

/// A memory snapshot: the recorded events per device, and the blocks live at the dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// `device_traces[d]`: the events of device `d`, in order.
    pub device_traces: Vec<Vec<SnapshotEvent>>,
    /// The segments live at the dump, of every device.
    pub segments: Vec<SnapshotSegment>,
}

/// One segment live at the dump (a pool block), with its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSegment {
    /// The device it is on.
    pub device: u32,
    /// Its first byte.
    pub address: u64,
    /// Its bytes.
    pub total_size: u64,
    /// The stream it belongs to.
    pub stream: u64,
    /// Its blocks, in address order, together covering the segment (PyTorch's viewer
    /// places each block after the ones before it, from the segment's address).
    pub blocks: Vec<SnapshotBlock>,
}

/// One block of a [`SnapshotSegment`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotBlock {
    /// Its first byte.
    pub address: u64,
    /// Its bytes (as the allocator rounded them).
    pub size: u64,
    /// The bytes the program asked for (0 for a free block).
    pub requested_size: u64,
    /// Allocated (`active_allocated`) or free (`inactive`).
    pub active: bool,
}

/// PyTorch serves requests of at most this many bytes from its small pool.
const SMALL_REQUEST: u64 = 1 << 20;

/// The shapes the pickle is written from: Python dicts in PyTorch's key order.
mod wire {
    use deser::Serialize;
    use deser::ser::Emit;
    use deser::{Error, State};

    #[derive(Serialize)]
    pub(super) struct Snapshot {
        pub segments: Vec<Segment>,
        pub device_traces: Vec<Vec<Event>>,
    }

    /// An event: `oom` has `device_free` where the others have `addr`.
    #[derive(Serialize)]
    #[deser(skip_serializing_optionals)]
    pub(super) struct Event {
        pub action: &'static str,
        pub addr: Option<u64>,
        pub device_free: Option<u64>,
        pub size: u64,
        pub stream: u64,
        pub time_us: u64,
        pub frames: Vec<()>,
    }

    #[derive(Serialize)]
    pub(super) struct Segment {
        pub device: u32,
        pub address: u64,
        pub total_size: u64,
        pub allocated_size: u64,
        pub active_size: u64,
        pub requested_size: u64,
        pub stream: u64,
        pub segment_type: &'static str,
        pub segment_pool_id: DefaultPool,
        pub is_expandable: bool,
        pub frames: Vec<()>,
        pub blocks: Vec<Block>,
    }

    #[derive(Serialize)]
    pub(super) struct Block {
        pub address: u64,
        pub size: u64,
        pub requested_size: u64,
        pub state: &'static str,
        pub frames: Vec<()>,
    }

    /// `(0, 0)`, the id of the default pool, as the Python tuple PyTorch writes.
    pub(super) struct DefaultPool;

    impl Serialize for DefaultPool {
        fn serialize<'a>(_: &'a Self, state: &mut State) -> Result<Emit<'a>, Error> {
            let emit = <(u64, u64) as Serialize>::serialize(&(0, 0), state)?;
            deser_pickle::set_kind(state, deser_pickle::Kind::Tuple);
            Ok(emit)
        }
    }
}

impl Snapshot {
    /// The pickle bytes (protocol 2 or later) PyTorch's `_dump_snapshot` would write for it.
    pub fn to_pickle(&self) -> Vec<u8> {
        let event = |e: &SnapshotEvent| {
            let oom = e.action == SnapshotAction::Oom;
            wire::Event {
                action: e.action.name(),
                addr: (!oom).then_some(e.addr),
                device_free: oom.then_some(e.addr),
                size: e.size,
                stream: e.stream,
                time_us: e.time_us,
                frames: Vec::new(),
            }
        };
        let segment = |s: &SnapshotSegment| {
            let active = || s.blocks.iter().filter(|b| b.active);
            let allocated: u64 = active().map(|b| b.size).sum();
            wire::Segment {
                device: s.device,
                address: s.address,
                total_size: s.total_size,
                allocated_size: allocated,
                active_size: allocated,
                requested_size: active().map(|b| b.requested_size).sum(),
                stream: s.stream,
                segment_type: if s.total_size <= SMALL_REQUEST { "small" } else { "large" },
                segment_pool_id: wire::DefaultPool,
                is_expandable: false,
                frames: Vec::new(),
                blocks: s
                    .blocks
                    .iter()
                    .map(|b| wire::Block {
                        address: b.address,
                        size: b.size,
                        requested_size: b.requested_size,
                        state: if b.active { "active_allocated" } else { "inactive" },
                        frames: Vec::new(),
                    })
                    .collect(),
            }
        };
        let wire = wire::Snapshot {
            segments: self.segments.iter().map(segment).collect(),
            device_traces: self.device_traces.iter().map(|t| t.iter().map(event).collect()).collect(),
        };
        // Dicts, lists, ints, strings and a tuple of ints at protocol 4: nothing the
        // serializer can refuse.
        deser_pickle::to_vec(&wire).expect("plain Python values always serialize")
    }

    /// Writes `to_pickle()` to `path`; an unwritable path is an Err with a reason naming the path.
    ///
    /// # Errors
    ///
    /// `cannot write PATH: REASON` when the file cannot be created or written (a missing
    /// folder, a folder at `path`, no permission, a full disk, ...).
    pub fn write_file(&self, path: &Path) -> Result<(), String> {
        std::fs::write(path, self.to_pickle()).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// A project trace as a snapshot of device 0: each allocate row an `alloc` event, each
    /// free row `free_requested` then `free_completed`, allocation failures `oom`, times
    /// from the rows (ns → µs), the trace's stream ids; `segments` holds the allocations
    /// still live at the end.
    ///
    /// A trace does not say what the pool reserved, so each allocation is a segment of
    /// its own: a `segment_alloc` of the allocation's address and size comes right before
    /// its `alloc`, and a `segment_free` right after its `free_completed`. With them every
    /// view of PyTorch's viewer finds each live block inside a live segment at every
    /// event; the importer drops them. The other rows (`record`, `wait`, synchronization)
    /// have no snapshot event. Times are the rows' nanoseconds divided by 1000, rounded
    /// down; a row earlier than the event before it (threads recording out of order) keeps
    /// that event's time, so times never decrease. An `oom` has 0 free bytes (unknown).
    /// Each live allocation's segment holds one active block of its requested size;
    /// segments are in address order.
    pub fn from_trace(trace: &Trace) -> Snapshot {
        use SnapshotAction::*;
        let mut events = Vec::with_capacity(trace.rows.len() * 3);
        // Live allocations: address -> (size, stream).
        let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut last_us = 0u64;
        for row in &trace.rows {
            let time_us = (row.time_ns / 1000).max(last_us);
            let mut push = |action, addr, size, stream| {
                events.push(SnapshotEvent { action, addr, size, stream, time_us });
                last_us = time_us;
            };
            match row.op {
                Op::Allocate { ptr, size, stream } => {
                    push(SegmentAlloc, ptr, size, stream);
                    push(Alloc, ptr, size, stream);
                    live.insert(ptr, (size, stream));
                }
                Op::Free { ptr, size, stream } => {
                    push(FreeRequested, ptr, size, stream);
                    push(FreeCompleted, ptr, size, stream);
                    // The segment is on the stream it was allocated on.
                    let seg_stream = live.remove(&ptr).map_or(stream, |(_, s)| s);
                    push(SegmentFree, ptr, size, seg_stream);
                }
                Op::AllocateFailure { size, stream } => push(Oom, 0, size, stream),
                Op::Record { .. } | Op::Wait { .. } | Op::SyncStream { .. } | Op::SyncEvent { .. } | Op::SyncDevice => {
                }
            }
        }
        let mut at_end: Vec<(u64, (u64, u64))> = live.into_iter().collect();
        at_end.sort_unstable_by_key(|&(ptr, _)| ptr);
        let segments = at_end
            .into_iter()
            .map(|(ptr, (size, stream))| SnapshotSegment {
                device: 0,
                address: ptr,
                total_size: size,
                stream,
                blocks: vec![SnapshotBlock { address: ptr, size, requested_size: size, active: true }],
            })
            .collect();
        Snapshot { device_traces: vec![events], segments }
    }
}

#[cfg(test)]
mod tests;
