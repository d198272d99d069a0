//! What the backends' pools check and answer the same way, in the HAL's numbering (a
//! backend renumbers the error for its driver where it has its own codes): the size of an
//! allocation ([`checked_size`]) and the out-of-memory error with the pool's statistics
//! ([`out_of_memory`]).

use mempool_hal::{Error, OomInfo, PoolStats, Result, round_up};

/// `size` as `size_t`, refusing 0 and a size that overflows when rounded up to
/// `granularity`: `InvalidParam`.
///
/// # Errors
///
/// `InvalidParam` for `op`: `size 0`, or `size overflows when rounded`.
#[inline]
pub fn checked_size(op: &'static str, size: u64, granularity: u64) -> Result<usize> {
    if size == 0 {
        return Err(Error::invalid_param(op, "size 0"));
    }
    match usize::try_from(size) {
        Ok(n) if round_up(size, granularity).is_some() => Ok(n),
        _ => Err(Error::invalid_param(op, "size overflows when rounded")),
    }
}

/// The out-of-memory error of a pool of `pool_size` bytes with statistics `stats`, for a
/// request of `requested` (rounded) bytes, with `tried` at the end of its message.
///
/// Neither driver nor runtime reports its free ranges; what is certainly free is the room
/// the pool has not reserved, given as the largest free range (an upper bound).
/// `device_free` is the device's free memory where it, not the pool, is what is full.
pub fn out_of_memory(
    op: &'static str,
    requested: u64,
    stats: PoolStats,
    pool_size: u64,
    device_free: Option<u64>,
    tried: &str,
) -> Error {
    let e = Error::out_of_memory(
        op,
        OomInfo {
            requested,
            stats,
            pool_size,
            largest_free_range: pool_size.saturating_sub(stats.reserved_current),
            largest_cached_block: stats.reserved_current - stats.used_current.min(stats.reserved_current),
            device_free,
        },
    );
    let message = format!("{}; {tried}", e.message());
    e.with_message(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mempool_hal::ErrorKind;

    #[test]
    fn sizes() {
        assert_eq!(checked_size("op", 1, 2 << 20), Ok(1));
        for bad in [0, u64::MAX] {
            let e = checked_size("op", bad, 2 << 20).unwrap_err();
            assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidParam, "op"));
        }
    }

    #[test]
    fn out_of_memory_fills_in_the_statistics() {
        let stats = PoolStats { reserved_current: 6, used_current: 4, ..PoolStats::default() };
        let e = out_of_memory("op", 8, stats, 10, Some(3), "no retry");
        assert_eq!(e.kind(), ErrorKind::OutOfMemory);
        let info = e.oom().expect("oom info");
        assert_eq!((info.largest_free_range, info.largest_cached_block, info.device_free), (4, 2, Some(3)));
        assert!(e.message().ends_with("; no retry"), "{}", e.message());
    }
}
