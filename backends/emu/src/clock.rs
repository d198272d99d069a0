//! Vector clocks: how far a point of one stream is ordered after every other stream, and
//! what the host has observed complete ([`HostClock`]).
//!
//! A [`Clock`] answers as a plain vector clock (a position per stream, absent streams at
//! 0), but is built so that a copy costs nothing and a join costs what changed rather
//! than the number of streams (`tests/benches/graph.rs`: a pipeline's hand-offs, a ring):
//!
//! - **A shared spine of chunks.** The entries live in chunks of [`WIDTH`] consecutive
//!   stream ids, each an immutable [`Arc`]; the sorted list of a clock's chunks (its
//!   *spine*) is an `Arc` too, shared by every clock built from it. On top of the spine a
//!   clock keeps up to [`EXTRA`] entries not yet written into chunks; one more writes
//!   them (copying the chunks they fall in, and the spine, when shared). A join by chunks
//!   keeps the chunk of the side that covers the other, so clocks built from one another
//!   keep sharing the chunks nobody changed, and skips chunks that are pointer-equal.
//! - **Lineages and origins.** A stream's successive clocks form a *lineage*: one id, a
//!   version raised at every change, and entries that only grow (a change that drops
//!   entries, a pruning, starts a new lineage; so does a copy made for another use), so a
//!   later version covers every earlier one. A clock may also name an *origin*, a version
//!   of some lineage, with the few entries (at most [`OVER`]) it holds above that version:
//!   the clock is at most the origin joined with those entries. When a stream waits for a
//!   record of the lineage its clock came from (made at or after its origin), the record
//!   covers everything the stream has but those few entries: the join is the record's
//!   clock, spine shared, with those entries and the record's point raised, found from the
//!   ids without reading the entries. The converse (the record's origin is a version of
//!   the waiting stream's lineage) costs the record's few entries the same way.
//! - **Exact "nothing changed".** Each clock keeps its number of entries and the sum of
//!   its positions; a join covers both sides entry by entry, so it equals this clock
//!   exactly when both numbers are unchanged.
//!
//! Costs, with `n` the streams a clock names, `k` the entries a join raises above the
//! record (at most [`OVER`] + 1 when the origin matches): `get` is a look at the extra
//! entries and two binary searches; a record shares the clock (an `Arc`); a join whose
//! origin matches costs `O(k)` and, once every few joins (when the extra entries
//! overflow), a copy of the spine (`n / WIDTH` references) and of a chunk per entry
//! written (`WIDTH` positions each); any other join costs `n / WIDTH` plus `WIDTH` per
//! chunk that differs on both sides. A synchronization copies the stream's clock (an
//! `Arc` of the spine) but still visits every entry to mark what the host observed.

use crate::sync::{Mutex, MutexGuard, PoisonError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many consecutive stream ids one chunk holds.
const WIDTH: usize = 32;

/// How many entries a clock may hold above its origin before it forgets the origin.
const OVER: usize = 4;

/// Lineage ids: unique for the life of the process. A standard atomic under loom too
/// (`sync.rs`): ids are only compared for equality, and nothing waits on them.
static NEXT_LINEAGE: AtomicU64 = AtomicU64::new(1);

fn fresh_lineage() -> u64 {
    NEXT_LINEAGE.fetch_add(1, Ordering::Relaxed)
}

/// The positions of [`WIDTH`] consecutive streams, immutable once shared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chunk {
    /// Which of the streams the clock names (bit `i`: stream `key * WIDTH + i`).
    mask: u32,
    /// The sum of the named positions.
    sum: u128,
    /// The positions; 0 for streams not named.
    pos: [u64; WIDTH],
}

impl Chunk {
    fn empty() -> Chunk {
        Chunk { mask: 0, sum: 0, pos: [0; WIDTH] }
    }

    /// Whether every stream `other` names is named here, at least as high.
    fn covers(&self, other: &Chunk) -> bool {
        other.mask & !self.mask == 0 && self.pos.iter().zip(&other.pos).all(|(a, b)| a >= b)
    }

    /// Raises slot `i` to at least `p`; whether that changed anything.
    fn raise(&mut self, i: usize, p: u64) -> bool {
        let bit = 1u32 << i;
        if self.mask & bit != 0 {
            if self.pos[i] >= p {
                return false;
            }
            self.sum += u128::from(p - self.pos[i]);
        } else {
            self.mask |= bit;
            self.sum += u128::from(p);
        }
        self.pos[i] = p;
        true
    }
}

/// A version of a lineage: `(id, version)`.
type Version = (u64, u64);

/// Up to `N` entries, by stream, each the highest raise noted.
#[derive(Debug, Clone, Copy)]
struct Few<const N: usize> {
    n: u32,
    e: [(u64, u64); N],
}

/// A clock's entries above its origin ([`OVER`] at most).
type Over = Few<OVER>;

impl<const N: usize> Default for Few<N> {
    fn default() -> Few<N> {
        Few { n: 0, e: [(0, 0); N] }
    }
}

impl<const N: usize> Few<N> {
    fn entries(&self) -> &[(u64, u64)] {
        &self.e[..self.n as usize]
    }

    /// Notes entry `(s, p)`; false when there is no room left.
    fn note(&mut self, s: u64, p: u64) -> bool {
        let n = self.n as usize;
        if let Some(e) = self.e[..n].iter_mut().find(|e| e.0 == s) {
            e.1 = e.1.max(p);
            return true;
        }
        if n == N {
            return false;
        }
        self.e[n] = (s, p);
        self.n += 1;
        true
    }
}

/// The chunks of a clock: `(key, chunk)` by key, every chunk naming at least one stream.
type Spine = Vec<(u64, Arc<Chunk>)>;

/// How many entries a clock holds above its spine before it writes them into chunks.
const EXTRA: usize = 6;

/// For each stream id, the highest position of that stream known to be ordered before
/// the point this clock describes. Absent streams are at position 0. See the module
/// docs for the layout.
#[derive(Debug)]
pub(crate) struct Clock {
    /// The chunks, shared with the clocks this one was built from or gave.
    spine: Arc<Spine>,
    /// Entries above the spine's (or of streams it does not name), not yet written into
    /// chunks: the clock's entries are the spine's raised to these.
    extra: Few<EXTRA>,
    /// The number of entries and the sum of their positions.
    len: usize,
    sum: u128,
    /// This clock's lineage and version.
    id: u64,
    ver: u64,
    /// A version this clock is at most, joined with `over` (each entry at most this
    /// clock's); `None`: unknown.
    origin: Option<Version>,
    over: Over,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock {
            spine: Arc::new(Vec::new()),
            extra: Few::default(),
            len: 0,
            sum: 0,
            id: fresh_lineage(),
            ver: 0,
            origin: None,
            over: Over::default(),
        }
    }
}

/// A copy starts a lineage of its own (two copies may grow apart), with the same entries
/// (shared) and the same origin.
impl Clone for Clock {
    fn clone(&self) -> Clock {
        Clock { id: fresh_lineage(), ver: 0, ..self.successor() }
    }
}

impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        self.len == other.len && self.sum == other.sum && self.iter().eq(other.iter())
    }
}

impl Eq for Clock {}

/// The chunk key and slot of `stream`.
fn split(stream: u64) -> (u64, usize) {
    (stream / WIDTH as u64, (stream % WIDTH as u64) as usize)
}

/// Raises `stream` to at least `pos` in `spine`, copying the chunk if it is shared.
fn raise_in(spine: &mut Spine, stream: u64, pos: u64) {
    let (key, i) = split(stream);
    let c = match spine.binary_search_by_key(&key, |c| c.0) {
        Ok(c) => c,
        Err(c) => {
            spine.insert(c, (key, Arc::new(Chunk::empty())));
            c
        }
    };
    Arc::make_mut(&mut spine[c].1).raise(i, pos);
}

/// Whether `stream` is named in `spine`, and its position there.
fn lookup_in(spine: &Spine, stream: u64) -> (bool, u64) {
    let (key, i) = split(stream);
    match spine.binary_search_by_key(&key, |c| c.0) {
        Ok(c) => {
            let ch = &spine[c].1;
            (ch.mask & (1 << i) != 0, ch.pos[i])
        }
        Err(_) => (false, 0),
    }
}

impl Clock {
    /// The next version of this clock's lineage, with the same entries (shared): what a
    /// change of this clock produces, and the caller puts in its place.
    #[inline]
    fn successor(&self) -> Clock {
        Clock {
            spine: Arc::clone(&self.spine),
            extra: self.extra,
            len: self.len,
            sum: self.sum,
            id: self.id,
            ver: self.ver + 1,
            origin: self.origin,
            over: self.over,
        }
    }

    /// Whether the clock names `stream`, and its position.
    fn lookup(&self, stream: u64) -> (bool, u64) {
        match self.extra.entries().iter().find(|e| e.0 == stream) {
            Some(e) => (true, e.1),
            None => lookup_in(&self.spine, stream),
        }
    }

    /// The known position of `stream`.
    pub(crate) fn get(&self, stream: u64) -> u64 {
        self.lookup(stream).1
    }

    /// The spine with the extra entries written in.
    fn written(&self) -> Spine {
        let mut spine = (*self.spine).clone();
        for &(s, p) in self.extra.entries() {
            raise_in(&mut spine, s, p);
        }
        spine
    }

    /// Writes the extra entries into chunks (copying those shared).
    fn write_extra(&mut self) {
        if self.extra.n != 0 {
            let extra = std::mem::take(&mut self.extra);
            let spine = Arc::make_mut(&mut self.spine);
            for &(s, p) in extra.entries() {
                raise_in(spine, s, p);
            }
        }
    }

    /// Raises the entry of `stream` to at least `pos`, in this version (no new one);
    /// whether that changed anything.
    fn raise_here(&mut self, stream: u64, pos: u64) -> bool {
        let (named, old) = self.lookup(stream);
        if named && old >= pos {
            return false;
        }
        if !named {
            self.len += 1;
        }
        self.sum += u128::from(pos - old);
        if !self.extra.note(stream, pos) {
            self.write_extra();
            self.extra.note(stream, pos);
        }
        if self.origin.is_some() && !self.over.note(stream, pos) {
            self.forget_origin();
        }
        true
    }

    fn forget_origin(&mut self) {
        self.origin = None;
        self.over = Over::default();
    }

    /// Raises the entry of `stream` to at least `pos`.
    pub(crate) fn raise(&mut self, stream: u64, pos: u64) {
        if self.raise_here(stream, pos) {
            self.ver += 1;
        }
    }

    /// Raises every entry to at least `other`'s.
    pub(crate) fn merge(&mut self, other: &Clock) {
        *self = self.join(other, None);
    }

    /// This clock raised to `other` and to `point`, as the next version of this clock,
    /// which the caller puts in its place; `None` when that changes nothing.
    pub(crate) fn merged(&self, other: &Clock, point: (u64, u64)) -> Option<Arc<Clock>> {
        let c = self.join(other, Some(point));
        // The join covers this clock entry by entry: equal when nothing grew.
        (c.len != self.len || c.sum != self.sum).then(|| Arc::new(c))
    }

    /// The join of this clock, `other` and `point`, as the next version of this clock.
    #[inline(always)]
    fn join(&self, other: &Clock, mut point: Option<(u64, u64)>) -> Clock {
        let (mut c, raises): (Clock, &[(u64, u64)]) = if other.id == self.id && other.ver <= self.ver {
            // An earlier version of this lineage: covered.
            (self.successor(), &[])
        } else if self.origin.is_some_and(|(id, v)| other.id == id && other.ver >= v) {
            // `other` covers the origin: the join is `other` with this clock's few
            // entries above the origin raised, each noted above `other` when it raises it.
            let c = Clock {
                origin: Some((other.id, other.ver)),
                over: Over::default(),
                id: self.id,
                ver: self.ver + 1,
                ..other.successor()
            };
            (c, self.over.entries())
        } else if other.origin.is_some_and(|(id, v)| self.id == id && self.ver >= v) {
            // This clock covers `other`'s origin: the join raises `other`'s few entries.
            (self.successor(), other.over.entries())
        } else {
            (self.join_chunks(other), &[])
        };
        for &(s, mut p) in raises {
            // The point with them, in one raise when it is of the same stream.
            if let Some((_, q)) = point.filter(|q| q.0 == s) {
                p = p.max(q);
                point = None;
            }
            c.raise_here(s, p);
        }
        if let Some((s, p)) = point {
            c.raise_here(s, p);
        }
        c
    }

    /// The join by chunks (of the spines with their extra entries written in): the chunks
    /// of one side alone, or pointer-equal, or covering the other side's, are shared; the
    /// others are joined entry by entry. The result's origin is `other` when this clock
    /// holds at most [`OVER`] entries above it, else this clock's own when `other` raises
    /// few enough entries.
    fn join_chunks(&self, other: &Clock) -> Clock {
        let (wa, wb);
        let a: &Spine = if self.extra.n == 0 {
            &self.spine
        } else {
            wa = self.written();
            &wa
        };
        let b: &Spine = if other.extra.n == 0 {
            &other.spine
        } else {
            wb = other.written();
            &wb
        };
        let mut chunks = Vec::with_capacity(a.len().max(b.len()));
        // Entries of this clock above `other` (`None` once more than OVER) and of
        // `other` above this clock.
        let mut above_other = Some(Over::default());
        let mut above_self = Some(Over::default());
        let note_all = |over: &mut Option<Over>, key: u64, ch: &Chunk, than: Option<&Chunk>| {
            for i in 0..WIDTH {
                let named = ch.mask & (1 << i) != 0;
                if named && than.is_none_or(|t| t.mask & (1 << i) == 0 || t.pos[i] < ch.pos[i]) {
                    let fits = over.as_mut().is_some_and(|o| o.note(key * WIDTH as u64 + i as u64, ch.pos[i]));
                    if !fits {
                        *over = None;
                        return;
                    }
                }
            }
        };
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let ka = a.get(i).map_or(u64::MAX, |c| c.0);
            let kb = b.get(j).map_or(u64::MAX, |c| c.0);
            if ka < kb {
                if above_other.is_some() {
                    note_all(&mut above_other, ka, &a[i].1, None);
                }
                chunks.push(a[i].clone());
                i += 1;
            } else if kb < ka {
                if above_self.is_some() {
                    note_all(&mut above_self, kb, &b[j].1, None);
                }
                chunks.push(b[j].clone());
                j += 1;
            } else {
                let (x, y) = (&a[i].1, &b[j].1);
                if Arc::ptr_eq(x, y) || x.covers(y) {
                    if above_other.is_some() && !Arc::ptr_eq(x, y) {
                        note_all(&mut above_other, ka, x, Some(y));
                    }
                    chunks.push(a[i].clone());
                } else if y.covers(x) {
                    if above_self.is_some() {
                        note_all(&mut above_self, ka, y, Some(x));
                    }
                    chunks.push(b[j].clone());
                } else {
                    if above_other.is_some() {
                        note_all(&mut above_other, ka, x, Some(y));
                    }
                    if above_self.is_some() {
                        note_all(&mut above_self, ka, y, Some(x));
                    }
                    let mut ch = (**x).clone();
                    for s in 0..WIDTH {
                        if y.mask & (1 << s) != 0 {
                            ch.raise(s, y.pos[s]);
                        }
                    }
                    chunks.push((ka, Arc::new(ch)));
                }
                i += 1;
                j += 1;
            }
        }
        let len = chunks.iter().map(|c| c.1.mask.count_ones() as usize).sum();
        let sum = chunks.iter().map(|c| c.1.sum).sum();
        let (origin, over) = match (above_other, above_self) {
            (Some(o), _) => (Some((other.id, other.ver)), o),
            (None, Some(extra)) if self.origin.is_some() => {
                let mut over = self.over;
                if extra.entries().iter().all(|&(s, p)| over.note(s, p)) {
                    (self.origin, over)
                } else {
                    (None, Over::default())
                }
            }
            _ => (None, Over::default()),
        };
        Clock { spine: Arc::new(chunks), extra: Few::default(), len, sum, id: self.id, ver: self.ver + 1, origin, over }
    }

    /// How many streams the clock names.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Keeps the entries for which `keep(stream, pos)` holds. Dropping any starts a new
    /// lineage (the clock no longer covers its earlier versions) with no origin.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u64, u64) -> bool) {
        let mut changed = false;
        let spine = self.written();
        let mut chunks = Vec::with_capacity(spine.len());
        for (key, ch) in &spine {
            let mut mask = ch.mask;
            for i in 0..WIDTH {
                if mask & (1 << i) != 0 && !keep(key * WIDTH as u64 + i as u64, ch.pos[i]) {
                    mask &= !(1 << i);
                }
            }
            if mask == ch.mask {
                chunks.push((*key, Arc::clone(ch)));
                continue;
            }
            changed = true;
            if mask != 0 {
                let mut kept = Chunk::empty();
                for i in (0..WIDTH).filter(|i| mask & (1 << i) != 0) {
                    kept.raise(i, ch.pos[i]);
                }
                chunks.push((*key, Arc::new(kept)));
            }
        }
        if changed {
            self.len = chunks.iter().map(|c| c.1.mask.count_ones() as usize).sum();
            self.sum = chunks.iter().map(|c| c.1.sum).sum();
            self.spine = Arc::new(chunks);
            self.extra = Few::default();
            self.id = fresh_lineage();
            self.ver = 0;
            self.forget_origin();
        }
    }

    /// The entries, sorted by stream id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + use<> {
        let spine = if self.extra.n == 0 { Arc::clone(&self.spine) } else { Arc::new(self.written()) };
        (0..spine.len()).flat_map(move |c| {
            let (key, mask, pos) = (spine[c].0, spine[c].1.mask, spine[c].1.pos);
            (0..WIDTH).filter(move |&i| mask & (1 << i) != 0).map(move |i| (key * WIDTH as u64 + i as u64, pos[i]))
        })
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
mod tests;
