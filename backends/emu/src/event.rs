//! Events: a recorded point of a stream, with the vector clock of that point.

use crate::clock::Clock;
use crate::stream::{StreamShared, lock};
use crate::sync::{Arc, AtomicBool, Instant, Mutex, OnceLock, Ordering};
use mempool_hal::{Error, Result};
use std::fmt;

/// The latest record of an event.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) stream: Arc<StreamShared>,
    /// The record's position on its stream.
    pub(crate) pos: u64,
    /// The last real operation before the record: the event completes with it.
    pub(crate) dep_real: u64,
    /// The recording stream's clock at the record, shared with it: with the record's own
    /// point ([`Record::point`]), everything ordered before the record.
    pub(crate) clock: Arc<Clock>,
    /// When the recorded point was reached (set once it completes).
    pub(crate) stamp: Arc<OnceLock<Instant>>,
}

impl Record {
    /// The recorded point: its stream and position.
    pub(crate) fn point(&self) -> (u64, u64) {
        (self.stream.id, self.pos)
    }

    pub(crate) fn complete(&self) -> bool {
        self.stream.completed() >= self.dep_real
    }
}

/// One event, shared by its handles.
#[derive(Debug)]
pub(crate) struct EventShared {
    pub(crate) id: u64,
    pub(crate) device: u32,
    pub(crate) platform: u64,
    destroyed: AtomicBool,
    record: Mutex<Option<Record>>,
}

impl EventShared {
    pub(crate) fn new(id: u64, device: u32, platform: u64) -> EventShared {
        EventShared { id, device, platform, destroyed: AtomicBool::new(false), record: Mutex::new(None) }
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// Marks the event destroyed; `false` if it already was.
    pub(crate) fn mark_destroyed(&self) -> bool {
        !self.destroyed.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn record(&self) -> Option<Record> {
        lock(&self.record).clone()
    }

    pub(crate) fn set_record(&self, r: Record) {
        *lock(&self.record) = Some(r);
    }

    /// Forgets the latest record: the event is as if never recorded.
    pub(crate) fn clear_record(&self) {
        *lock(&self.record) = None;
    }
}

/// An event of the emulator. Clones name the same event.
#[derive(Clone)]
pub struct EmuEvent {
    pub(crate) shared: Arc<EventShared>,
}

impl fmt::Debug for EmuEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event").field("id", &self.shared.id).field("device", &self.shared.device).finish()
    }
}

impl EmuEvent {
    /// The event's id (unique within its platform, never reused).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The event's state, when it is a live event of the platform with id `platform`.
    ///
    /// # Errors
    ///
    /// A destroyed event, or one of another platform: `InvalidHandle` (107017).
    pub(crate) fn live(&self, platform: u64, op: &'static str) -> Result<&Arc<EventShared>> {
        let e = &self.shared;
        if e.platform != platform || e.is_destroyed() {
            return Err(Error::stale_handle(op, format_args!("event {}", e.id)));
        }
        Ok(e)
    }
}
