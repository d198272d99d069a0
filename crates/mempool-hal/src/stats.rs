//! Pool statistics.

/// The four statistics counters of a pool (attributes 5-8), read together.
///
/// Always `reserved_current >= used_current`; each `*_high` is the maximum of its
/// `*_current` since creation or the last reset. See
/// [statistics and lifetime](crate::contract::statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PoolStats {
    /// Bytes the pool holds from the device: live allocations plus cached blocks.
    pub reserved_current: u64,
    /// High-water mark of `reserved_current`.
    pub reserved_high: u64,
    /// Bytes of live allocations, counted after rounding to the granularity.
    pub used_current: u64,
    /// High-water mark of `used_current`.
    pub used_high: u64,
}

impl PoolStats {
    /// Bytes held by the pool but not handed out: `reserved_current - used_current`.
    pub fn cached(&self) -> u64 {
        self.reserved_current.saturating_sub(self.used_current)
    }
}
