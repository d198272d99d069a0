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

    /// Raises every entry to at least `other`'s.
    pub(crate) fn merge(&mut self, other: &Clock) {
        for &(s, p) in &other.entries {
            self.raise(s, p);
        }
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

    /// The highest position of `stream` the host has observed complete.
    pub(crate) fn get(&self, stream: u64) -> u64 {
        self.lock().get(stream)
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
}
