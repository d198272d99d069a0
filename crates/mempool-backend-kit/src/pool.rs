//! What the backends' pools check and answer the same way, in the HAL's numbering (a
//! backend renumbers the error for its driver where it has its own codes): the size of an
//! allocation ([`checked_size`]), the out-of-memory error with the pool's statistics
//! ([`out_of_memory`]), and the one retry after an out-of-memory answer ([`OomRetry`]).

use mempool_hal::{Error, OomInfo, PoolStats, Result, round_up};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// The out-of-memory retry of a pool over a real runtime (contract §12), and the count of
/// the allocations that made one (shared by the pool's clones).
///
/// The policy: when the pool holds cached bytes (RESERVED > USED) and a pool trimmed to
/// USED could hold the request (size - USED >= the rounded request), wait for the work
/// queued on the device (a trim releases only memory whose frees have run), trim the pool
/// to USED, and try once more. Otherwise, or if that fails too, the out-of-memory error
/// with the pool's statistics and, at the end of its message, what the runtime said and
/// what was (or was not) tried.
#[derive(Debug, Clone, Default)]
pub struct OomRetry {
    retries: Arc<AtomicU64>,
}

/// One out-of-memory answer, as [`OomRetry::after_oom`] takes it.
#[derive(Debug, Clone, Copy)]
pub struct OomCase<'a> {
    /// The request, rounded to the pool's granularity.
    pub requested: u64,
    /// The pool's size (its `maxSize`).
    pub pool_size: u64,
    /// The pool's statistics when the allocation failed.
    pub stats: PoolStats,
    /// What the runtime said, put first in the error's last clause (`None`: nothing).
    pub said: Option<&'a str>,
}

impl OomRetry {
    /// How many allocations of this pool retried after an out-of-memory answer; each
    /// counts once, whether its retry succeeded or not.
    pub fn count(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Counts one more retry; the count after it.
    pub fn note(&self) -> u64 {
        self.retries.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Runs the policy for `case` (see the [type docs](Self)):
    ///
    /// - `make_room` waits for the device's queued work and trims the pool to USED,
    ///   answering the USED it trimmed to;
    /// - `retry` allocates once more; it is given the error to answer when the runtime is
    ///   out of memory again (with what the runtime said that time, if anything);
    /// - `oom` makes the pool's out-of-memory error with the text of what was tried.
    ///
    /// # Errors
    ///
    /// `oom`'s error when no retry is made, when `make_room` fails, or when the retry is
    /// out of memory too; `retry`'s other errors as they are.
    #[cold]
    #[inline(never)]
    pub fn after_oom<T>(
        &self,
        case: OomCase<'_>,
        make_room: impl FnOnce() -> Result<u64>,
        retry: impl FnOnce(&dyn Fn(Option<&str>) -> Error) -> Result<T>,
        oom: impl Fn(String) -> Error,
    ) -> Result<T> {
        let said = |s: Option<&str>, tried: &str| match s {
            Some(s) => format!("{s}; {tried}"),
            None => tried.to_string(),
        };
        let OomCase { requested, pool_size, stats, said: first } = case;
        if stats.reserved_current <= stats.used_current {
            return Err(oom(said(first, "no cached bytes to trim, so no retry")));
        }
        if pool_size.saturating_sub(stats.used_current) < requested {
            // Even a pool trimmed to USED would not have room: keep the cached blocks.
            return Err(oom(said(first, "trimming to USED cannot make room, so no retry")));
        }
        let retries = self.note();
        match make_room() {
            Ok(used) => retry(&|again| {
                oom(said(
                    again,
                    &format!(
                        "retried once after synchronizing and trimming to USED {used} (retries on this pool: {retries})"
                    ),
                ))
            }),
            Err(e) => Err(oom(said(
                first,
                &format!("synchronize and trim before the retry failed: {e} (retries on this pool: {retries})"),
            ))),
        }
    }
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

    fn case(reserved: u64, used: u64) -> OomCase<'static> {
        let stats = PoolStats { reserved_current: reserved, used_current: used, ..PoolStats::default() };
        OomCase { requested: 4, pool_size: 10, stats, said: Some("driver: out of memory") }
    }

    fn oom(tried: String) -> Error {
        out_of_memory("op", 4, PoolStats::default(), 10, None, &tried)
    }

    #[test]
    fn no_retry_without_cached_bytes_or_without_room_after_a_trim() {
        let policy = OomRetry::default();
        let never = || -> Result<u64> { panic!("no trim") };
        let e = policy.after_oom::<()>(case(4, 4), never, |_| panic!("no retry"), oom).unwrap_err();
        assert!(
            e.message().ends_with("driver: out of memory; no cached bytes to trim, so no retry"),
            "{}",
            e.message()
        );
        let e = policy.after_oom::<()>(case(9, 7), never, |_| panic!("no retry"), oom).unwrap_err();
        assert!(e.message().ends_with("trimming to USED cannot make room, so no retry"), "{}", e.message());
        assert_eq!(policy.count(), 0);
    }

    #[test]
    fn one_retry_after_the_trim_counted_once_whatever_it_answers() {
        let policy = OomRetry::default();
        let shared = policy.clone();
        assert_eq!(policy.after_oom(case(8, 2), || Ok(2), |_| Ok(7), oom), Ok(7));
        let e = policy.after_oom::<()>(case(8, 2), || Ok(2), |give_up| Err(give_up(Some("again"))), oom).unwrap_err();
        assert!(
            e.message()
                .ends_with("again; retried once after synchronizing and trimming to USED 2 (retries on this pool: 2)"),
            "{}",
            e.message()
        );
        let refused = Error::invalid_param("trim", "refused");
        let e = policy.after_oom::<()>(case(8, 2), || Err(refused), |_| panic!("no retry"), oom).unwrap_err();
        assert!(e.message().contains("synchronize and trim before the retry failed"), "{}", e.message());
        assert_eq!((e.kind(), shared.count()), (ErrorKind::OutOfMemory, 3));
    }
}
