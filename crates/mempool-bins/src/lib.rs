//! Segregated size classes with an exact best fit: the smallest block that fits, then the
//! lowest address.
//!
//! The emulator's pool (contract §4 asks for exactly this choice among cached blocks and
//! free ranges) and the small-block layer (among the free ranges of a stream's blocks) both
//! keep their free blocks here. A single ordered set answers the question but costs a tree
//! walk (and node allocations) on every allocation and free. [`SizeBins`] splits blocks
//! into size classes instead: one class per size up to 64 units (the unit is the
//! granularity every length is a multiple of), then eight classes per power of two. Each
//! class is a binary min-heap ordered by `(len, addr)`, so
//!
//! - a class above the request's, or an exact class, answers with its root in O(1);
//! - the request's own class (when it spans several sizes) is searched from the root,
//!   skipping only subtrees whose root is already too small or no better than the best
//!   found: the result is still the exact `(len, addr)` minimum among blocks that fit;
//! - insertion and removal of any block are O(log n) in its class, with no allocation
//!   once the class has grown (a heap keeps its capacity when emptied).
//!
//! The most recently inserted block waits outside the heaps (the *hot* entry) until the
//! next insertion, and every query compares it too: a stream that frees and allocates
//! the same size in turn then never touches a heap.
//!
//! The blocks themselves live in the caller's slab; a heap entry carries the key and the
//! block's id, and the caller stores each block's heap slot ([`Slots`]).
//!
//! # Example
//!
//! ```
//! use mempool_bins::{Entry, SizeBins, Slots};
//!
//! /// The slab: block `id`'s heap slot at index `id`.
//! struct Slab(Vec<u32>);
//! impl Slots for Slab {
//!     fn slot(&self, id: u32) -> u32 {
//!         self.0[id as usize]
//!     }
//!     fn set_slot(&mut self, id: u32, slot: u32) {
//!         self.0[id as usize] = slot;
//!     }
//! }
//!
//! let mut slab = Slab(vec![0; 3]);
//! let mut bins = SizeBins::new(512);
//! bins.insert(&mut slab, Entry { len: 4096, addr: 0x10000, id: 0 });
//! bins.insert(&mut slab, Entry { len: 1024, addr: 0x20000, id: 1 });
//! bins.insert(&mut slab, Entry { len: 1024, addr: 0x08000, id: 2 });
//! // The smallest that fits, then the lowest address.
//! assert_eq!(bins.best(600).map(|e| e.id), Some(2));
//! assert_eq!(bins.best(2048).map(|e| e.id), Some(0));
//! bins.remove(&mut slab, 2, 1024);
//! assert_eq!(bins.best(600).map(|e| e.id), Some(1));
//! assert_eq!(bins.best(8192), None);
//! ```

#![deny(missing_docs)]

/// Where each block's heap slot is stored (the caller's slab).
pub trait Slots {
    /// The heap slot of block `id`.
    fn slot(&self, id: u32) -> u32;
    /// Records that block `id` now sits at heap slot `slot`.
    fn set_slot(&mut self, id: u32, slot: u32);
}

/// One block in a class heap: its key `(len, addr)` and its id in the caller's slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The block's length, a multiple of the bins' granularity.
    pub len: u64,
    /// The block's address: the tie-break between blocks of one length.
    pub addr: u64,
    /// The block's id in the caller's slab (its heap slot is stored there).
    pub id: u32,
}

impl Entry {
    fn key(&self) -> (u64, u64) {
        (self.len, self.addr)
    }
}

/// The slot recorded for the hot entry.
const HOT: u32 = u32::MAX;

/// Sizes up to this many granules have a class of their own.
const EXACT: u64 = 64;
/// Number of classes: the exact ones, then 8 per power of two up to 2^63 granules.
const CLASSES: usize = EXACT as usize + (64 - 6) * 8;
const WORDS: usize = CLASSES.div_ceil(64);
// `SizeBins::words` has a bit per word.
const _: () = assert!(WORDS < 64);

/// Blocks indexed by size for exact best fit (see the crate docs).
#[derive(Debug)]
pub struct SizeBins {
    /// log2 of the granularity: every length is a multiple of it.
    shift: u32,
    /// Per class, a min-heap of entries by `(len, addr)`; grown on demand.
    classes: Vec<Vec<Entry>>,
    /// Bit `c` is set while class `c` holds blocks.
    nonempty: [u64; WORDS],
    /// Bit `w` is set while word `w` of `nonempty` is not zero: the next class is found
    /// without scanning the words between.
    words: u64,
    /// The most recently inserted block, kept out of the heaps (see the crate docs).
    hot: Option<Entry>,
    count: usize,
}

/// The class of a block of `g` granules (`g >= 1`): monotonic in `g`.
#[inline]
fn class_of(g: u64) -> usize {
    if g <= EXACT {
        return (g - 1) as usize;
    }
    let fl = 63 - g.leading_zeros(); // >= 6
    let sl = (g >> (fl - 3)) & 7;
    EXACT as usize + (fl as usize - 6) * 8 + sl as usize
}

impl SizeBins {
    /// Empty bins for lengths that are multiples of `gran` (a length below it counts as
    /// one unit). A `gran` that is not a power of two is rounded up to one (0 to 1); a
    /// length that is not a multiple of it still finds its class, by its whole units.
    pub fn new(gran: u64) -> SizeBins {
        let gran = gran.max(1).checked_next_power_of_two().unwrap_or(1 << 63);
        SizeBins {
            shift: gran.trailing_zeros(),
            classes: Vec::new(),
            nonempty: [0; WORDS],
            words: 0,
            hot: None,
            count: 0,
        }
    }

    #[inline]
    fn class(&self, len: u64) -> usize {
        class_of((len >> self.shift).max(1))
    }

    /// Number of blocks held.
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no block is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The first non-empty class at or above `c`.
    #[inline]
    fn next_class(&self, c: usize) -> Option<usize> {
        let w = c / 64;
        if w >= WORDS {
            return None;
        }
        let bits = self.nonempty[w] & (!0u64 << (c % 64));
        if bits != 0 {
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        // The next non-empty word above `w` (WORDS < 64, so the shift is in range).
        let above = self.words & (!0u64 << (w + 1));
        if above == 0 {
            return None;
        }
        let w = above.trailing_zeros() as usize;
        Some(w * 64 + self.nonempty[w].trailing_zeros() as usize)
    }

    /// Adds a block (as the hot entry; the previous one moves into its heap).
    ///
    /// Always inlined, so that `e` stays in registers: read back from the caller's stack
    /// as a whole, an entry just written field by field stalls the load on the stores.
    #[inline(always)]
    pub fn insert(&mut self, slots: &mut impl Slots, e: Entry) {
        if let Some(old) = self.hot.replace(e) {
            self.heap_insert(slots, old);
        }
        if slots.slot(e.id) != HOT {
            // Written only when it changes: a block freed and taken in turn keeps its
            // slot, and its line stays clean.
            slots.set_slot(e.id, HOT);
        }
        self.count += 1;
    }

    #[inline(never)]
    fn heap_insert(&mut self, slots: &mut impl Slots, e: Entry) {
        let c = self.class(e.len);
        if self.classes.len() <= c {
            self.classes.resize_with(c + 1, Vec::new);
        }
        let heap = &mut self.classes[c];
        heap.push(e);
        let i = heap.len() - 1;
        sift_up(heap, slots, i);
        self.nonempty[c / 64] |= 1 << (c % 64);
        self.words |= 1 << (c / 64);
    }

    /// Removes block `id` of length `len`.
    ///
    /// # Panics
    ///
    /// When block `id` is not held with length `len` (the caller's bookkeeping is wrong):
    /// a heap slot out of range, or a class with nothing in it.
    #[inline]
    pub fn remove(&mut self, slots: &mut impl Slots, id: u32, len: u64) {
        self.count -= 1;
        if slots.slot(id) == HOT {
            debug_assert_eq!(self.hot.map(|h| h.id), Some(id), "the hot entry");
            self.hot = None;
            return;
        }
        let c = self.class(len);
        let i = slots.slot(id) as usize;
        debug_assert_eq!(self.classes[c][i].id, id, "the slot of a held block");
        self.remove_at(slots, c, i);
    }

    /// Takes the best fit for `len` (what [`SizeBins::best`] returns) when it is exactly
    /// `len` bytes long, as an allocation served by a whole block wants it; `None`, with
    /// nothing changed, when the best fit is longer or there is none.
    ///
    /// When the request's class is empty or its root (the class's smallest block, then
    /// lowest address) has the length, this reads the hot entry and that root only: every
    /// block of an earlier class is shorter and every block of a later one longer. Any
    /// other root (a class spanning several lengths, lengths off the unit) leaves the
    /// choice to the general search.
    #[inline]
    pub fn take_exact(&mut self, slots: &mut impl Slots, len: u64) -> Option<Entry> {
        let c = self.class(len);
        let root = self.classes.get(c).and_then(|h| h.first()).copied();
        if root.is_some_and(|r| r.len != len) {
            let e = self.best(len).filter(|e| e.len == len)?;
            self.remove(slots, e.id, len);
            return Some(e);
        }
        match self.hot {
            Some(h) if h.len == len && root.is_none_or(|r| h.addr < r.addr) => {
                self.hot = None;
                self.count -= 1;
                Some(h)
            }
            _ => {
                let r = root?;
                self.count -= 1;
                self.remove_at(slots, c, 0);
                Some(r)
            }
        }
    }

    /// Removes the entry at index `i` of class `c`'s heap (`count` already lowered).
    fn remove_at(&mut self, slots: &mut impl Slots, c: usize, i: usize) {
        let heap = &mut self.classes[c];
        let last = heap.pop().expect("a held block's class is not empty");
        if i == 0 && !heap.is_empty() {
            // The class's minimum, as an allocation takes it: the hole left at the root
            // sinks to a leaf along the smaller children, and the last entry rises from
            // there (it came from the bottom, so it rarely rises far). One comparison per
            // level instead of two.
            let hole = sink_hole(heap, slots);
            heap[hole] = last;
            sift_up(heap, slots, hole);
        } else if i < heap.len() {
            let moved_up = last.key() < heap[i].key();
            heap[i] = last;
            slots.set_slot(last.id, i as u32);
            if moved_up {
                sift_up(heap, slots, i);
            } else {
                sift_down(heap, slots, i);
            }
        }
        if heap.is_empty() {
            self.nonempty[c / 64] &= !(1 << (c % 64));
            if self.nonempty[c / 64] == 0 {
                self.words &= !(1 << (c / 64));
            }
        }
    }

    /// The better of the hot entry (if it fits and satisfies `pred`) and `other`.
    fn with_hot(&self, len: u64, other: Option<Entry>, pred: impl FnOnce(&Entry) -> bool) -> Option<Entry> {
        match self.hot {
            Some(h) if h.len >= len && other.is_none_or(|o| h.key() < o.key()) && pred(&h) => Some(h),
            _ => other,
        }
    }

    /// The exact best fit for `len`: the smallest block of at least `len` bytes, then the
    /// lowest address.
    #[inline]
    pub fn best(&self, len: u64) -> Option<Entry> {
        if self.count == usize::from(self.hot.is_some()) {
            // The heaps are empty.
            return self.with_hot(len, None, |_| true);
        }
        let c0 = self.class(len);
        let found = match self.next_class(c0) {
            // Every block of a class above fits; so does every block of the request's own
            // class when its minimum does (an exact class, lengths multiples of the unit).
            // The heap's root is the class's minimum.
            Some(c) if c > c0 || c < EXACT as usize && self.classes[c][0].len >= len => Some(self.classes[c][0]),
            Some(_) => self.heaps_where(len, |_| true),
            None => None,
        };
        self.with_hot(len, found, |_| true)
    }

    /// The smallest block (then lowest address) of at least `len` bytes for which `pred`
    /// holds.
    pub fn best_where(&self, len: u64, mut pred: impl FnMut(&Entry) -> bool) -> Option<Entry> {
        let found = self.heaps_where(len, &mut pred);
        self.with_hot(len, found, pred)
    }

    /// [`SizeBins::best_where`] over the heaps only.
    fn heaps_where(&self, len: u64, mut pred: impl FnMut(&Entry) -> bool) -> Option<Entry> {
        let mut c = self.class(len);
        // A depth-first walk from the root: the stack holds at most one pending node per
        // level below the root, plus the two children just pushed, so a fixed array bounds
        // it (a heap holds fewer than 2^32 entries, its slots being `u32`: at most 32
        // levels).
        let mut stack = [0u32; 48];
        while let Some(found) = self.next_class(c) {
            let heap = &self.classes[found];
            let mut best: Option<Entry> = None;
            let mut depth = 1;
            stack[0] = 0;
            while depth > 0 {
                depth -= 1;
                let i = stack[depth] as usize;
                let e = &heap[i];
                if best.is_some_and(|b| e.key() >= b.key()) {
                    // Its whole subtree is no better than what was found.
                    continue;
                }
                if e.len >= len && pred(e) {
                    // Nothing below it in the heap is smaller.
                    best = Some(*e);
                    continue;
                }
                for child in [2 * i + 1, 2 * i + 2] {
                    if child < heap.len() {
                        stack[depth] = child as u32;
                        depth += 1;
                    }
                }
            }
            if best.is_some() {
                // Later classes hold only longer blocks.
                return best;
            }
            c = found + 1;
        }
        None
    }

    /// Every block held, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.hot.iter().chain(self.classes.iter().flatten())
    }

    /// The longest block's length (0 when empty).
    pub fn largest(&self) -> u64 {
        let top = (0..WORDS).rev().find(|&w| self.nonempty[w] != 0);
        let heaps = top.map_or(0, |w| {
            let c = w * 64 + 63 - self.nonempty[w].leading_zeros() as usize;
            self.classes[c].iter().map(|e| e.len).max().unwrap_or(0)
        });
        heaps.max(self.hot.map_or(0, |h| h.len))
    }

    /// Checks the heaps, the slots and the class bits, panicking at the first that is
    /// wrong (for tests of the caller's bookkeeping).
    pub fn check(&self, slots: &impl Slots) {
        let mut n = usize::from(self.hot.is_some());
        if let Some(h) = self.hot {
            assert_eq!(slots.slot(h.id), HOT, "the hot entry's slot");
        }
        for (w, word) in self.nonempty.iter().enumerate() {
            assert_eq!(self.words >> w & 1 == 1, *word != 0, "summary bit {w}");
        }
        for (c, heap) in self.classes.iter().enumerate() {
            assert_eq!(self.nonempty[c / 64] >> (c % 64) & 1 == 1, !heap.is_empty(), "class bit {c}");
            for (i, e) in heap.iter().enumerate() {
                assert_eq!(self.class(e.len), c, "a block sits in its class");
                assert_eq!(slots.slot(e.id) as usize, i, "a block's slot");
                if i > 0 {
                    assert!(heap[(i - 1) / 2].key() < e.key(), "heap order");
                }
            }
            n += heap.len();
        }
        assert_eq!(n, self.count);
    }
}

fn sift_up(heap: &mut [Entry], slots: &mut impl Slots, mut i: usize) {
    let e = heap[i];
    while i > 0 {
        let parent = (i - 1) / 2;
        if heap[parent].key() <= e.key() {
            break;
        }
        heap[i] = heap[parent];
        slots.set_slot(heap[i].id, i as u32);
        i = parent;
    }
    heap[i] = e;
    slots.set_slot(e.id, i as u32);
}

/// Moves the hole at the root down to a leaf, each level's smaller child rising into it;
/// returns the leaf where the hole ends (the caller fills it).
fn sink_hole(heap: &mut [Entry], slots: &mut impl Slots) -> usize {
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            return i;
        }
        let r = l + 1;
        let child = if r < heap.len() && heap[r].key() < heap[l].key() { r } else { l };
        heap[i] = heap[child];
        slots.set_slot(heap[i].id, i as u32);
        i = child;
    }
}

fn sift_down(heap: &mut [Entry], slots: &mut impl Slots, mut i: usize) {
    let e = heap[i];
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            break;
        }
        let r = l + 1;
        let child = if r < heap.len() && heap[r].key() < heap[l].key() { r } else { l };
        if heap[child].key() >= e.key() {
            break;
        }
        heap[i] = heap[child];
        slots.set_slot(heap[i].id, i as u32);
        i = child;
    }
    heap[i] = e;
    slots.set_slot(e.id, i as u32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    impl Slots for HashMap<u32, u32> {
        fn slot(&self, id: u32) -> u32 {
            // A block never held has no slot yet (the pool's slab starts it at 0).
            self.get(&id).copied().unwrap_or(0)
        }
        fn set_slot(&mut self, id: u32, slot: u32) {
            self.insert(id, slot);
        }
    }

    #[test]
    fn classes_are_monotonic_and_dense() {
        let mut last = 0;
        for g in 1..100_000u64 {
            let c = class_of(g);
            assert!(c == last || c == last + 1, "g {g}: class {c} after {last}");
            last = c;
        }
        assert_eq!(class_of(u64::MAX), CLASSES - 1);
    }

    /// Random inserts, removals and queries agree with an ordered set of `(len, addr)`.
    #[test]
    fn best_fit_matches_an_ordered_set() {
        agrees_with_an_ordered_set(4096, false);
    }

    /// The same with lengths and requests that are not multiples of the unit, and with
    /// units that are not powers of two (rounded up).
    #[test]
    fn lengths_off_the_unit_still_get_the_exact_best_fit() {
        agrees_with_an_ordered_set(4096, true);
        agrees_with_an_ordered_set(3000, true);
        agrees_with_an_ordered_set(0, true);
    }

    /// A xorshift generator from `seed`: the same sequence in every run.
    fn xorshift(mut rng: u64) -> impl FnMut() -> u64 {
        move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        }
    }

    /// An allocator's pattern: free a block at a random address, then take the best fit
    /// of one exact size, which is a class's root whenever the hot entry is not better.
    /// Every root taken leaves the heaps ordered and agrees with an ordered set.
    #[test]
    fn taking_roots_keeps_every_class_ordered() {
        const G: u64 = 4096;
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut bins = SizeBins::new(G);
        let mut slots = HashMap::new();
        let mut set = BTreeSet::new();
        let mut addrs = BTreeSet::new();
        for step in 0..30_000u32 {
            let r = next();
            let g = 1 + r % 4;
            // A fresh address each time, spread over a wide range.
            let addr = loop {
                let a = (next() % (1 << 20)) * G;
                if addrs.insert(a) {
                    break a;
                }
            };
            // The block's id is its step.
            bins.insert(&mut slots, Entry { len: g * G, addr, id: step });
            set.insert((g * G, addr, step));
            let want = (1 + (r >> 8) % 4) * G;
            let expect = set.range((want, 0, 0)..).next().copied();
            if step % 3 == 1 {
                let got = bins.best(want);
                assert_eq!(got.map(|e| (e.len, e.addr, e.id)), expect, "best fit for {want}");
                if let Some(e) = got {
                    bins.remove(&mut slots, e.id, e.len);
                    set.remove(&(e.len, e.addr, e.id));
                }
            } else if step % 3 == 2 {
                // An allocation served only by a whole block of its length.
                let expect = expect.filter(|k| k.0 == want);
                let got = bins.take_exact(&mut slots, want);
                assert_eq!(got.map(|e| (e.len, e.addr, e.id)), expect, "exact fit for {want}");
                if let Some(k) = expect {
                    set.remove(&k);
                }
            }
            if step % 500 == 0 {
                bins.check(&slots);
            }
        }
        bins.check(&slots);
        assert_eq!(bins.len(), set.len());
        // Drained by best fit, in key order.
        while let Some(e) = bins.best(1) {
            assert_eq!(Some((e.len, e.addr, e.id)), set.pop_first());
            bins.remove(&mut slots, e.id, e.len);
        }
        assert!(set.is_empty() && bins.is_empty());
    }

    /// Random steps against a `BTreeSet` with unit `unit`; `off`: lengths and requests
    /// shortened by up to a unit.
    fn agrees_with_an_ordered_set(unit: u64, off: bool) {
        const G: u64 = 4096;
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut bins = SizeBins::new(unit);
        let mut slots = HashMap::new();
        let short = |r: u64| if off { (r >> 40) % G } else { 0 };
        let mut set = BTreeSet::new();
        let mut held: Vec<Entry> = Vec::new();
        for step in 0..20_000u32 {
            let r = next();
            // Sizes cluster so that equal lengths (address ties) are common.
            let g = match r % 4 {
                0 => 1 + (r >> 8) % 8,
                1 => 60 + (r >> 8) % 20,
                2 => 100 + (r >> 8) % 400,
                _ => 1 + (r >> 8) % 5000,
            };
            if r % 3 != 0 || held.is_empty() {
                let e = Entry { len: g * G - short(r), addr: u64::from(step) * G, id: step };
                bins.insert(&mut slots, e);
                set.insert((e.len, e.addr));
                held.push(e);
            } else {
                let e = held.swap_remove((r >> 20) as usize % held.len());
                bins.remove(&mut slots, e.id, e.len);
                set.remove(&(e.len, e.addr));
            }
            let r = next();
            let want = (1 + (r % 600)) * G - short(r);
            let expect = set.range((want, 0)..).next().copied();
            assert_eq!(bins.best(want).map(|e| (e.len, e.addr)), expect, "best fit for {want}");
            if step % 7 == 0 && !held.is_empty() {
                // Whole blocks of a length asked for (a held block's, or the random one),
                // off the unit or not: the best fit when it has that length, taken out.
                let want = if r & (1 << 20) == 0 { held[(r >> 21) as usize % held.len()].len } else { want };
                let exact = set.range((want, 0)..).next().copied().filter(|k| k.0 == want);
                let got = bins.take_exact(&mut slots, want);
                assert_eq!(got.map(|e| (e.len, e.addr)), exact, "exact fit for {want}");
                if let Some(e) = got {
                    set.remove(&(e.len, e.addr));
                    held.retain(|h| h.id != e.id);
                }
            } else {
                let odd = |e: &Entry| (e.addr / G) % 2 == 1;
                let expect = set.range((want, 0)..).find(|k| (k.1 / G) % 2 == 1).copied();
                assert_eq!(bins.best_where(want, odd).map(|e| (e.len, e.addr)), expect, "predicated fit");
            }
            assert_eq!(bins.largest(), set.last().map_or(0, |k| k.0));
            if step % 1000 == 0 {
                bins.check(&slots);
            }
        }
        assert_eq!(bins.len(), set.len());
    }
}
