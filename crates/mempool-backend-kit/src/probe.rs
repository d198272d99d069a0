//! The probe table both backends print (contract [§12](mempool_hal::contract::profiles)):
//! rows of (what, observed, documented, verdict), the helpers that word them, the Markdown
//! rendering, and the pool experiments the backends run the same way.
//!
//! Each experiment runs on its own pool of a few granules and its own streams, destroyed
//! after:
//!
//! - [`same_stream_reuse`]: allocate, free and allocate one granule on one stream; reuse
//!   when the second allocation returns the first address (contract §4, rule a);
//! - [`event_dependency_reuse`]: with `ReuseFollowEventDependencies` on (set by the
//!   backend), free on stream A, record an event on A, make B wait for it, allocate on B
//!   (rule c), with no host synchronization in between;
//! - [`release_at_sync`]: allocate and free one granule, synchronize the stream; released
//!   when RESERVED is 0 afterwards (contract §6).

use mempool_hal::attr::{ReleaseThreshold, ReservedMemCurrent};
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, PoolProps, Result};
use std::fmt;

/// What an experiment observed, or the error that stopped it, as text.
pub type Observed<T> = std::result::Result<T, String>;

/// A row of the table: what, observed, documented, verdict.
pub type Row = [String; 4];

/// The observed cell of an experiment that failed: `error: {e}`.
pub fn error(e: &str) -> String {
    format!("error: {e}")
}

/// The observed cell of a yes-or-no experiment: `yes`, `no`, or the error.
pub fn yes_no(r: &Observed<bool>, yes: &str, no: &str) -> String {
    match r {
        Ok(true) => yes.to_string(),
        Ok(false) => no.to_string(),
        Err(e) => error(e),
    }
}

/// The verdict of a yes-or-no experiment whose documented answer is `documented`:
/// `as documented`, `differs: {differs}`, or `unknown` when it failed.
pub fn verdict(r: &Observed<bool>, documented: bool, differs: &str) -> String {
    match r {
        Ok(v) if *v == documented => "as documented".to_string(),
        Ok(_) => format!("differs: {differs}"),
        Err(_) => "unknown".to_string(),
    }
}

/// A row that only informs: `what`, `observed`, and `-` for the rest.
pub fn info(what: impl Into<String>, observed: impl Into<String>) -> Row {
    [what.into(), observed.into(), "-".into(), "-".into()]
}

/// The row of a yes-or-no experiment whose documented answer is yes: what it observed
/// (`yes` or `no`), `yes` as documented, and the verdict ([`verdict`], `differs` when no).
pub fn yes_row(what: &str, r: &Observed<bool>, yes: &str, no: &str, differs: &str) -> Row {
    [what.into(), yes_no(r, yes, no), yes.into(), verdict(r, true, differs)]
}

/// Writes `rows` as a Markdown table whose third column is headed `documented`.
///
/// # Errors
///
/// The formatter's.
pub fn write_table(f: &mut fmt::Formatter<'_>, documented: &str, rows: &[Row]) -> fmt::Result {
    writeln!(f, "| what | observed | {documented} | verdict |")?;
    writeln!(f, "|---|---|---|---|")?;
    for [a, b, c, d] in rows {
        writeln!(f, "| {a} | {b} | {c} | {d} |")?;
    }
    Ok(())
}

/// A pool of `granules` pool granules on `dev`.
///
/// # Errors
///
/// The pool's creation's.
pub fn pool<D: Device>(dev: &D, granules: u64) -> Result<D::Pool> {
    dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(granules * dev.pool_granularity()).build())
}

/// Frees `p`, a live allocation of `pool` that no queued work touches.
fn free<P: MemPool>(pool: &P, p: DevicePtr, s: &P::Stream) -> Result<()> {
    // SAFETY: every caller in this module passes an allocation it made on `pool` and has
    // not freed, and enqueues no work on it after the free.
    unsafe { pool.free_async(p, s) }
}

/// Whether a block freed on a stream serves the next allocation on that stream.
///
/// # Errors
///
/// The first failing call.
pub fn same_stream_reuse<D: Device>(dev: &D) -> Result<bool> {
    let g = dev.pool_granularity();
    let pool = pool(dev, 4)?;
    let s = dev.create_stream()?;
    let p = pool.malloc_async(g, &s)?;
    free(&pool, p, &s)?;
    let q = pool.malloc_async(g, &s)?;
    free(&pool, q, &s)?;
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(q == p)
}

/// Whether a block freed on A serves B once B waits on an event recorded after the free,
/// with no host synchronization. `follow_events` sets the pool's reuse flags first (at
/// least `ReuseFollowEventDependencies` on); the release threshold is the pool's size.
///
/// # Errors
///
/// The first failing call.
pub fn event_dependency_reuse<D: Device>(dev: &D, follow_events: impl FnOnce(&D::Pool) -> Result<()>) -> Result<bool> {
    let g = dev.pool_granularity();
    let pool = pool(dev, 4)?;
    follow_events(&pool)?;
    pool.set(ReleaseThreshold, pool.size())?;
    let (a, b) = (dev.create_stream()?, dev.create_stream()?);
    let e = dev.create_event()?;
    let x = pool.malloc_async(g, &a)?;
    free(&pool, x, &a)?;
    dev.record_event(&e, &a)?;
    dev.stream_wait_event(&b, &e)?;
    let y = pool.malloc_async(g, &b)?;
    free(&pool, y, &b)?;
    dev.synchronize_device()?;
    dev.destroy_pool(&pool)?;
    dev.destroy_event(&e)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(y == x)
}

/// Whether a stream synchronization releases cached memory above the threshold, once
/// `prepare` has set the pool up (its release threshold, where the backend's default is
/// not 0).
///
/// # Errors
///
/// The first failing call.
pub fn release_at_sync<D: Device>(dev: &D, prepare: impl FnOnce(&D::Pool) -> Result<()>) -> Result<bool> {
    let g = dev.pool_granularity();
    let pool = pool(dev, 4)?;
    prepare(&pool)?;
    let s = dev.create_stream()?;
    let p = pool.malloc_async(g, &s)?;
    free(&pool, p, &s)?;
    dev.synchronize_stream(&s)?;
    let released = pool.get(ReservedMemCurrent)? == 0;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(released)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Table(Vec<Row>);

    impl fmt::Display for Table {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_table(f, "documented (X)", &self.0)
        }
    }

    #[test]
    fn cells_rows_and_table() {
        let (yes, no, failed): (Observed<bool>, Observed<bool>, Observed<bool>) =
            (Ok(true), Ok(false), Err("boom".into()));
        assert_eq!(yes_no(&yes, "y", "n"), "y");
        assert_eq!(yes_no(&no, "y", "n"), "n");
        assert_eq!(yes_no(&failed, "y", "n"), "error: boom");
        assert_eq!(verdict(&yes, true, "d"), "as documented");
        assert_eq!(verdict(&yes, false, "d"), "differs: d");
        assert_eq!(verdict(&failed, true, "d"), "unknown");
        assert_eq!(yes_row("w", &no, "y", "n", "d"), ["w", "n", "y", "differs: d"].map(String::from));
        let table = Table(vec![info("a", "b"), yes_row("w", &yes, "y", "n", "d")]);
        assert_eq!(
            table.to_string(),
            "| what | observed | documented (X) | verdict |\n|---|---|---|---|\n| a | b | - | - |\n| w | y | y | as documented |\n"
        );
    }
}
