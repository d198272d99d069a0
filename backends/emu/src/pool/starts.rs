//! Which granules of a pool begin a range: a hierarchical bitset with a predecessor query.
//!
//! "Which range contains this address" is the greatest range start at or below it. An
//! ordered map answers that but pays a tree update (and node allocations) whenever a
//! range is split or merged. Here a range start is one bit per granule, and each level
//! above keeps one bit per non-zero word below, so setting or clearing a start touches
//! one word per level and the predecessor query climbs at most every level and back
//! down. The bottom level is allocated zeroed, so the pages of a large, mostly empty
//! pool are never touched.

use super::mapping::advise_huge;

/// Integers whose all-zero bit pattern is a valid value.
pub(crate) trait Zeroable: Copy {}
impl Zeroable for u32 {}
impl Zeroable for u64 {}

/// `n` zeros, allocated zeroed (so the kernel maps the pages only when they are
/// written) and, when large, on transparent huge pages where the host has them
/// ([`advise_huge`]), or `None` when the host cannot allocate them: a huge pool with a
/// small granularity is an error, not an abort.
pub(crate) fn zeroed<T: Zeroable>(n: usize) -> Option<Vec<T>> {
    let n = n.max(1);
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: the layout has a non-zero size (n >= 1 and T is an integer type).
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return None;
    }
    advise_huge(p.cast::<u8>(), layout.size());
    // SAFETY: `p` was allocated by the global allocator with the layout of `[T; n]`, so
    // it is a valid buffer of capacity `n`, and all `n` values are initialized (zero is
    // a valid `T`, see `Zeroable`).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// One bit per granule, with summary levels above (see the module docs).
#[derive(Debug)]
pub(crate) struct Starts {
    /// `levels[0]` has one bit per granule; `levels[k + 1]` one bit per word of `levels[k]`.
    levels: Vec<Vec<u64>>,
}

impl Starts {
    /// An empty set over `n` granules; `None` when the host cannot allocate it.
    pub(crate) fn new(n: usize) -> Option<Starts> {
        let mut levels = Vec::new();
        let mut words = n.div_ceil(64).max(1);
        loop {
            levels.push(zeroed(words)?);
            if words == 1 {
                break;
            }
            words = words.div_ceil(64);
        }
        Some(Starts { levels })
    }

    /// Marks granule `i` as a range start.
    pub(crate) fn insert(&mut self, i: u64) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let w = &mut level[i / 64];
            let was_zero = *w == 0;
            *w |= 1 << (i % 64);
            if !was_zero {
                return;
            }
            i /= 64;
        }
    }

    /// Clears granule `i`.
    pub(crate) fn remove(&mut self, i: u64) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let w = &mut level[i / 64];
            *w &= !(1 << (i % 64));
            if *w != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// Whether granule `i` is marked.
    #[cfg(test)]
    pub(crate) fn contains(&self, i: u64) -> bool {
        self.levels[0][(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// The greatest marked granule at or below `i`.
    pub(crate) fn pred(&self, i: u64) -> Option<u64> {
        let mut i = i as usize;
        let mut k = 0;
        // Climb until a word has a bit at or below the position.
        let found = loop {
            let level = self.levels.get(k)?;
            let w = level[i / 64] & (!0u64 >> (63 - i % 64));
            if w != 0 {
                break (i / 64) * 64 + 63 - w.leading_zeros() as usize;
            }
            if i < 64 {
                return None;
            }
            // Strictly below this word, one level up.
            i = i / 64 - 1;
            k += 1;
        };
        // Descend, taking the highest bit of each word.
        let mut i = found;
        while k > 0 {
            k -= 1;
            let w = self.levels[k][i];
            i = i * 64 + 63 - w.leading_zeros() as usize;
        }
        Some(i as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn predecessor_matches_an_ordered_set() {
        for n in [1u64, 63, 64, 65, 4096, 300_000] {
            let mut s = Starts::new(n as usize).unwrap();
            let mut set = BTreeSet::new();
            let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ n;
            for _ in 0..5_000 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = rng % n;
                if rng >> 63 == 1 {
                    s.insert(i);
                    set.insert(i);
                } else {
                    s.remove(i);
                    set.remove(&i);
                }
                let q = (rng >> 20) % n;
                assert_eq!(s.pred(q), set.range(..=q).next_back().copied(), "n {n}, pred of {q}");
                assert_eq!(s.contains(i), set.contains(&i));
            }
            assert_eq!(s.pred(n - 1), set.last().copied());
        }
    }
}
