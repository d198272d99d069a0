//! The ranges of a pool that copies, memsets and kernels are touching right now.
//!
//! Such work checks its range under the pool lock (still reserved, the pool not given
//! back), *pins* it there and lets the lock go while it moves bytes, so a long copy does
//! not stall allocations, frees, statistics or releases on the same pool. A pinned range
//! stays reserved and accessible until it is unpinned: a release (at synchronization or by
//! `trim_to`) leaves every cached block that overlaps a pin alone, and a cann-open destroy
//! waits for the pins to go before it gives the memory back. A free of a pinned range
//! only caches it, which releases nothing. Two pins that overlap, one of them for writing,
//! never coexist (the second waits for the first, as the pool lock made it before), so the
//! emulator's own accesses never race on the same bytes.

/// One pinned range.
#[derive(Debug, Clone, Copy)]
struct Pin {
    id: u64,
    addr: u64,
    len: u64,
    write: bool,
}

/// A pool's pinned ranges: few at a time (one per running copy), searched linearly.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    pins: Vec<Pin>,
    next: u64,
    /// How many threads wait for a pin to go (so an unpin wakes them only when needed).
    pub(crate) waiters: usize,
}

impl Pins {
    /// Whether a pin of `[addr, addr + len)` (`write`: for writing) would conflict with
    /// one already there: they overlap and one of them writes.
    pub(crate) fn conflicts(&self, addr: u64, len: u64, write: bool) -> bool {
        self.pins.iter().any(|p| (write || p.write) && overlap(p.addr, p.len, addr, len))
    }

    /// Whether any pin overlaps `[addr, addr + len)`.
    pub(crate) fn overlaps(&self, addr: u64, len: u64) -> bool {
        self.pins.iter().any(|p| overlap(p.addr, p.len, addr, len))
    }

    /// Pins `[addr, addr + len)`; returns the id to unpin it with.
    pub(crate) fn pin(&mut self, addr: u64, len: u64, write: bool) -> u64 {
        self.next += 1;
        self.pins.push(Pin { id: self.next, addr, len, write });
        self.next
    }

    /// Removes the pin `id`.
    pub(crate) fn unpin(&mut self, id: u64) {
        if let Some(i) = self.pins.iter().position(|p| p.id == id) {
            self.pins.swap_remove(i);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pins.is_empty()
    }
}

fn overlap(a: u64, alen: u64, b: u64, blen: u64) -> bool {
    a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

#[cfg(test)]
mod tests {
    use super::Pins;

    #[test]
    fn readers_share_writers_exclude() {
        let mut p = Pins::default();
        let r = p.pin(100, 10, false);
        assert!(!p.conflicts(105, 10, false), "two readers");
        assert!(p.conflicts(105, 10, true), "a writer over a reader");
        assert!(!p.conflicts(110, 10, true), "adjacent ranges do not overlap");
        assert!(p.overlaps(109, 1) && !p.overlaps(90, 10));
        let w = p.pin(110, 10, true);
        assert!(p.conflicts(115, 1, false), "a reader over a writer");
        p.unpin(r);
        p.unpin(w);
        assert!(p.is_empty());
    }
}
