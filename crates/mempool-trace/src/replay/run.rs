//! The replay loop, over a [`Target`]: the emulator's pool (alone or through the
//! small-block layer), or a null pool that measures the loop itself.
//!
//! The loop hashes nothing and reads no row: the trace is [resolved](crate::resolve) first
//! into compact steps (kind, size, indices). It reads the clock twice for the whole loop
//! plus twice per timed row (1 row in [`TIMED_ONE_IN`] of each kind), branches on the two
//! common kinds (allocate, free) before any other, and reads the pool's statistics per row
//! only when the samples are asked for.

use super::{OpTime, ReplayError, Sample};
use crate::format::{Op, Trace};
use crate::resolve::{
    ALLOCATE, ALLOCATE_FAILURE, FIRST_OF_KIND, FREE, HAS_EVENT, HAS_STREAM, KINDS, NEW_HANDLES, RECORD, Resolved,
    SYNC_EVENT, SYNC_STREAM, Step, WAIT,
};
use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator};
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt};
use mempool_small::SmallBlocks;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// What a replay runs against: streams, events, and a pool's allocate and free.
pub(super) trait Target {
    /// A stream handle.
    type Stream;
    /// An event handle.
    type Event;
    fn stream(&self) -> mempool_hal::Result<Self::Stream>;
    fn event(&self) -> mempool_hal::Result<Self::Event>;
    fn malloc(&self, size: u64, s: &Self::Stream) -> mempool_hal::Result<DevicePtr>;
    fn free(&self, p: DevicePtr, s: &Self::Stream) -> mempool_hal::Result<()>;
    fn record(&self, e: &Self::Event, s: &Self::Stream) -> mempool_hal::Result<()>;
    fn wait(&self, s: &Self::Stream, e: &Self::Event) -> mempool_hal::Result<()>;
    fn sync_stream(&self, s: &Self::Stream) -> mempool_hal::Result<()>;
    fn sync_event(&self, e: &Self::Event) -> mempool_hal::Result<()>;
    fn sync_device(&self) -> mempool_hal::Result<()>;
    /// USED and RESERVED now.
    fn usage(&self) -> mempool_hal::Result<(u64, u64)>;
}

/// The emulator's pool, straight or through a small-block layer.
pub(super) struct Emu<'a, 'b> {
    pub emu: &'a Emulator,
    pub pool: &'a EmuPool,
    pub small: Option<&'b SmallBlocks<'a, Emulator>>,
}

impl Target for Emu<'_, '_> {
    type Stream = EmuStream;
    type Event = EmuEvent;
    fn stream(&self) -> mempool_hal::Result<EmuStream> {
        self.emu.create_stream()
    }
    fn event(&self) -> mempool_hal::Result<EmuEvent> {
        self.emu.create_event()
    }
    #[inline]
    fn malloc(&self, size: u64, s: &EmuStream) -> mempool_hal::Result<DevicePtr> {
        match self.small {
            Some(l) => l.malloc_async(size, s),
            None => self.pool.malloc_async(size, s),
        }
    }
    #[inline]
    fn free(&self, p: DevicePtr, s: &EmuStream) -> mempool_hal::Result<()> {
        match self.small {
            #[allow(unsafe_code)]
            // SAFETY: `p` is a live allocation the layer handed out; the replay enqueues no
            // work on device memory, so there is no use to order before the free.
            Some(l) => unsafe { l.free_async(p, s) },
            None => self.pool.free(p, s),
        }
    }
    fn record(&self, e: &EmuEvent, s: &EmuStream) -> mempool_hal::Result<()> {
        self.emu.record_event(e, s)
    }
    fn wait(&self, s: &EmuStream, e: &EmuEvent) -> mempool_hal::Result<()> {
        self.emu.stream_wait_event(s, e)
    }
    fn sync_stream(&self, s: &EmuStream) -> mempool_hal::Result<()> {
        self.emu.synchronize_stream(s)
    }
    fn sync_event(&self, e: &EmuEvent) -> mempool_hal::Result<()> {
        self.emu.synchronize_event(e)
    }
    fn sync_device(&self) -> mempool_hal::Result<()> {
        self.emu.synchronize_device()
    }
    fn usage(&self) -> mempool_hal::Result<(u64, u64)> {
        let st = self.pool.stats()?;
        Ok((st.used_current, st.reserved_current))
    }
}

/// A pool that does nothing: an allocation is the next address of a bump pointer (256-byte
/// aligned), a free forgets it, streams and events are nothing, and USED and RESERVED stay 0.
pub(super) struct Null {
    next: Cell<u64>,
}

impl Null {
    pub fn new() -> Null {
        Null { next: Cell::new(256) }
    }
}

impl Target for Null {
    type Stream = ();
    type Event = ();
    fn stream(&self) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn event(&self) -> mempool_hal::Result<()> {
        Ok(())
    }
    #[inline]
    fn malloc(&self, size: u64, _: &()) -> mempool_hal::Result<DevicePtr> {
        let at = self.next.get();
        self.next.set(at.wrapping_add(size.max(1).div_ceil(256).wrapping_mul(256)));
        Ok(DevicePtr::from_addr(std::hint::black_box(at)))
    }
    #[inline]
    fn free(&self, p: DevicePtr, _: &()) -> mempool_hal::Result<()> {
        std::hint::black_box(p);
        Ok(())
    }
    fn record(&self, _: &(), _: &()) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn wait(&self, _: &(), _: &()) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn sync_stream(&self, _: &()) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn sync_event(&self, _: &()) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn sync_device(&self) -> mempool_hal::Result<()> {
        Ok(())
    }
    fn usage(&self) -> mempool_hal::Result<(u64, u64)> {
        Ok((0, 0))
    }
}

/// One call in this many of each kind is timed (after the first, which always is).
pub const TIMED_ONE_IN: u64 = 64;

/// Whether row `i` is timed: the fractional part of `i` times the golden ratio falls in the
/// first 1/[`TIMED_ONE_IN`] (a Weyl sequence: about one row in 64, spread evenly, with no
/// period a trace's own repetitions could line up with).
#[inline]
fn timed(i: usize) -> bool {
    const SHIFT: u32 = 64 - TIMED_ONE_IN.trailing_zeros();
    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> SHIFT == 0
}

/// A kind's timed calls: how many, and the estimate of the total time of all its calls.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    timed: u64,
    /// Each timed call's nanoseconds over the chance it had to be timed (1 for a kind's
    /// first call, 1/[`TIMED_ONE_IN`] after): an unbiased estimate of the kind's total.
    estimate_ns: u64,
}

/// Why a row failed.
enum Failure {
    Hal(mempool_hal::Error),
    /// A free of a pointer that is not live (the row says which).
    UnknownFree,
}

impl From<mempool_hal::Error> for Failure {
    fn from(e: mempool_hal::Error) -> Self {
        Failure::Hal(e)
    }
}

/// What the loop measured.
pub(super) struct Outcome {
    pub samples: Vec<Sample>,
    pub times: Vec<OpTime>,
    pub total: Duration,
    pub skipped_failures: u64,
}

/// Row `step`'s call: allocate and free inline, the rest out of line.
#[inline(always)]
fn call<T: Target>(
    t: &T,
    step: Step,
    streams: &[T::Stream],
    events: &[T::Event],
    slots: &mut [Option<DevicePtr>],
    skipped: &mut u64,
) -> Result<(), Failure> {
    if step.kind == ALLOCATE {
        slots[step.aux as usize] = Some(t.malloc(step.size, &streams[step.stream as usize])?);
    } else if step.kind == FREE {
        let p = slots.get_mut(step.aux as usize).and_then(Option::take).ok_or(Failure::UnknownFree)?;
        t.free(p, &streams[step.stream as usize])?;
    } else {
        call_other(t, step, streams, events, skipped)?;
    }
    Ok(())
}

/// The call of a row that neither allocates nor frees.
#[cold]
#[inline(never)]
fn call_other<T: Target>(
    t: &T,
    step: Step,
    streams: &[T::Stream],
    events: &[T::Event],
    skipped: &mut u64,
) -> Result<(), Failure> {
    let s = || &streams[step.stream as usize];
    let e = || &events[step.aux as usize];
    match step.kind {
        ALLOCATE_FAILURE => *skipped += 1,
        RECORD => t.record(e(), s())?,
        WAIT => t.wait(s(), e())?,
        SYNC_STREAM => t.sync_stream(s())?,
        SYNC_EVENT => t.sync_event(e())?,
        _ => t.sync_device()?,
    }
    Ok(())
}

/// Replays the rows of `trace` (resolved as `r`) against `t`, calling `progress(rows_done)`
/// every 1024 rows and at the end. With `samples`, USED, RESERVED and the live requested
/// bytes after each row are kept (`r` must then hold the requested bytes per row).
pub(super) fn run<T: Target>(
    t: &T,
    trace: &Trace,
    r: &Resolved,
    samples: bool,
    progress: &mut impl FnMut(usize),
) -> Result<Outcome, ReplayError> {
    let n = trace.rows.len();
    let error = |i: usize, message: String| ReplayError { line: trace.lines.get(i).copied(), message };
    let hal =
        |i: usize, e: mempool_hal::Error| error(i, format!("{} failed in the replay: {e}", trace.rows[i].op.action()));
    let mut streams: Vec<T::Stream> = Vec::new();
    let mut events: Vec<T::Event> = Vec::new();
    let mut slots: Vec<Option<DevicePtr>> = vec![None; r.slots];
    let mut acc = [Acc::default(); KINDS.len()];
    let mut order: Vec<usize> = Vec::with_capacity(KINDS.len());
    let mut out = Vec::with_capacity(if samples { n } else { 0 });
    let mut skipped = 0;
    let mut off_clock = Duration::ZERO;
    let start = Instant::now();
    for (i, &step) in r.steps.iter().enumerate() {
        // A common row tests one byte here: handles and first calls are marked beforehand.
        if step.flags != 0 {
            let k = usize::from(step.kind);
            if step.flags & NEW_HANDLES != 0 {
                // Created on first mention (stream first), off the clock.
                let t0 = Instant::now();
                if HAS_STREAM[k] && step.stream as usize >= streams.len() {
                    streams.push(t.stream().map_err(|e| hal(i, e))?);
                }
                if HAS_EVENT[k] && step.aux as usize >= events.len() {
                    events.push(t.event().map_err(|e| hal(i, e))?);
                }
                off_clock += t0.elapsed();
            }
            if step.flags & FIRST_OF_KIND != 0 {
                order.push(k);
            }
        }
        let done = if step.flags & FIRST_OF_KIND != 0 || timed(i) {
            let t0 = Instant::now();
            let done = call(t, step, &streams, &events, &mut slots, &mut skipped);
            let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            let a = &mut acc[usize::from(step.kind)];
            a.timed += 1;
            let weight = if step.flags & FIRST_OF_KIND != 0 { 1 } else { TIMED_ONE_IN };
            a.estimate_ns = a.estimate_ns.saturating_add(ns.saturating_mul(weight));
            done
        } else {
            call(t, step, &streams, &events, &mut slots, &mut skipped)
        };
        match done {
            Ok(()) => {}
            Err(Failure::Hal(e)) => return Err(hal(i, e)),
            Err(Failure::UnknownFree) => {
                let ptr = match trace.rows[i].op {
                    Op::Free { ptr, .. } => ptr,
                    _ => 0,
                };
                return Err(error(i, format!("free of unknown pointer {ptr:#x}")));
            }
        }
        if samples {
            let (used, reserved) = t.usage().map_err(|e| hal(i, e))?;
            out.push(Sample { used, reserved, requested: r.requested.get(i).copied().unwrap_or(0) });
        }
        if i & 1023 == 1023 {
            progress(i + 1);
        }
    }
    let total = start.elapsed().saturating_sub(off_clock);
    progress(n);
    let times = order
        .into_iter()
        .map(|k| OpTime {
            action: KINDS[k],
            count: r.counts[k],
            timed: acc[k].timed,
            total: Duration::from_nanos(acc[k].estimate_ns),
        })
        .collect();
    Ok(Outcome { samples: out, times, total, skipped_failures: skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_one_row_in_64_is_timed_without_a_short_period() {
        let n = 64 * 1000;
        let hits: Vec<usize> = (0..n).filter(|&i| timed(i)).collect();
        assert!((950..=1050).contains(&hits.len()), "{}", hits.len());
        // Spread: every window of 128 rows holds one at least.
        assert!(hits.windows(2).all(|w| w[1] - w[0] <= 128));
        // Not every 64th row: the residues mod 64 vary.
        let residues: std::collections::BTreeSet<usize> = hits.iter().map(|i| i % 64).collect();
        assert!(residues.len() > 16);
    }
}
