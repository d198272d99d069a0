//! The layer's own statistics.

/// The layer's own statistics (see [`SmallBlocks::small_stats`](crate::SmallBlocks::small_stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SmallStats {
    /// Requested bytes of the live allocations made through the layer (carved or passed
    /// through), as the caller asked for them.
    pub requested_current: u64,
    /// High-water mark of `requested_current`.
    pub requested_high: u64,
    /// Pool bytes the layer holds: its blocks (live, free or pending ranges alike) plus the
    /// granularity-rounded size of the live requests it passed through.
    pub held_current: u64,
    /// High-water mark of `held_current`.
    pub held_high: u64,
    /// Pool blocks the layer holds now.
    pub blocks: u64,
    /// Bytes of those blocks.
    pub block_bytes: u64,
    /// Live ranges carved from blocks.
    pub live_ranges: u64,
    /// Ranges freed on another stream than their block's, held back until the host sees
    /// the free complete.
    pub pending_frees: u64,
}

impl SmallStats {
    /// Bytes held but not requested: `held_current - requested_current` (rounding, free
    /// ranges, pending frees and spare blocks).
    pub fn waste(&self) -> u64 {
        self.held_current.saturating_sub(self.requested_current)
    }
}
