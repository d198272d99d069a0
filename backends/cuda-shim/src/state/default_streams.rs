//! The default streams of each device and their implicit order.
//!
//! As the driver documents them: **the legacy default stream** (the NULL handle and
//! `CU_STREAM_LEGACY`, 0x1) is one stream per device whose work waits for all work enqueued
//! before it on every *blocking* stream of the device (those created with
//! `CU_STREAM_DEFAULT`, and the per-thread default streams), and work enqueued on a
//! blocking stream waits for the legacy stream's work enqueued before it. Streams created
//! with `CU_STREAM_NON_BLOCKING` take no part in it, in either direction. **The per-thread
//! default stream** (`CU_STREAM_PER_THREAD`, 0x2) is one blocking stream per host thread
//! and device, made at its first use and destroyed (its queued work still runs) when the
//! thread ends; it does not synchronize with other threads' per-thread streams.
//!
//! The implicit order is made of the emulator's own ordering, so its stream-order checker
//! sees exactly what the driver would order: every call that enqueues (copies, memsets,
//! host functions, event records, event waits, pool allocations and frees) goes through
//! [`Shim::enqueue`], which, under a lock of the stream's device,
//!
//! - before work on the legacy stream: for each blocking stream with work the legacy
//!   stream has not waited for yet, records an internal event at that stream's end and
//!   makes the legacy stream wait for it;
//! - before work on a blocking stream: if the legacy stream has had work enqueued since
//!   this stream last waited for it, makes it wait for an internal event recorded at the
//!   legacy stream's end (recorded once per new legacy operation, shared by every blocking
//!   stream that needs it);
//! - then enqueues the work itself and notes it (a count for the legacy stream, a flag and
//!   a list entry for a blocking stream).
//!
//! So a call that finds nothing new on the other side costs one uncontended lock and no
//! emulator call; one that must wait costs one record and one event wait per stream it
//! waits for, and only on the first call after new work there. Work on a non-blocking
//! stream takes neither the lock nor any wait. A blocking stream destroyed with work the
//! legacy stream has not waited for yet makes the legacy stream wait for that work at once
//! (later legacy work must still wait for it), after recording the legacy stream's end for
//! the blocking streams that have not caught up, so they do not wait for the destroyed
//! stream too.
//!
//! Host synchronizations and queries (`cuStreamSynchronize`, `cuStreamQuery`) enqueue
//! nothing: on the legacy stream they wait for, or ask about, the work enqueued on it and
//! what that work waits for, not blocking-stream work enqueued since. A call refused after
//! its stream was resolved may leave the implicit wait it made in place; it orders nothing
//! that the next call on that stream would not.

use super::{SHIM, Shim, StreamEntry, lock};
use crate::ffi::{CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE, err};
use mempool_emu::{EmuEvent, EmuStream, Emulator};
use mempool_hal::{Device, Result};
use std::cell::RefCell;
use std::collections::HashMap;

/// How a stream takes part in the implicit order of its device's legacy default stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// The legacy default stream (the NULL handle, `CU_STREAM_LEGACY`).
    Legacy,
    /// A stream created with `CU_STREAM_DEFAULT`, or a per-thread default stream
    /// (`CU_STREAM_PER_THREAD`): it and the legacy stream wait for each other's earlier
    /// work.
    Blocking,
    /// A stream created with `CU_STREAM_NON_BLOCKING`: no implicit order.
    NonBlocking,
}

/// A blocking stream of a device, as [`Order`] follows it.
struct Blocking {
    stream: EmuStream,
    /// It has work the legacy stream has not waited for (its id is then in
    /// [`Order::unseen`]).
    unseen: bool,
    /// [`Order::legacy_ops`] when it last waited for the legacy stream's end (0: never).
    legacy_seen: u64,
}

/// The implicit order between one device's legacy default stream and its blocking streams
/// (see the module docs), under the device's lock.
#[derive(Default)]
pub(super) struct Order {
    /// How many operations have been enqueued on the legacy stream.
    legacy_ops: u64,
    /// `legacy_ops` when the tail event was last recorded on the legacy stream (0: never).
    tail_at: u64,
    /// The internal events (made at the first need): the tail event, recorded at the
    /// legacy stream's end for blocking streams to wait for, and a scratch event, recorded
    /// at a blocking stream's end and waited for by the legacy stream at once.
    events: Option<(EmuEvent, EmuEvent)>,
    /// The live blocking streams, by the emulator's stream id.
    blocking: HashMap<u64, Blocking>,
    /// The ids of the blocking streams with work the legacy stream has not waited for (a
    /// stream destroyed since is skipped).
    unseen: Vec<u64>,
}

impl Order {
    fn events(&mut self, dev: &Emulator) -> Result<(EmuEvent, EmuEvent)> {
        if let Some(e) = &self.events {
            return Ok(e.clone());
        }
        let e = (dev.create_event()?, dev.create_event()?);
        Ok(self.events.insert(e).clone())
    }

    /// The tail event, recorded at the legacy stream's end since its last operation.
    fn tail(&mut self, dev: &Emulator, legacy: &EmuStream) -> Result<EmuEvent> {
        let (tail, _) = self.events(dev)?;
        if self.tail_at != self.legacy_ops {
            dev.record_event(&tail, legacy)?;
            self.tail_at = self.legacy_ops;
        }
        Ok(tail)
    }

    /// Makes `legacy` wait for the end of every blocking stream with work it has not
    /// waited for.
    fn legacy_waits(&mut self, dev: &Emulator, legacy: &EmuStream) -> Result<()> {
        if self.unseen.is_empty() {
            return Ok(());
        }
        let (_, scratch) = self.events(dev)?;
        while let Some(&id) = self.unseen.last() {
            if let Some(b) = self.blocking.get_mut(&id) {
                dev.record_event(&scratch, &b.stream)?;
                dev.stream_wait_event(legacy, &scratch)?;
                b.unseen = false;
            }
            self.unseen.pop();
        }
        Ok(())
    }

    /// Notes work enqueued on the blocking stream `id`.
    fn blocking_enqueued(&mut self, id: u64) {
        if let Some(b) = self.blocking.get_mut(&id)
            && !b.unseen
        {
            b.unseen = true;
            self.unseen.push(id);
        }
    }
}

thread_local! {
    /// This thread's per-thread default streams, one per device that it has used
    /// `CU_STREAM_PER_THREAD` on.
    static PER_THREAD: RefCell<PerThread> = const { RefCell::new(PerThread(Vec::new())) };
}

/// A thread's per-thread default streams (device, stream): destroyed when the thread
/// ends, as [`Shim::retire`] destroys a blocking stream (its queued work still runs, and
/// later legacy work waits for it).
struct PerThread(Vec<(u32, EmuStream)>);

impl Drop for PerThread {
    fn drop(&mut self) {
        if let Some(Ok(s)) = SHIM.get() {
            for (device, stream) in self.0.drain(..) {
                let entry = StreamEntry { device, stream, kind: StreamKind::Blocking, context: 0, flags: 0, id: 2 };
                let _ = s.retire(&entry, "thread exit");
            }
        }
    }
}

impl Shim {
    /// The legacy default stream of `device` (what the NULL stream and
    /// `CU_STREAM_LEGACY` mean there).
    pub(super) fn default_stream(&self, device: u32) -> Result<EmuStream> {
        let slot = &self.default_streams[device as usize];
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        // Created under the device's setup lock, once: a stream made by a thread that then
        // loses the race would keep a worker thread nobody destroys.
        let _setup = lock(&self.setup[device as usize]);
        if let Some(s) = slot.get() {
            return Ok(s.clone());
        }
        let s = self.dev(device).create_stream()?;
        Ok(slot.get_or_init(|| s).clone())
    }

    /// The calling thread's per-thread default stream of `device`, made at its first use.
    pub(super) fn per_thread_stream(&self, device: u32, op: &'static str) -> Result<EmuStream> {
        let exiting = || err(CUDA_ERROR_INVALID_CONTEXT, op, "the calling thread is exiting");
        PER_THREAD
            .try_with(|p| {
                if let Some((_, st)) = p.borrow().0.iter().find(|(d, _)| *d == device) {
                    return Ok(st.clone());
                }
                let st = self.dev(device).create_stream().map_err(|e| e.with_op(op))?;
                self.adopt(device, &st);
                p.borrow_mut().0.push((device, st.clone()));
                Ok(st)
            })
            .map_err(|_| exiting())?
    }

    /// Makes a stream just created on `device` one of its blocking streams.
    pub(crate) fn adopt(&self, device: u32, stream: &EmuStream) {
        let b = Blocking { stream: stream.clone(), unseen: false, legacy_seen: 0 };
        lock(&self.orders[device as usize]).blocking.insert(stream.id(), b);
    }

    /// Destroys the stream of `e` (its queued work still runs). A blocking stream with work
    /// the legacy stream has not waited for makes the legacy stream wait for it first.
    pub(crate) fn retire(&self, e: &StreamEntry, op: &'static str) -> Result<()> {
        let dev = self.dev(e.device);
        if e.kind != StreamKind::Blocking {
            return dev.destroy_stream(&e.stream).map_err(|x| x.with_op(op));
        }
        let mut o = lock(&self.orders[e.device as usize]);
        let mut ordered = Ok(());
        if o.blocking.remove(&e.stream.id()).is_some_and(|b| b.unseen) {
            ordered = (|| {
                let legacy = self.default_stream(e.device)?;
                if o.legacy_ops > 0 {
                    // The blocking streams that have not caught up with the legacy stream
                    // wait for its end as it is now, without this stream's work.
                    o.tail(dev, &legacy)?;
                }
                let (_, scratch) = o.events(dev)?;
                dev.record_event(&scratch, &e.stream)?;
                dev.stream_wait_event(&legacy, &scratch)
            })();
        }
        // Under the lock: an enqueue on this stream either came first (and is ordered
        // above) or finds it destroyed.
        let destroyed = dev.destroy_stream(&e.stream);
        ordered.and(destroyed).map_err(|x| x.with_op(op))
    }

    /// The one way work is enqueued on a stream: runs `f`, which enqueues on `e`'s stream,
    /// with the implicit order of the legacy default stream before it (module docs), and
    /// notes the work when `f` succeeds. A non-blocking stream runs `f` alone.
    ///
    /// # Errors
    ///
    /// `f`'s; a blocking stream destroyed meanwhile: `CUDA_ERROR_INVALID_HANDLE`.
    pub(crate) fn enqueue<T>(&self, e: &StreamEntry, op: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if e.kind == StreamKind::NonBlocking {
            return f();
        }
        let dev = self.dev(e.device);
        let mut o = lock(&self.orders[e.device as usize]);
        if e.kind == StreamKind::Legacy {
            o.legacy_waits(dev, &e.stream).map_err(|x| x.with_op(op))?;
            let r = f()?;
            o.legacy_ops += 1;
            return Ok(r);
        }
        let id = e.stream.id();
        let Some(seen) = o.blocking.get(&id).map(|b| b.legacy_seen) else {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, op, format!("stream {id} was destroyed")));
        };
        if o.legacy_ops > seen {
            // Work on the legacy stream exists, so the stream does.
            let legacy = self.default_stream(e.device).map_err(|x| x.with_op(op))?;
            let tail = o.tail(dev, &legacy).map_err(|x| x.with_op(op))?;
            dev.stream_wait_event(&e.stream, &tail).map_err(|x| x.with_op(op))?;
            let now = o.legacy_ops;
            if let Some(b) = o.blocking.get_mut(&id) {
                b.legacy_seen = now;
            }
        }
        let r = f()?;
        o.blocking_enqueued(id);
        Ok(r)
    }
}
