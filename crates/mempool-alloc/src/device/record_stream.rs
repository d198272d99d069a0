//! Record-stream: the streams other than its own that used an allocation
//! (`mempool_record_stream`), and the frees that wait for them. A free of memory that other
//! streams used records an event on each of them and waits; the waiting frees are completed
//! (released in the layer) once their events are, at the next call or at `empty_cache`.

use super::{Backend, DevicePool, Inner};
use crate::error::AllocError;
use crate::history;
use mempool_hal::EventStatus;
use mempool_trace::snapshot::SnapshotAction;
use std::hash::Hash;

/// A free waiting for the events recorded on the streams that used the memory.
pub(super) struct Deferred<E> {
    pub(super) ptr: u64,
    pub(super) size: u64,
    stream: usize,
    /// The free or one of the uses is on the library's own NULL stream of a backend whose
    /// NULL is synchronous (Ascend): the device is synchronized before the release.
    sync_first: bool,
    events: Vec<E>,
}

impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    pub(super) fn record_stream_here(&self, ptr: u64, raw: usize) -> Result<bool, AllocError> {
        let mut inner = self.lock();
        match inner.live.get(&ptr) {
            None => return Ok(false),
            Some(l) if l.stream == raw || l.uses.contains(&raw) => return Ok(true),
            Some(_) => {}
        }
        // Check the stream now, so that the free does not meet a stream it cannot use.
        self.stream(&mut inner, raw)?;
        if let Some(l) = inner.live.get_mut(&ptr) {
            l.uses.push(raw);
        }
        Ok(true)
    }

    /// Frees `ptr` (`size` bytes, freed on stream `raw`) once the streams in `uses` are
    /// done with it: an event recorded on each (taken from the spare ones where it can), the
    /// free waiting with them.
    pub(super) fn defer_free(
        &self,
        inner: &mut Inner<D>,
        ptr: u64,
        size: u64,
        raw: usize,
        uses: Vec<usize>,
    ) -> Result<(), AllocError> {
        let sync_first = Self::synchronous(raw) || uses.iter().any(|&u| Self::synchronous(u));
        let mut events = Vec::with_capacity(uses.len());
        for u in uses {
            let recorded = (|| {
                let us = self.stream(inner, u)?;
                let ev = match inner.spare.pop() {
                    Some(ev) => ev,
                    None => self.dev.create_event()?,
                };
                if let Err(e) = self.dev.record_event(&ev, &us) {
                    inner.spare.push(ev);
                    return Err(AllocError::from(e));
                }
                Ok(ev)
            })();
            match recorded {
                Ok(ev) => events.push(ev),
                Err(e) => {
                    inner.spare.extend(events);
                    return Err(e);
                }
            }
        }
        inner.live.remove(&ptr);
        inner.deferred.push(Deferred { ptr, size, stream: raw, sync_first, events });
        history::record(self.index, SnapshotAction::FreeRequested, ptr, size, raw);
        Ok(())
    }

    /// Frees the deferred frees whose events are complete (all of them, waiting, when
    /// `wait`).
    pub(super) fn poll_deferred(&self, inner: &mut Inner<D>, wait: bool) -> Result<(), AllocError> {
        let mut first: Option<AllocError> = None;
        let mut i = 0;
        while i < inner.deferred.len() {
            // A free that cannot be completed now (its stream destroyed by the framework, an
            // event that fails) stays waiting, with its events; the others go on.
            match self.complete_deferred(inner, i, wait) {
                Ok(true) => {}
                Ok(false) => i += 1,
                Err(e) => {
                    first.get_or_insert(e);
                    i += 1;
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Completes deferred free `i` if its events are complete (waiting for them when
    /// `wait`): `true` when it was released and removed.
    fn complete_deferred(&self, inner: &mut Inner<D>, i: usize, wait: bool) -> Result<bool, AllocError> {
        for e in &inner.deferred[i].events {
            if wait {
                self.dev.synchronize_event(e)?;
            } else if self.dev.query_event(e)? == EventStatus::NotReady {
                return Ok(false);
            }
        }
        let (ptr, size, raw, sync_first) = {
            let d = &inner.deferred[i];
            (d.ptr, d.size, d.stream, d.sync_first)
        };
        let s = self.stream(inner, raw)?;
        if sync_first {
            self.dev.synchronize_device()?;
        }
        self.release(ptr, &s, false)?;
        history::record(self.index, SnapshotAction::FreeCompleted, ptr, size, raw);
        let d = inner.deferred.swap_remove(i);
        inner.spare.extend(d.events);
        Ok(true)
    }
}
