//! The carved ranges that are live, by start address.
//!
//! Every allocation the layer carves inserts one entry and every free removes one, so this
//! table is on the hot path of both. It is an open-addressing table with linear probing
//! and backward-shift deletion, specialized to what the layer needs:
//!
//! - keys are start addresses, never 0 (0 marks an empty slot; no range of a pool block
//!   starts at address 0, and a lookup of 0 finds nothing);
//! - an address is never inserted while it is live (ranges of held blocks do not overlap,
//!   and a free removes the address before its range can be carved again), so an insert
//!   needs no lookup first;
//! - the table is at most half full, so a lookup usually reads one slot, and a deletion
//!   shifts the entries after it back instead of leaving a tombstone (no table ever fills
//!   with tombstones under the allocate-and-free churn of a training loop).
//!
//! A general-purpose hash table (a `hashbrown` table, as before) spent about 57
//! instructions on each insert and each removal here, with its control-byte groups; this
//! one reads a key and compares it.

/// Fibonacci hashing: the top bits of the product spread 512-byte-aligned addresses over
/// the table.
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// The slots a new table starts with.
const INITIAL: usize = 64;

/// Live ranges: start address to node.
pub(crate) struct LiveRanges {
    /// Per slot, the start address of a live range, or 0.
    keys: Vec<u64>,
    /// Per slot, the node of the range in `keys`.
    nodes: Vec<u32>,
    /// Occupied slots.
    len: usize,
    /// `64 - log2(slots)`: a hash's top bits are its home slot.
    shift: u32,
}

impl Default for LiveRanges {
    fn default() -> Self {
        LiveRanges { keys: vec![0; INITIAL], nodes: vec![0; INITIAL], len: 0, shift: 64 - INITIAL.trailing_zeros() }
    }
}

impl LiveRanges {
    #[inline]
    fn mask(&self) -> usize {
        self.keys.len() - 1
    }

    /// The slot where a probe for `addr` starts.
    #[inline]
    fn home(&self, addr: u64) -> usize {
        (addr.wrapping_mul(MUL) >> self.shift) as usize
    }

    /// The slot holding `addr`, if it is live.
    #[inline]
    fn find(&self, addr: u64) -> Option<usize> {
        if addr == 0 {
            return None;
        }
        let mask = self.mask();
        let mut i = self.home(addr);
        loop {
            match self.keys[i] {
                k if k == addr => return Some(i),
                0 => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Adds `addr` (not 0, not live) with its node.
    #[inline]
    pub(crate) fn insert_new(&mut self, addr: u64, node: u32) {
        debug_assert!(addr != 0 && !self.contains(addr), "{addr:#x} is live already, or 0");
        if 2 * (self.len + 1) > self.keys.len() {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(addr);
        while self.keys[i] != 0 {
            i = (i + 1) & mask;
        }
        self.keys[i] = addr;
        self.nodes[i] = node;
        self.len += 1;
    }

    /// Takes `addr` out; its node, or `None` when it was not live.
    #[inline]
    pub(crate) fn remove(&mut self, addr: u64) -> Option<u32> {
        let found = self.find(addr)?;
        let node = self.nodes[found];
        // Backward shift: each later entry of the run that may sit in the hole (its home
        // is not between the hole and its slot) moves into it, so that no probe meets an
        // empty slot before its key.
        let mask = self.mask();
        let (mut hole, mut j) = (found, found);
        loop {
            j = (j + 1) & mask;
            let k = self.keys[j];
            if k == 0 {
                break;
            }
            let home = self.home(k);
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.keys[hole] = k;
                self.nodes[hole] = self.nodes[j];
                hole = j;
            }
        }
        self.keys[hole] = 0;
        self.len -= 1;
        Some(node)
    }

    /// Whether `addr` is the start of a live range.
    pub(crate) fn contains(&self, addr: u64) -> bool {
        self.find(addr).is_some()
    }

    /// How many ranges are live.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Twice the slots, every entry placed again.
    #[cold]
    fn grow(&mut self) {
        let slots = self.keys.len() * 2;
        let keys = std::mem::replace(&mut self.keys, vec![0; slots]);
        let nodes = std::mem::replace(&mut self.nodes, vec![0; slots]);
        self.shift -= 1;
        self.len = 0;
        for (k, n) in keys.into_iter().zip(nodes) {
            if k != 0 {
                self.insert_new(k, n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Random inserts and removals against a `HashMap`, with addresses from a small
        /// range so that probe runs collide, wrap around the table's end and shift back.
        #[test]
        fn agrees_with_a_hash_map(steps in prop::collection::vec((0u8..5, 1u64..3000), 1..4000)) {
            let mut t = LiveRanges::default();
            let mut m: HashMap<u64, u32> = HashMap::new();
            for (step, &(op, unit)) in steps.iter().enumerate() {
                let addr = 512 * unit;
                if op < 3 && !m.contains_key(&addr) {
                    t.insert_new(addr, step as u32);
                    m.insert(addr, step as u32);
                } else {
                    prop_assert_eq!(t.remove(addr), m.remove(&addr), "step {}: remove {:#x}", step, addr);
                }
                prop_assert_eq!(t.len(), m.len());
            }
            for (&a, &n) in &m {
                prop_assert_eq!(t.find(a).map(|i| t.nodes[i]), Some(n), "{:#x} is found", a);
            }
            prop_assert!(!t.contains(0) && t.remove(0).is_none(), "0 is never live");
            for (a, n) in m {
                prop_assert_eq!(t.remove(a), Some(n));
            }
            prop_assert_eq!(t.len(), 0);
            prop_assert!(t.keys.iter().all(|&k| k == 0), "every slot is empty again");
        }
    }
}
