//! Vector clocks: how far a point of one stream is ordered after every other stream, and
//! what the host has observed complete ([`HostClock`]).

use crate::sync::{Mutex, MutexGuard, PoisonError};

/// For each stream id, the highest position of that stream known to be ordered before
/// the point this clock describes. Absent streams are at position 0.
///
/// Kept as a small vector sorted by stream id: clocks are copied on every event record
/// and merged on every wait, and real programs use a handful of streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Clock {
    entries: Vec<(u64, u64)>,
}

impl Clock {
    /// The known position of `stream`.
    pub(crate) fn get(&self, stream: u64) -> u64 {
        match self.entries.binary_search_by_key(&stream, |e| e.0) {
            Ok(i) => self.entries[i].1,
            Err(_) => 0,
        }
    }

    /// Raises the entry of `stream` to at least `pos`.
    pub(crate) fn raise(&mut self, stream: u64, pos: u64) {
        match self.entries.binary_search_by_key(&stream, |e| e.0) {
            Ok(i) => self.entries[i].1 = self.entries[i].1.max(pos),
            Err(i) => self.entries.insert(i, (stream, pos)),
        }
    }

    /// Raises every entry to at least `other`'s: one pass over both sorted lists, in
    /// place when `other` names no stream this clock lacks.
    pub(crate) fn merge(&mut self, other: &Clock) {
        if other.entries.len() * 8 < self.entries.len() {
            // A few entries into a long clock: a search each.
            for &(s, p) in &other.entries {
                self.raise(s, p);
            }
            return;
        }
        let (a, b) = (&mut self.entries, &other.entries);
        if a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0) {
            // The same streams (dense clocks): entry by entry.
            for (x, y) in a.iter_mut().zip(b) {
                x.1 = x.1.max(y.1);
            }
            return;
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i].0 < b[j].0 {
                i += 1;
            } else if a[i].0 == b[j].0 {
                a[i].1 = a[i].1.max(b[j].1);
                i += 1;
                j += 1;
            } else {
                break;
            }
        }
        if j == b.len() {
            return;
        }
        if i == a.len() {
            a.extend_from_slice(&b[j..]);
            return;
        }
        // `other` names a stream missing here before this clock's end: merge into a new list.
        let mut out = Vec::with_capacity(a.len() + b.len() - j);
        out.extend_from_slice(&a[..i]);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            if x.0 < y.0 {
                out.push(x);
                i += 1;
            } else if x.0 > y.0 {
                out.push(y);
                j += 1;
            } else {
                out.push((x.0, x.1.max(y.1)));
                i += 1;
                j += 1;
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        *a = out;
    }

    /// Whether every entry of `other` is at most this clock's (merging it changes nothing).
    pub(crate) fn covers(&self, other: &Clock) -> bool {
        let a = &self.entries;
        let mut i = 0;
        for &(s, p) in &other.entries {
            while i < a.len() && a[i].0 < s {
                i += 1;
            }
            if i == a.len() || a[i].0 != s || a[i].1 < p {
                return false;
            }
        }
        true
    }

    /// This clock raised to `other` and to `point`, as a new clock; `None` when that
    /// changes nothing.
    pub(crate) fn merged(&self, other: &Clock, point: (u64, u64)) -> Option<Clock> {
        if self.covers(other) && self.get(point.0) >= point.1 {
            return None;
        }
        let mut c = self.clone();
        c.merge(other);
        c.raise(point.0, point.1);
        Some(c)
    }

    /// How many streams the clock names.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Keeps the entries for which `keep(stream, pos)` holds.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u64, u64) -> bool) {
        self.entries.retain(|&(s, p)| keep(s, p));
    }

    /// The entries, sorted by stream id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.entries.iter().copied()
    }
}

/// What the host has observed complete, per platform: a clock of the points the host
/// synchronized with (a stream, an event, the device) or saw complete in a query.
///
/// Contract §1: everything enqueued after an observation, on any stream and from any
/// thread, is ordered after the observed points. The clock only grows, so a call is
/// ordered after point P of stream S through the host exactly when this clock covers P at
/// the time of the call, whatever happened in between: the checker consults it when a
/// stream's own clock does not order the call, and stream clocks (which drive reuse)
/// never merge it, so the pool's hot path never reads it.
#[derive(Debug, Default)]
pub(crate) struct HostClock {
    clock: Mutex<Clock>,
}

impl HostClock {
    fn lock(&self) -> MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that the host observed every point of `clock` complete.
    pub(crate) fn observe(&self, clock: &Clock) {
        self.lock().merge(clock);
    }

    /// Records that the host observed every point of `clock` and `point` complete (an
    /// event's record).
    pub(crate) fn observe_with(&self, clock: &Clock, (stream, pos): (u64, u64)) {
        let mut host = self.lock();
        host.merge(clock);
        host.raise(stream, pos);
    }

    /// The highest position of `stream` the host has observed complete.
    pub(crate) fn get(&self, stream: u64) -> u64 {
        self.lock().get(stream)
    }

    /// The entries of `clock` that the host has observed (each at most the host's
    /// position of its stream), in one lock.
    pub(crate) fn observed_in(&self, clock: &Clock) -> Vec<(u64, u64)> {
        let host = self.lock();
        clock.iter().filter(|&(s, p)| host.get(s) >= p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raise_and_merge_take_maxima() {
        let mut a = Clock::default();
        a.raise(3, 5);
        a.raise(1, 2);
        a.raise(3, 4);
        assert_eq!(a.get(3), 5);
        assert_eq!(a.get(2), 0);
        let mut b = Clock::default();
        b.raise(2, 7);
        b.raise(1, 9);
        a.merge(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![(1, 9), (2, 7), (3, 5)]);
    }

    fn clock(entries: &[(u64, u64)]) -> Clock {
        let mut c = Clock::default();
        for &(s, p) in entries {
            c.raise(s, p);
        }
        c
    }

    /// The one-pass merge agrees with raising each entry, whichever path it takes (in
    /// place, appended, a new list, a search each), and `covers` says when it changes
    /// nothing.
    #[test]
    fn merge_agrees_with_raising_each_entry() {
        type Entries = &'static [(u64, u64)];
        let cases: &[(Entries, Entries)] = &[
            (&[(1, 1), (2, 2), (3, 3)], &[(2, 5), (3, 1)]),
            (&[(1, 1), (2, 2)], &[(2, 1), (5, 4), (6, 1)]),
            (&[(2, 2), (4, 4)], &[(1, 9), (3, 3), (4, 1), (7, 7)]),
            (&[], &[(1, 1)]),
            (&[(1, 1)], &[]),
            (&[(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 1), (9, 1)], &[(0, 3)]),
        ];
        for &(a, b) in cases {
            let (x, y) = (clock(a), clock(b));
            let mut merged = x.clone();
            merged.merge(&y);
            let mut raised = x.clone();
            for &(s, p) in b {
                raised.raise(s, p);
            }
            assert_eq!(merged, raised, "{a:?} + {b:?}");
            assert!(merged.covers(&x) && merged.covers(&y));
            assert_eq!(x.covers(&y), x == merged, "{a:?} covers {b:?}");
            let mut with_point = merged.clone();
            with_point.raise(4, 6);
            assert_eq!(x.merged(&y, (4, 6)).unwrap_or_else(|| x.clone()), with_point, "{a:?} + {b:?} + (4, 6)");
        }
    }
}
