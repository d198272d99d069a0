//! What a free on a pool's fast path reads of its stream without the stream's lock: a
//! sequence lock over the stream's positions, its last real operation and its clock.
//!
//! A free takes the stream's next position (a *marker*) and needs, as of that position,
//! the last real operation before it (`dep_real`) and the stream's clock. Under the state
//! lock that is one lock and one unlock, two read-modify-writes on every free. Here the
//! free takes its position with one `fetch_add` and reads the rest from copies kept
//! beside the lock, validated by a sequence number:
//!
//! - Every change of what a marker reads (a position taken under the lock, the last real
//!   operation, the clock, the stream's closing) happens inside a *write section*
//!   ([`Published::write`], under the state lock, so sections never overlap): the sequence
//!   number is odd during it, and the copies are updated inside it.
//! - The free reads the sequence number (even), takes its position, reads the copies, and
//!   reads the sequence number again. Unchanged, no section overlapped: every section
//!   whose position came before the free's had ended before the first read (its position
//!   was taken inside it, after the odd store and a release fence, so an acquire of the
//!   free's position that follows it would have seen the odd number), and none whose
//!   position comes after had begun; the copies are exactly the stream's as of the free's
//!   position. Changed, the free takes the lock and a new position; the position it took
//!   is a gap no one names, as harmless as a marker's (positions are only compared).
//! - The clock is compared, never followed: the free only checks that the block's node
//!   already holds the clock the stream has (the node keeps that allocation alive, so no
//!   other clock can have its address). A block that needs a new reference takes the lock.

use crate::clock::Clock;
use crate::sync::{AtomicBool, AtomicU64, Ordering};

cfg_if::cfg_if! {
    if #[cfg(loom)] {
        use crate::sync::fence;
    } else {
        use std::sync::atomic::fence;
    }
}

/// Takes the next position of the stream whose last handed-out position is `pos`: a
/// read-modify-write, since lock-free markers take positions beside the lock's holder.
pub(crate) fn take_position(pos: &AtomicU64) -> u64 {
    pos.fetch_add(1, Ordering::AcqRel).wrapping_add(1)
}

/// The sequence number and the copies of a stream's marker state (module docs).
#[derive(Debug)]
pub(crate) struct Published {
    /// Odd while a write section runs.
    seq: AtomicU64,
    /// The position of the last real operation ([`super::StreamState::last_real`]).
    last_real: AtomicU64,
    /// The address of the stream's clock ([`super::StreamState::clock`]), compared only.
    clock: AtomicU64,
}

impl Published {
    /// Copies of a new stream's state: no real operation, the clock `clock`.
    pub(crate) fn new(clock: *const Clock) -> Published {
        Published { seq: AtomicU64::new(0), last_real: AtomicU64::new(0), clock: AtomicU64::new(clock as u64) }
    }

    /// Runs `f` as a write section. The caller holds the stream's state lock (so that
    /// sections never overlap) and changes what markers read only inside one.
    pub(crate) fn write<R>(&self, f: impl FnOnce() -> R) -> R {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        let r = f();
        self.seq.store(s.wrapping_add(2), Ordering::Release);
        r
    }

    /// The position of the last real operation, read without the lock: exact for the
    /// thread that enqueued it (its own write), a recent one for any other.
    pub(crate) fn last_real(&self) -> u64 {
        self.last_real.load(Ordering::Relaxed)
    }

    /// Inside a write section: the last real operation is now at `pos`.
    pub(crate) fn set_last_real(&self, pos: u64) {
        self.last_real.store(pos, Ordering::Relaxed);
    }

    /// Inside a write section: the stream's clock is now `clock`.
    pub(crate) fn set_clock(&self, clock: *const Clock) {
        self.clock.store(clock as u64, Ordering::Relaxed);
    }

    /// A marker taken without the lock: the next position of `pos` and the last real
    /// operation before it, when the stream's clock is `clock` and the stream is not
    /// destroyed; `None` (perhaps after taking a position, left as a gap) when a write
    /// section overlapped or either check failed: the caller takes the lock.
    pub(crate) fn marker(&self, pos: &AtomicU64, destroyed: &AtomicBool, clock: *const Clock) -> Option<(u64, u64)> {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 || self.clock.load(Ordering::Relaxed) != clock as u64 {
            return None;
        }
        let p = take_position(pos);
        let dep_real = self.last_real.load(Ordering::Relaxed);
        let same_clock = self.clock.load(Ordering::Relaxed) == clock as u64;
        // Set before the destroy's write section, which closes the stream.
        let open = !destroyed.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let s2 = self.seq.load(Ordering::Relaxed);
        (s1 == s2 && same_clock && open).then_some((p, dep_real))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_marker_reads_the_state_as_of_its_position() {
        let (clock, other) = (Arc::new(Clock::default()), Arc::new(Clock::default()));
        let published = Published::new(Arc::as_ptr(&clock));
        let (pos, destroyed) = (AtomicU64::new(0), AtomicBool::new(false));
        // A real operation at position 1, enqueued under the lock.
        published.write(|| {
            let q = take_position(&pos);
            published.set_last_real(q);
        });
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&clock)), Some((2, 1)));
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&other)), None, "a block with another clock");
        assert_eq!(pos.load(Ordering::Relaxed), 2, "no position taken for it");
        published.write(|| published.set_clock(Arc::as_ptr(&other)));
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&clock)), None, "the stream's clock changed");
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&other)), Some((3, 1)));
        destroyed.store(true, Ordering::Relaxed);
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&other)), None, "a destroyed stream: the lock");
    }

    #[test]
    fn a_marker_during_a_write_section_takes_the_lock_and_no_position() {
        let clock = Arc::new(Clock::default());
        let published = Published::new(Arc::as_ptr(&clock));
        let (pos, destroyed) = (AtomicU64::new(0), AtomicBool::new(false));
        let inside = published.write(|| published.marker(&pos, &destroyed, Arc::as_ptr(&clock)));
        assert_eq!(inside, None, "the sequence number is odd during a section");
        assert_eq!(published.marker(&pos, &destroyed, Arc::as_ptr(&clock)), Some((1, 0)), "position 1: none was taken");
    }
}
