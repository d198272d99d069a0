//! The out-of-memory path: the memory fraction's cap, making room after an
//! out-of-memory answer (wait for the device, complete the waiting frees, give the layer's
//! empty blocks back, trim the pool to USED), one retry, and the counters and history entry
//! of a failure.

use super::{Backend, DevicePool, Inner};
use crate::error::AllocError;
use crate::history;
use mempool_hal::attr::UsedMemCurrent;
use mempool_hal::{ErrorKind, MemPool, MemPoolExt};
use mempool_trace::snapshot::SnapshotAction;
use std::hash::Hash;
use std::sync::atomic::Ordering;

/// The cap of `fraction` of `total` bytes.
pub(super) fn cap(fraction: f64, total: u64) -> u64 {
    ((total as f64) * fraction).floor().max(1.0) as u64
}

/// Whether `e` is an out-of-memory answer (the library's own or the backend's).
pub(super) fn is_oom(e: &AllocError) -> bool {
    match e {
        AllocError::OutOfMemory { .. } => true,
        AllocError::Backend(e) => e.kind() == ErrorKind::OutOfMemory,
        _ => false,
    }
}

impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    /// After an out-of-memory answer to `size` bytes on `s` (raw handle `raw`): makes room
    /// and retries once; a second failure is counted, recorded in the history and answered
    /// as out of memory, with the pool left within its cap again.
    pub(super) fn retry_after_oom(
        &self,
        inner: &mut Inner<D>,
        size: u64,
        s: &D::Stream,
        raw: usize,
    ) -> Result<u64, AllocError> {
        self.oom_retries.fetch_add(1, Ordering::Relaxed);
        // Best effort: a step that fails still leaves the retry and the observers.
        let _ = self.make_room(inner, false);
        match self.try_alloc(size, s) {
            Ok(p) => Ok(p),
            Err(e) => {
                self.oom_count.fetch_add(1, Ordering::Relaxed);
                history::record(self.index, SnapshotAction::Oom, 0, size, raw);
                // Leave the pool within its cap again (best effort).
                let _ = self.make_room(inner, false);
                Err(match e {
                    AllocError::Backend(b) => {
                        AllocError::OutOfMemory { device: self.index, size, why: format!(": {b}") }
                    }
                    e => e,
                })
            }
        }
    }

    pub(super) fn over_cap(&self, size: u64, limit: u64, reserved: u64) -> AllocError {
        AllocError::OutOfMemory {
            device: self.index,
            size,
            why: format!("; the memory fraction caps the pool at {limit} bytes, and it would reserve {reserved}"),
        }
    }

    /// Makes room after an out-of-memory answer: waits for the device, takes in the frees
    /// waiting for streams, gives the layer's empty blocks back and trims the pool to USED.
    pub(super) fn make_room(&self, inner: &mut Inner<D>, check: bool) -> Result<(), AllocError> {
        let mut first: Option<AllocError> = None;
        let mut step = |r: Result<(), AllocError>| -> Result<(), AllocError> {
            match r {
                Err(e) if check => Err(e),
                Err(e) => {
                    first.get_or_insert(e);
                    Ok(())
                }
                Ok(()) => Ok(()),
            }
        };
        step(self.dev.synchronize_device().map_err(AllocError::from))?;
        step(self.poll_deferred(inner, true))?;
        step(self.layer.release_empty().map(drop).map_err(AllocError::from))?;
        step(self.dev.synchronize_device().map_err(AllocError::from))?;
        step((|| Ok(self.layer.trim_to(self.pool.get(UsedMemCurrent)?)?))())?;
        first.map_or(Ok(()), Err)
    }
}
