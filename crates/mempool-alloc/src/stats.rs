//! [`Stats`]: the versioned C struct `mempool_stats` fills (`struct mempool_alloc_stats`).

/// The layout version of [`Stats`] (`MEMPOOL_ALLOC_STATS_VERSION`).
pub const STATS_VERSION: u32 = 1;

/// `struct mempool_alloc_stats`: one device's statistics. The caller sets `version` and
/// `size`; `mempool_stats` fills at most `size` bytes and writes its own version and the
/// bytes written back. Later versions only append fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// In: the caller's version; out: the library's ([`STATS_VERSION`]).
    pub version: u32,
    /// In: the bytes the caller provides; out: the bytes written.
    pub size: u32,
    /// Pool bytes in live allocations (USED).
    pub used_current: u64,
    /// High-water mark of `used_current`.
    pub used_high: u64,
    /// Pool bytes taken from the device (RESERVED).
    pub reserved_current: u64,
    /// High-water mark of `reserved_current`.
    pub reserved_high: u64,
    /// Bytes the framework asked for, live.
    pub requested_current: u64,
    /// High-water mark of `requested_current`.
    pub requested_high: u64,
    /// Pool bytes the small-block layer holds.
    pub small_held_current: u64,
    /// High-water mark of `small_held_current`.
    pub small_held_high: u64,
    /// Held but not requested: rounding, free ranges, pending frees, spare blocks.
    pub small_wasted: u64,
    /// Live allocations.
    pub allocations: u64,
    /// Frees waiting for the streams named by `mempool_record_stream`, and the layer's
    /// cross-stream frees not yet seen complete.
    pub pending_frees: u64,
    /// Allocations answered NULL for lack of memory.
    pub oom_count: u64,
    /// Synchronize-trim-retry rounds after an out-of-memory answer.
    pub oom_retries: u64,
    /// Frees the stream-order checker refused (each then freed after a synchronization).
    pub stream_order_violations: u64,
    /// The cap a memory fraction set, in bytes; 0: none.
    pub memory_limit: u64,
}

/// The size of [`Stats`] in bytes, as `size` holds it.
pub const STATS_SIZE: u32 = std::mem::size_of::<Stats>() as u32;

/// The smallest `size` a caller may give: the two header fields.
pub(crate) const STATS_HEADER: u32 = 8;

impl Default for Stats {
    /// All counters 0, with `version` and `size` set for this layout.
    fn default() -> Self {
        Stats {
            version: STATS_VERSION,
            size: STATS_SIZE,
            used_current: 0,
            used_high: 0,
            reserved_current: 0,
            reserved_high: 0,
            requested_current: 0,
            requested_high: 0,
            small_held_current: 0,
            small_held_high: 0,
            small_wasted: 0,
            allocations: 0,
            pending_frees: 0,
            oom_count: 0,
            oom_retries: 0,
            stream_order_violations: 0,
            memory_limit: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_the_headers() {
        // Two u32 fields, then fifteen u64 fields, no padding.
        assert_eq!(STATS_SIZE, 8 + 15 * 8);
        assert_eq!(std::mem::align_of::<Stats>(), 8);
        let s = Stats::default();
        assert_eq!((s.version, s.size), (STATS_VERSION, STATS_SIZE));
    }
}
