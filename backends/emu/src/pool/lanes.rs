//! The pool's two ways in: a stream's *lane* (the fast path of the same-stream cycle) and
//! the exclusive guard every other path takes.
//!
//! A framework calls the pool from several host threads at once, each mostly on streams
//! of its own, and mostly in the same-stream cycle: an allocation served by the block its
//! stream freed last (rule a, an exact fit, no split) and the free of a block allocated on
//! the same stream that merges with nothing. Those two steps touch only what belongs to
//! their stream, so they take no pool-wide lock and write no pool-wide line: each runs in
//! one of [`LANES`] lanes, claimed for a stream by a slow path.
//!
//! # The protocol
//!
//! - A fast path on stream S finds S's lane, claims it (`busy`, a compare-and-swap), then
//!   reads `slow`: set, it lets the lane go and takes the slow path. Both accesses are
//!   sequentially consistent.
//! - A slow path takes the pool's lock, sets `slow`, then waits until no lane is busy:
//!   from then on it is alone with the pool's state, as the single pool lock made every
//!   path before. On leaving it clears `slow` (release) and lets the lock go.
//!
//! This is Dekker's exclusion with one side per lane: in the single order of sequentially
//! consistent operations either the fast path's claim comes first (the slow path sees the
//! lane busy and waits for it) or the slow path's flag does (the fast path sees it and
//! backs off). The lane's release and the flag's clearing are release stores read with
//! acquire loads, so whatever one side wrote is visible to the other. loom treats
//! sequentially consistent accesses as acquire-release, so under `--cfg loom` both sides
//! also run a sequentially consistent fence, which loom does model.
//!
//! # What a lane may touch (the ownership rule)
//!
//! Without the exclusive guard a fast path only reads the pool's state, except what its
//! stream owns, which only it (or a slow path, alone) writes: its stream's size bins, the
//! nodes of the blocks its stream allocated (live) or freed (cached), their heap slots and
//! marks, and its lane's counters. A node's owner, and whether it is live or cached, is in
//! the pool's marks (`blocks/marks.rs`): only slow paths change a mark's owner, and a fast path
//! flips a mark of its own stream between its live and cached values only, so a fast path
//! tells its own blocks from others' (and a neighbour it would merge with) with one read,
//! whatever the other streams' fast paths write meanwhile.
//! Counters the slow paths read (USED, the live count, the non-empty bins, the rule-a
//! count) change in the lane as signed deltas, which every slow path folds into the
//! pool's counters first: every snapshot is exact, and taken at one instant.
//!
//! USED_HIGH stays exact without a shared write: every slow path raises the mark to the
//! USED it sees, and on leaving shares the headroom below the mark (USED_HIGH - USED)
//! among the given lanes as *allowances*. A fast allocation may raise its lane's USED
//! delta only up to the lane's allowance, so all lanes together never lift USED above
//! the mark: the mark stays the maximum of USED without a fast path writing it. After a
//! reset that leaves the mark below USED the fast paths stay off until a slow path has
//! raised it again ([`Lanes::leave`]).

use crate::sync::{AtomicBool, AtomicU64, Ordering, thread};
use std::sync::atomic::AtomicUsize;

/// How many streams of a pool have a lane at a time; other streams take the slow path
/// until a slow path gives them one (the least recently given lane).
pub(crate) const LANES: usize = 8;

/// One stream's lane: its claim and its counters' changes since the last fold (loom's
/// atomics under `--cfg loom`, so that the model check interleaves other paths with a
/// fast path's steps and would see a fold racing them).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Lane {
    busy: AtomicBool,
    /// USED, live allocations and non-empty bins: signed deltas (two's complement).
    used: AtomicU64,
    live: AtomicU64,
    nonempty: AtomicU64,
    /// Allocations served by rule a.
    same_stream: AtomicU64,
    /// Misses in a row (a fast path entered that had to leave the call to the slow path),
    /// and how many of the next attempts skip the lane: a stream whose calls mostly
    /// need the slow path (varied sizes, merges) stops paying for the attempt. A hint
    /// only, read and written without the claim.
    misses: std::sync::atomic::AtomicU32,
    skip: std::sync::atomic::AtomicU32,
}

/// At most this many attempts are skipped after misses in a row (1, 3, 7, ... 63).
const MAX_SKIP_SHIFT: u32 = 6;

/// What the lanes changed since the last fold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Folded {
    pub(crate) used: i64,
    pub(crate) live: i64,
    pub(crate) nonempty: i64,
    pub(crate) same_stream: u64,
}

/// The read-mostly part: written only by slow paths, read by every fast path.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shared {
    /// A slow path is in, or waiting for the lanes to go idle.
    slow: AtomicBool,
    /// Whether fast paths may run: USED_HIGH is at least USED (no reset left it below).
    open: std::sync::atomic::AtomicBool,
    /// How far each lane's USED delta may rise: an equal share of the headroom below
    /// USED_HIGH among the given lanes, set by the last slow path ([`Lanes::leave`]).
    share: std::sync::atomic::AtomicU64,
    /// The stream of each lane (0: none; no stream has id 0).
    streams: [std::sync::atomic::AtomicU64; LANES],
    /// Bit `k` set: lane `k` is given to a stream. Read and written only by slow paths
    /// (under the pool's lock), so that excluding and folding visit the given lanes
    /// without reading every lane's stream.
    given: std::sync::atomic::AtomicU32,
    /// The lane the next stream without one takes.
    next: AtomicUsize,
}

/// A pool's lanes (module docs).
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    shared: Shared,
    lanes: [Lane; LANES],
}

/// A claimed lane: the fast path's right to touch what its stream owns. Lets the lane go
/// when dropped.
#[derive(Debug)]
pub(crate) struct LaneGuard<'a> {
    lane: &'a Lane,
    /// The lane's allowance ([`Shared::share`]).
    allow: i64,
    /// The call was served (or answered) on the lane, or left for a reason other than a
    /// miss: no skipping is scheduled.
    served: bool,
}

impl Drop for LaneGuard<'_> {
    fn drop(&mut self) {
        if !self.served {
            let misses = self.lane.misses.load(Ordering::Relaxed).saturating_add(1);
            self.lane.misses.store(misses, Ordering::Relaxed);
            self.lane.skip.store((1 << misses.min(MAX_SKIP_SHIFT)) - 1, Ordering::Relaxed);
        }
        self.lane.busy.store(false, Ordering::Release);
    }
}

fn add(counter: &AtomicU64, delta: i64) {
    // Only the lane's holder or a slow path (alone) writes a lane's counters.
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(delta as u64), Ordering::Relaxed);
}

fn take(counter: &AtomicU64) -> i64 {
    // The caller is alone with the lanes (`Lanes::fold`): a load, and a store only when
    // there is something to reset.
    let v = counter.load(Ordering::Relaxed);
    if v != 0 {
        counter.store(0, Ordering::Relaxed);
    }
    v as i64
}

impl LaneGuard<'_> {
    /// The call was served on the lane: the next ones try it again at once.
    pub(crate) fn served(mut self) {
        self.served = true;
        if self.lane.misses.load(Ordering::Relaxed) != 0 {
            self.lane.misses.store(0, Ordering::Relaxed);
        }
    }

    /// Whether an allocation of `len` bytes keeps USED at or below the USED_HIGH the last
    /// slow path saw (module docs): the lane's delta stays within its allowance.
    pub(crate) fn may_add(&self, len: u64) -> bool {
        let used = self.lane.used.load(Ordering::Relaxed) as i64;
        i64::try_from(len).is_ok_and(|len| used.checked_add(len).is_some_and(|u| u <= self.allow))
    }

    /// USED changes by `delta` bytes.
    pub(crate) fn add_used(&self, delta: i64) {
        add(&self.lane.used, delta);
    }

    /// The number of live allocations changes by `delta`.
    pub(crate) fn add_live(&self, delta: i64) {
        add(&self.lane.live, delta);
    }

    /// The number of non-empty bins changes by `delta`.
    pub(crate) fn add_nonempty(&self, delta: i64) {
        add(&self.lane.nonempty, delta);
    }

    /// Rule a served one more allocation.
    pub(crate) fn bump_same_stream(&self) {
        add(&self.lane.same_stream, 1);
    }
}

impl Lanes {
    /// Lanes with none given out, and fast paths open.
    pub(crate) fn new() -> Lanes {
        let lanes = Lanes::default();
        lanes.shared.open.store(true, Ordering::Relaxed);
        lanes
    }

    /// Claims `stream`'s lane, if it has one and no slow path is in (module docs).
    pub(crate) fn enter(&self, stream: u64) -> Option<LaneGuard<'_>> {
        let k = self.shared.streams.iter().position(|s| s.load(Ordering::Relaxed) == stream)?;
        let lane = &self.lanes[k];
        let skip = lane.skip.load(Ordering::Relaxed);
        if skip > 0 {
            lane.skip.store(skip - 1, Ordering::Relaxed);
            return None;
        }
        lane.busy.compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed).ok()?;
        let mut guard = LaneGuard { lane, allow: 0, served: false };
        #[cfg(loom)]
        crate::sync::fence(Ordering::SeqCst);
        // No slow path can give the lane away once it is shut out: check the lane is still
        // the stream's.
        if self.shared.slow.load(Ordering::SeqCst)
            || !self.shared.open.load(Ordering::Relaxed)
            || self.shared.streams[k].load(Ordering::Relaxed) != stream
        {
            guard.served = true;
            return None;
        }
        guard.allow = self.shared.share.load(Ordering::Relaxed) as i64;
        Some(guard)
    }

    /// Shuts the fast paths out and waits for those running to finish: the caller holds
    /// the pool's lock, and is alone with the state until [`Lanes::leave`].
    pub(crate) fn exclude(&self) {
        self.shared.slow.store(true, Ordering::SeqCst);
        #[cfg(loom)]
        crate::sync::fence(Ordering::SeqCst);
        for lane in self.given() {
            let mut spins = 0u32;
            while lane.busy.load(Ordering::SeqCst) {
                // A fast path holds no lock another path waits for while it runs: it
                // ends soon. Spin a little, then give the core away.
                spins += 1;
                if cfg!(loom) || spins > 64 {
                    thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
    }

    /// The changes the lanes made since the last fold, reset to none (the caller has
    /// excluded the fast paths).
    pub(crate) fn fold(&self) -> Folded {
        let mut f = Folded::default();
        for lane in self.given() {
            f.used = f.used.wrapping_add(take(&lane.used));
            f.live = f.live.wrapping_add(take(&lane.live));
            f.nonempty = f.nonempty.wrapping_add(take(&lane.nonempty));
            f.same_stream += take(&lane.same_stream) as u64;
        }
        f
    }

    /// The lanes given to a stream: the only ones a fast path can hold or have changed
    /// (a lane is given away only by a slow path, after its changes were folded).
    fn given(&self) -> impl Iterator<Item = &Lane> {
        let mut bits = self.shared.given.load(Ordering::Relaxed);
        std::iter::from_fn(move || {
            let k = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            self.lanes.get(k)
        })
    }

    /// Lets the fast paths in again. `headroom`: USED_HIGH - USED as the slow path leaves
    /// it, shared among the given lanes as their allowances (module docs); `None` when
    /// the mark is below USED (after a reset), which keeps the fast paths off.
    pub(crate) fn leave(&self, headroom: Option<u64>) {
        let open = headroom.is_some();
        if self.shared.open.load(Ordering::Relaxed) != open {
            self.shared.open.store(open, Ordering::Relaxed);
        }
        if let Some(room) = headroom {
            let given = self.shared.given.load(Ordering::Relaxed).count_ones();
            // At most a pool's size, so a share fits a lane's signed delta.
            // One lane given (one stream at work) is the common case: no division then.
            let share = if given <= 1 { room } else { room / u64::from(given) }.min(i64::MAX as u64);
            if self.shared.share.load(Ordering::Relaxed) != share {
                self.shared.share.store(share, Ordering::Relaxed);
            }
        }
        self.shared.slow.store(false, Ordering::Release);
    }

    /// Gives `stream` a lane if it has none (the caller has excluded the fast paths): a
    /// free one, else the one given out longest ago.
    pub(crate) fn assign(&self, stream: u64) {
        let streams = &self.shared.streams;
        if streams.iter().any(|s| s.load(Ordering::Relaxed) == stream) {
            return;
        }
        let k = match streams.iter().position(|s| s.load(Ordering::Relaxed) == 0) {
            Some(k) => k,
            None => {
                let k = self.shared.next.load(Ordering::Relaxed);
                self.shared.next.store((k + 1) % LANES, Ordering::Relaxed);
                k
            }
        };
        streams[k].store(stream, Ordering::Relaxed);
        self.shared.given.fetch_or(1 << k, Ordering::Relaxed);
        // The misses were the previous stream's.
        let lane = &self.lanes[k];
        lane.misses.store(0, Ordering::Relaxed);
        lane.skip.store(0, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_lane_is_entered_only_by_its_stream_and_not_during_a_slow_path() {
        let lanes = Lanes::new();
        assert!(lanes.enter(7).is_none(), "no lane yet");
        lanes.assign(7);
        let g = lanes.enter(7).expect("its lane");
        assert!(lanes.enter(7).is_none(), "a lane is held by one path at a time");
        g.served();
        lanes.exclude();
        assert!(lanes.enter(7).is_none(), "shut out while a slow path is in");
        lanes.leave(Some(0));
        lanes.enter(7).expect("open again").served();
        lanes.exclude();
        lanes.leave(None);
        assert!(lanes.enter(7).is_none(), "closed after a reset left USED_HIGH below USED");
        lanes.exclude();
        lanes.leave(Some(0));
        assert!(lanes.enter(8).is_none());
    }

    #[test]
    fn lanes_are_given_to_new_streams_oldest_first_and_deltas_fold_once() {
        let lanes = Lanes::new();
        for s in 1..=LANES as u64 {
            lanes.assign(s);
        }
        lanes.assign(3);
        lanes.enter(3).expect("assigning a stream twice keeps its lane").served();
        lanes.assign(100);
        assert!(lanes.enter(1).is_none(), "the first lane given went to the new stream");
        {
            let g = lanes.enter(100).expect("the new stream's lane");
            assert!(!g.may_add(1));
            g.add_used(-4096);
            assert!(g.may_add(4096) && !g.may_add(4097));
            g.add_live(-1);
            g.add_nonempty(1);
            g.bump_same_stream();
            g.served();
        }
        let f = lanes.fold();
        assert_eq!(f, Folded { used: -4096, live: -1, nonempty: 1, same_stream: 1 });
        assert_eq!(lanes.fold(), Folded::default(), "folding resets the deltas");
    }

    #[test]
    fn the_headroom_below_the_mark_is_shared_among_the_given_lanes() {
        let lanes = Lanes::new();
        lanes.assign(1);
        lanes.exclude();
        lanes.leave(Some(3 * 4096));
        let g = lanes.enter(1).expect("lane");
        assert!(g.may_add(3 * 4096) && !g.may_add(3 * 4096 + 1), "one lane takes the whole headroom");
        g.add_used(2 * 4096);
        assert!(g.may_add(4096) && !g.may_add(4097), "less what it has allocated since");
        g.served();
        assert_eq!(lanes.fold().used, 2 * 4096);
        lanes.assign(2);
        lanes.leave(Some(3 * 4096));
        for s in [1, 2] {
            let g = lanes.enter(s).expect("lane");
            assert!(g.may_add(6144) && !g.may_add(6145), "two lanes share it: together they stay under the mark");
            g.served();
        }
        lanes.exclude();
        lanes.leave(None);
        assert!(lanes.enter(1).is_none(), "closed after a reset left the mark below USED");
        lanes.exclude();
        lanes.leave(Some(0));
        let g = lanes.enter(2).expect("lane");
        assert!(!g.may_add(1), "no headroom: only bytes the lane freed since");
        g.add_used(-4096);
        assert!(g.may_add(4096) && !g.may_add(4097));
        g.served();
    }

    #[test]
    fn misses_in_a_row_skip_more_and_more_attempts_until_one_is_served() {
        let lanes = Lanes::new();
        lanes.assign(9);
        let attempts = |n: usize| (0..n).filter(|_| lanes.enter(9).is_some()).count();
        drop(lanes.enter(9).expect("first attempt"));
        assert_eq!(attempts(2), 1, "one miss: the next attempt is skipped");
        // That attempt missed too (dropped unserved): three are skipped now.
        assert_eq!(attempts(4), 1);
        assert_eq!(attempts(8), 1);
        for _ in 0..10 {
            while lanes.enter(9).is_none() {}
        }
        assert_eq!(attempts(64), 1, "at most 63 skipped");
        while lanes.enter(9).map(LaneGuard::served).is_none() {}
        assert!(lanes.enter(9).map(LaneGuard::served).is_some(), "served: the next attempt enters at once");
        assert!(lanes.enter(9).map(LaneGuard::served).is_some());
    }

    #[test]
    fn a_slow_path_waits_for_a_running_fast_path() {
        use std::sync::Arc;
        let lanes = Arc::new(Lanes::new());
        lanes.assign(5);
        let g = lanes.enter(5).expect("lane");
        g.add_used(-8);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (l2, d2) = (Arc::clone(&lanes), Arc::clone(&done));
        let slow = std::thread::spawn(move || {
            l2.exclude();
            let f = l2.fold();
            d2.store(true, Ordering::SeqCst);
            l2.leave(Some(0));
            f
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!done.load(Ordering::SeqCst), "the slow path waits while the lane is busy");
        g.add_used(-8);
        g.served();
        assert_eq!(slow.join().expect("slow path").used, -16, "and then sees everything the lane wrote");
    }
}
