//! Vector clocks: how far a point of one stream is ordered after every other stream, and
//! what the host has observed complete ([`HostClock`]).

use crate::sync::{Mutex, MutexGuard, PoisonError};
use std::sync::Arc;

/// How many entries a clock keeps above its shared base ([`Clock`]) before it writes a
/// new base.
const OVERLAY: usize = 16;

/// How many earlier bases a base names as ordered before it ([`Base::ancestors`]).
const ANCESTORS: usize = 64;

/// Ids of bases: unique for the life of the process (0 is the empty base).
static NEXT_BASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// An immutable sorted list of entries that clocks share.
#[derive(Debug)]
struct Base {
    id: u64,
    /// Sorted by stream id, one entry per stream.
    entries: Box<[(u64, u64)]>,
    /// Ids of bases whose every entry is at most this base's (a base this one was built
    /// from by raising entries), most recent first, at most [`ANCESTORS`]. Any subset of
    /// such bases would do: the list only lets a join see that one side covers the other
    /// without reading the entries.
    ancestors: Box<[u64]>,
}

impl Base {
    fn new(entries: Vec<(u64, u64)>, ancestors: Vec<u64>) -> Arc<Base> {
        let id = NEXT_BASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Arc::new(Base { id, entries: entries.into_boxed_slice(), ancestors: ancestors.into_boxed_slice() })
    }

    fn get(&self, stream: u64) -> Option<u64> {
        self.entries.binary_search_by_key(&stream, |e| e.0).ok().map(|i| self.entries[i].1)
    }
}

/// The id of an optional base (0: empty) and the bases it names as below it.
fn lineage(b: &Option<Arc<Base>>) -> (u64, &[u64]) {
    b.as_ref().map_or((0, &[][..]), |b| (b.id, &b.ancestors[..]))
}

/// Whether every entry of base `a` is known to be at most base `b`'s, from the ids alone.
fn base_below(a: &Option<Arc<Base>>, b: &Option<Arc<Base>>) -> bool {
    let ((ia, _), (ib, anc)) = (lineage(a), lineage(b));
    ia == 0 || ia == ib || anc.contains(&ia)
}

/// For each stream id, the highest position of that stream known to be ordered before
/// the point this clock describes. Absent streams are at position 0.
///
/// Clocks are copied at every event record, free and synchronization and joined at every
/// wait, with as many entries as streams the point is ordered after. So that those cost
/// what changed rather than the number of streams, a clock is an immutable sorted *base*
/// shared by every clock built from it, plus a short sorted *overlay* of the entries
/// raised since (at most [`OVERLAY`], each above the base's value of its stream). Copying
/// a clock copies the overlay. Each base carries the ids of the bases it was built from
/// by raising entries (ordered before it), so that a join sees from the ids and the
/// overlay alone that one side covers the other: joining a clock that covers this one
/// (a stream waiting for an event recorded after everything it knows, the usual case in
/// pipelines and rings of streams) shares its base, and joining one this clock covers
/// changes nothing. Otherwise the join reads both lists once, as a plain vector clock
/// would. The values, and every query's answer, are those of a plain vector clock.
#[derive(Debug, Clone, Default)]
pub(crate) struct Clock {
    base: Option<Arc<Base>>,
    /// Sorted by stream id; each entry above the base's position of its stream.
    over: Vec<(u64, u64)>,
    /// How many streams the overlay names that the base does not.
    extra: usize,
}

impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Clock {}

impl Clock {
    fn base_entries(&self) -> &[(u64, u64)] {
        self.base.as_ref().map_or(&[][..], |b| &b.entries[..])
    }

    fn base_get(&self, stream: u64) -> Option<u64> {
        self.base.as_ref().and_then(|b| b.get(stream))
    }

    /// The position of `stream`, if the clock names it.
    fn lookup(&self, stream: u64) -> Option<u64> {
        match self.over.binary_search_by_key(&stream, |e| e.0) {
            Ok(i) => Some(self.over[i].1),
            Err(_) => self.base_get(stream),
        }
    }

    /// The known position of `stream`.
    pub(crate) fn get(&self, stream: u64) -> u64 {
        self.lookup(stream).unwrap_or(0)
    }

    /// Raises the entry of `stream` to at least `pos`.
    pub(crate) fn raise(&mut self, stream: u64, pos: u64) {
        match self.over.binary_search_by_key(&stream, |e| e.0) {
            Ok(i) => self.over[i].1 = self.over[i].1.max(pos),
            Err(i) => {
                let in_base = self.base_get(stream);
                if in_base.is_some_and(|p| p >= pos) {
                    return;
                }
                self.over.insert(i, (stream, pos));
                if in_base.is_none() {
                    self.extra += 1;
                }
                if self.over.len() > OVERLAY {
                    self.rebase(Vec::new());
                }
            }
        }
    }

    /// Writes the entries into a new base, which names the current one (and `also`,
    /// bases whose entries are all at most these) as ordered before it.
    fn rebase(&mut self, also: Vec<u64>) {
        let entries: Vec<_> = self.iter().collect();
        let (id, anc) = lineage(&self.base);
        let mut ancestors = also;
        if id != 0 {
            ancestors.push(id);
        }
        ancestors.extend(anc.iter().copied());
        ancestors.truncate(ANCESTORS);
        self.base = Some(Base::new(entries, ancestors));
        self.over.clear();
        self.extra = 0;
    }

    /// Whether `other` names every stream this clock names, at least as high, known from
    /// the bases' ids and this clock's overlay: a sufficient condition, in time that does
    /// not depend on the number of streams.
    fn below_by_lineage(&self, other: &Clock) -> bool {
        base_below(&self.base, &other.base) && self.over.iter().all(|&(s, p)| other.lookup(s).is_some_and(|q| q >= p))
    }

    /// Raises every entry to at least `other`'s.
    pub(crate) fn merge(&mut self, other: &Clock) {
        if other.below_by_lineage(self) {
            return;
        }
        if self.below_by_lineage(other) {
            // `other` covers this clock: it is the join.
            self.clone_from(other);
            return;
        }
        if other.base_entries().is_empty() {
            // An overlay alone (at most a few entries): a raise each.
            for &(s, p) in &other.over {
                self.raise(s, p);
            }
            return;
        }
        // One pass over both lists into a new base, ordered after both.
        let mut out = Vec::with_capacity(self.len() + other.len());
        let (mut a, mut b) = (self.iter().peekable(), other.iter().peekable());
        loop {
            match (a.peek().copied(), b.peek().copied()) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    out.push((x.0, x.1.max(y.1)));
                    a.next();
                    b.next();
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    out.push(x);
                    a.next();
                }
                (Some(_), Some(y)) | (None, Some(y)) => {
                    out.push(y);
                    b.next();
                }
                (Some(x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, None) => break,
            }
        }
        let (oid, oanc) = lineage(&other.base);
        let (sid, sanc) = lineage(&self.base);
        let mut ancestors = Vec::with_capacity(ANCESTORS);
        for id in [oid, sid] {
            if id != 0 {
                ancestors.push(id);
            }
        }
        // Both lineages, most recent first.
        let (mut i, mut j) = (0, 0);
        while ancestors.len() < ANCESTORS && (i < oanc.len() || j < sanc.len()) {
            if i < oanc.len() {
                ancestors.push(oanc[i]);
                i += 1;
            }
            if j < sanc.len() && ancestors.len() < ANCESTORS {
                ancestors.push(sanc[j]);
                j += 1;
            }
        }
        self.base = Some(Base::new(out, ancestors));
        self.over.clear();
        self.extra = 0;
    }

    /// Whether every entry of `other` is at most this clock's (merging it changes nothing).
    pub(crate) fn covers(&self, other: &Clock) -> bool {
        if other.below_by_lineage(self) {
            return true;
        }
        // Both lists in one pass: every stream `other` names must be here, as high.
        let mut a = self.iter().peekable();
        for (s, p) in other.iter() {
            while a.peek().is_some_and(|x| x.0 < s) {
                a.next();
            }
            match a.peek() {
                Some(&(t, q)) if t == s && q >= p => {}
                _ => return false,
            }
        }
        true
    }

    /// This clock raised to `other` and to `point`, as a new clock; `None` when that
    /// changes nothing.
    pub(crate) fn merged(&self, other: &Clock, point: (u64, u64)) -> Option<Clock> {
        if self.get(point.0) >= point.1 && self.covers(other) {
            return None;
        }
        let mut c = if self.below_by_lineage(other) {
            other.clone()
        } else {
            let mut c = self.clone();
            c.merge(other);
            c
        };
        c.raise(point.0, point.1);
        Some(c)
    }

    /// How many streams the clock names.
    pub(crate) fn len(&self) -> usize {
        self.base_entries().len() + self.extra
    }

    /// Keeps the entries for which `keep(stream, pos)` holds.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u64, u64) -> bool) {
        let entries: Vec<_> = self.iter().filter(|&(s, p)| keep(s, p)).collect();
        if entries.len() == self.len() {
            return;
        }
        // Entries left out: the new base is not ordered after the old one.
        *self = Clock { base: Some(Base::new(entries, Vec::new())), over: Vec::new(), extra: 0 };
    }

    /// The entries, sorted by stream id.
    pub(crate) fn iter(&self) -> Iter<'_> {
        Iter { base: self.base_entries(), over: &self.over }
    }
}

/// The entries of a [`Clock`] in stream order: its base and overlay merged.
pub(crate) struct Iter<'a> {
    base: &'a [(u64, u64)],
    over: &'a [(u64, u64)],
}

impl Iterator for Iter<'_> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        match (self.base.first(), self.over.first()) {
            (Some(&b), Some(&o)) if b.0 == o.0 => {
                // The overlay's entry is the higher.
                self.base = &self.base[1..];
                self.over = &self.over[1..];
                Some(o)
            }
            (Some(&b), Some(&o)) if b.0 < o.0 => {
                self.base = &self.base[1..];
                Some(b)
            }
            (_, Some(&o)) => {
                self.over = &self.over[1..];
                Some(o)
            }
            (Some(&b), None) => {
                self.base = &self.base[1..];
                Some(b)
            }
            (None, None) => None,
        }
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
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;
    use std::collections::BTreeMap;

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

    /// A ring of streams, each waiting for the previous one's record: once every clock
    /// names every stream, a wait shares the recording stream's base (it covers the
    /// waiting stream's clock) instead of reading the entries, and the values stay those
    /// of a plain vector clock.
    #[test]
    fn a_wait_for_a_covering_clock_shares_its_base() {
        let n = 200u64;
        let mut clocks: Vec<Clock> = vec![Clock::default(); n as usize];
        let mut refs: Vec<BTreeMap<u64, u64>> = vec![BTreeMap::new(); n as usize];
        let (mut shared, mut waits) = (0, 0);
        for k in 0..6 * n {
            let (a, b) = ((k % n) as usize, ((k + 1) % n) as usize);
            let point = (a as u64, k + 1);
            let rec = clocks[a].clone();
            if let Some(c) = clocks[b].merged(&rec, point) {
                if k >= 4 * n {
                    waits += 1;
                    let same = |x: &Option<Arc<Base>>, y: &Option<Arc<Base>>| match (x, y) {
                        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                        _ => false,
                    };
                    if same(&c.base, &rec.base) || c.over.is_empty() {
                        shared += 1;
                    }
                }
                clocks[b] = c;
            }
            let r = refs[a].clone();
            for (&s, &p) in &r {
                let e = refs[b].entry(s).or_insert(p);
                *e = (*e).max(p);
            }
            let e = refs[b].entry(point.0).or_insert(point.1);
            *e = (*e).max(point.1);
            assert_eq!(clocks[b].iter().collect::<Vec<_>>(), refs[b].iter().map(|(&s, &p)| (s, p)).collect::<Vec<_>>());
        }
        assert_eq!(clocks[0].len(), n as usize);
        assert_eq!(shared, waits, "every wait of the last rounds shares the recording stream's base");
    }

    /// One step of a random program over a few clocks.
    #[derive(Debug, Clone)]
    enum Op {
        Raise(usize, u64, u64),
        Merge(usize, usize),
        Copy(usize, usize),
        Merged(usize, usize, u64, u64),
        Retain(usize, u32),
    }

    const CLOCKS: usize = 4;
    const STREAMS: u64 = 24;

    fn op() -> impl Strategy<Value = Op> {
        let c = 0..CLOCKS;
        let s = 0..STREAMS;
        prop_oneof![
            4 => (c.clone(), s.clone(), 0..40u64).prop_map(|(i, s, p)| Op::Raise(i, s, p)),
            3 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Merge(i, j)),
            2 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Copy(i, j)),
            4 => (c.clone(), c.clone(), s, 0..40u64).prop_map(|(i, j, s, p)| Op::Merged(i, j, s, p)),
            1 => (c, any::<u32>()).prop_map(|(i, m)| Op::Retain(i, m)),
        ]
    }

    /// A plain vector clock: the reference.
    type Reference = BTreeMap<u64, u64>;

    fn join(a: &mut Reference, b: &Reference) {
        for (&s, &p) in b {
            let e = a.entry(s).or_insert(p);
            *e = (*e).max(p);
        }
    }

    fn ref_covers(a: &Reference, b: &Reference) -> bool {
        b.iter().all(|(s, &p)| a.get(s).is_some_and(|&q| q >= p))
    }

    fn agrees(c: &Clock, r: &Reference) -> std::result::Result<(), TestCaseError> {
        prop_assert_eq!(c.iter().collect::<Vec<_>>(), r.iter().map(|(&s, &p)| (s, p)).collect::<Vec<_>>());
        prop_assert_eq!(c.len(), r.len());
        for s in 0..STREAMS {
            prop_assert_eq!(c.get(s), r.get(&s).copied().unwrap_or(0));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The shared-base clock answers every query as a plain vector clock does, on
        /// random programs of raises, joins, copies and prunings, including the paths that
        /// decide from the bases' ids alone (positions grow with the step, as streams'
        /// do, so that joins often cover one side).
        #[test]
        fn clocks_agree_with_a_plain_vector_clock(ops in proptest::collection::vec(op(), 1..300)) {
            let mut clocks: Vec<Clock> = vec![Clock::default(); CLOCKS];
            let mut refs: Vec<Reference> = vec![Reference::new(); CLOCKS];
            for (t, op) in ops.into_iter().enumerate() {
                let t = t as u64;
                match op {
                    Op::Raise(i, s, p) => {
                        clocks[i].raise(s, t + p);
                        let e = refs[i].entry(s).or_insert(t + p);
                        *e = (*e).max(t + p);
                    }
                    Op::Merge(i, j) => {
                        let other = clocks[j].clone();
                        clocks[i].merge(&other);
                        let r = refs[j].clone();
                        join(&mut refs[i], &r);
                    }
                    Op::Copy(i, j) => {
                        clocks[i] = clocks[j].clone();
                        refs[i] = refs[j].clone();
                    }
                    Op::Merged(i, j, s, p) => {
                        let mut r = refs[i].clone();
                        join(&mut r, &refs[j]);
                        let e = r.entry(s).or_insert(t + p);
                        *e = (*e).max(t + p);
                        let out = clocks[i].merged(&clocks[j], (s, t + p));
                        // `None` when the point is known and `other` covered: an absent
                        // stream is at 0, so a point at 0 names no new stream then.
                        let unchanged = ref_covers(&refs[i], &refs[j]) && refs[i].get(&s).copied().unwrap_or(0) >= t + p;
                        prop_assert_eq!(out.is_none(), unchanged);
                        if let Some(c) = out {
                            clocks[i] = c;
                            refs[i] = r;
                        }
                    }
                    Op::Retain(i, m) => {
                        clocks[i].retain(|s, _| m & (1 << s) != 0);
                        refs[i].retain(|&s, _| m & (1 << s) != 0);
                    }
                }
                for i in 0..CLOCKS {
                    agrees(&clocks[i], &refs[i])?;
                    for j in 0..CLOCKS {
                        prop_assert_eq!(clocks[i].covers(&clocks[j]), ref_covers(&refs[i], &refs[j]));
                        prop_assert_eq!(clocks[i] == clocks[j], refs[i] == refs[j]);
                    }
                }
            }
        }
    }
}
