//! The allocation history behind `mempool_dump_snapshot`: off until switched on
//! (`mempool_record_history`, `MEMPOOL_ALLOC_HISTORY`), as PyTorch's
//! `_record_memory_history`; then the last `max_entries` events of each device are kept, as
//! a memory snapshot's `device_traces` hold them. Off, a call costs one relaxed atomic load.

use mempool_trace::snapshot::{Snapshot, SnapshotAction, SnapshotBlock, SnapshotEvent, SnapshotSegment};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many events each device keeps; 0: recording is off.
static MAX: AtomicUsize = AtomicUsize::new(0);

/// The recorded events, per device.
static EVENTS: Mutex<Vec<VecDeque<SnapshotEvent>>> = Mutex::new(Vec::new());

/// Switches recording on, keeping the last `max_entries` events of each device, or off
/// (0), which forgets what was recorded.
pub(crate) fn set(max_entries: usize) {
    let mut events = EVENTS.lock().unwrap_or_else(PoisonError::into_inner);
    MAX.store(max_entries, Ordering::Relaxed);
    if max_entries == 0 {
        events.clear();
    }
    for ring in events.iter_mut() {
        while ring.len() > max_entries {
            ring.pop_front();
        }
    }
}

/// Whether events are recorded.
#[inline]
pub(crate) fn on() -> bool {
    MAX.load(Ordering::Relaxed) != 0
}

/// Records an event of `device` when recording is on.
#[inline]
pub(crate) fn record(device: i64, action: SnapshotAction, addr: u64, size: u64, stream: usize) {
    if on() {
        push(device, action, addr, size, stream);
    }
}

#[cold]
fn push(device: i64, action: SnapshotAction, addr: u64, size: u64, stream: usize) {
    let Ok(device) = usize::try_from(device) else { return };
    let time_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
    let event = SnapshotEvent { action, addr, size, stream: stream as u64, time_us };
    let mut events = EVENTS.lock().unwrap_or_else(PoisonError::into_inner);
    let max = MAX.load(Ordering::Relaxed);
    if max == 0 {
        return;
    }
    if events.len() <= device {
        events.resize_with(device + 1, VecDeque::new);
    }
    let ring = &mut events[device];
    // Each allocation is its own segment, as in `Snapshot::from_trace`: PyTorch's viewer
    // looks up the segment of every live block at each event.
    let segment = |action| SnapshotEvent { action, addr, size, stream: stream as u64, time_us };
    let (before, after) = match action {
        SnapshotAction::Alloc => (Some(segment(SnapshotAction::SegmentAlloc)), None),
        SnapshotAction::FreeCompleted => (None, Some(segment(SnapshotAction::SegmentFree))),
        _ => (None, None),
    };
    for e in before.into_iter().chain(Some(event)).chain(after) {
        if ring.len() == max {
            ring.pop_front();
        }
        ring.push_back(e);
    }
}

/// A live allocation at the dump: its device, address, size and stream.
pub(crate) struct LiveBlock {
    pub(crate) device: u32,
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) stream: usize,
}

/// The snapshot of what was recorded, with the allocations live now as its segments (one
/// segment and one active block per allocation, as the recorded `segment_alloc` and
/// `segment_free` events have it: the pool's own blocks are the backend's).
pub(crate) fn snapshot(live: Vec<LiveBlock>) -> Snapshot {
    let device_traces =
        EVENTS.lock().unwrap_or_else(PoisonError::into_inner).iter().map(|r| r.iter().cloned().collect()).collect();
    let segments = live
        .into_iter()
        .map(|b| SnapshotSegment {
            device: b.device,
            address: b.addr,
            total_size: b.size,
            stream: b.stream as u64,
            blocks: vec![SnapshotBlock { address: b.addr, size: b.size, requested_size: b.size, active: true }],
        })
        .collect();
    Snapshot { device_traces, segments }
}
