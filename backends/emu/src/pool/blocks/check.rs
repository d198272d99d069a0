//! The structure's invariants, checked by the tests after every step.

use super::{Blocks, FREE, NIL, SharedSlots, Tag};

impl Blocks {
    /// Checks the structure's invariants (tests).
    pub(crate) fn check(&self, base: u64, size: u64) {
        assert_eq!((self.base, self.size), (base, size));
        let head = self.starting_at(base).expect("a node starts at the base");
        let (mut at, mut id, mut prev) = (base, head, NIL);
        let (mut used, mut cached, mut nodes, mut lives) = (0, 0, 0, 0);
        let mut last_free = false;
        while id != NIL {
            let n = self.node(id);
            assert_eq!(n.addr, at, "ranges tile the pool without gaps or overlaps");
            assert_eq!(n.prev, prev, "links are symmetric");
            assert!(self.starts.contains(self.granule(n.addr)), "every range is indexed by its start");
            assert_eq!(
                self.starts.pred(self.granule(n.addr + n.len - 1)),
                Some(self.granule(n.addr)),
                "and only there"
            );
            assert_eq!(self.starting_at(n.addr), Some(id), "every range is found by its start");
            // The marks invariant: the owner always; live or cached where a neighbour has
            // the same owner.
            let same_owner = |o: u32| {
                o != NIL && n.tag != Tag::Free && self.node(o).tag != Tag::Free && self.node(o).stream == n.stream
            };
            if same_owner(n.prev) || same_owner(n.next) || n.tag == Tag::Free {
                assert_eq!(self.mark(id), n.mark(), "marks are exact next to a block of the same owner");
            } else {
                assert_eq!(self.mark(id) >> 2, n.mark() >> 2, "marks name the owners");
                assert_ne!(self.mark(id), FREE, "a block's mark names its owner");
            }
            let free = n.tag == Tag::Free;
            assert!(!(free && last_free), "free neighbours are merged");
            match n.tag {
                Tag::Free => assert!(n.clock.is_none(), "free ranges hold no clock"),
                Tag::Live => {
                    used += n.len;
                    lives += 1;
                }
                Tag::Cached => {
                    assert!(n.clock.is_some(), "a cached block has its free's clock");
                    let bin = self.bin(n.stream).expect("a cached block's stream has a bin");
                    assert!(bin.sizes().iter().any(|e| e.id == id && e.len == n.len && e.addr == n.addr));
                    cached += n.len;
                }
            }
            last_free = free;
            at += n.len;
            prev = id;
            id = n.next;
            nodes += 1;
        }
        assert_eq!(at, base + size);
        assert_eq!(nodes, self.at.iter().filter(|&&i| i != 0).count());
        assert_eq!(lives, self.live);
        assert_eq!(nodes + self.spare.len(), self.nodes.len());
        assert_eq!(self.stats.used_current, used);
        assert_eq!(self.stats.reserved_current, used + cached);
        assert!(self.accesses.keys().all(|&a| self.is_live_start(a)), "noted accesses belong to live allocations");
        assert_eq!(self.nonempty_bins, self.bins.iter().filter(|b| !b.sizes().is_empty()).count());
        assert_eq!(self.bin_of.len(), self.bins.len());
        assert!(self.bin_ids.iter().copied().eq(self.bins.iter().map(|b| b.stream.id)), "the bins' ids");
        for (i, b) in self.bins.iter().enumerate() {
            assert_eq!(self.bin_of.get(&b.stream.id), Some(&(i as u32)), "the bins' index");
        }
        let binned: usize = self.bins.iter().map(|b| b.sizes().len()).sum();
        let cached_nodes = (0..self.nodes.len() as u32).filter(|&i| self.node(i).tag == Tag::Cached).count();
        assert_eq!(binned, cached_nodes, "bins index every cached block");
        self.free.check(&SharedSlots(&self.slots));
        for b in &self.bins {
            b.sizes().check(&SharedSlots(&self.slots));
        }
        for e in self.free.iter() {
            assert_eq!(self.node(e.id).tag, Tag::Free, "the free bins hold free ranges");
        }
    }
}
