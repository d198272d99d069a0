//! Checked access to device memory: every device range that a copy, a memset or a kernel
//! touches, from the call to the work that runs.
//!
//! One range goes through three stages, each with its own type:
//!
//! 1. [`CopySide`]: a side of a raw copy as the caller names it, host memory or a device
//!    pointer (public: the drop-in ACL library passes C pointers through it);
//! 2. [`CheckedRange`]: a device range resolved to its pool ([`resolve`]), or to the
//!    chunks mapped behind it in a reserved range of virtual memory (checked mapped with
//!    the access the work needs when it is resolved, `vmm/space.rs`), which
//!    [`enqueue_touching`] checks under the pool lock when the work is enqueued (the range
//!    lies in one live allocation and, with the checker, the stream is ordered after the
//!    allocation and the memory was not freed) and notes as pending on its allocation;
//!    [`check_now`] checks it for a synchronous call;
//! 3. [`ResolvedSide`]: what a copy's work holds to run, a host address or a pool and an
//!    address; [`copy`] checks again, under the pool lock, that the device range is still
//!    reserved, and pins it for the copy, which then runs without the lock
//!    ([`PoolShared::with_memory`]): no release or destroy takes a pinned range away. A
//!    range of virtual memory is moved through the views of its chunks, pinned there
//!    (`vmm/mapped.rs`).
//!
//! Lock order: the pools an operation touches, by id, then the stream's state.

use super::blocks::Blocks;
use super::records::Access;
use super::registry::PoolRegistry;
use super::shared::{PoolShared, StateGuard};
use crate::clock::{Clock, HostClock};
use crate::stream::{StreamShared, StreamState, Work};
use crate::sync::Arc;
use crate::vmm::mapped::MappedRange;
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};

/// One side of a raw copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopySide {
    /// Host memory at this address: the caller guarantees it is valid for the copy's
    /// length until the copy has run.
    Host(*mut u8),
    /// Device memory: checked to lie inside one live allocation, ordered after it.
    Device(DevicePtr),
}

/// A copy side resolved; host addresses travel as integers so the work is `Send`.
pub(crate) enum ResolvedSide {
    Host(usize),
    Device(Memory, u64),
}

/// Where the bytes of a device range are.
#[derive(Debug, Clone)]
pub(crate) enum Memory {
    /// In a pool: checked again, and pinned, under its lock when the work runs.
    Pool(Arc<PoolShared>),
    /// In chunks mapped in a reserved range of virtual memory, resolved when the work
    /// was enqueued.
    Mapped(Arc<MappedRange>),
}

impl Memory {
    /// Runs `f(done, ptr, n)` on the host memory of `[addr, addr + len)`, piece by piece
    /// in address order (one piece in a pool; one per chunk in virtual memory), each
    /// pinned while `f` runs on it (`write`: `f` writes it): `n` bytes at `ptr`, the
    /// range's bytes from `done` on.
    pub(crate) fn for_each_piece(
        &self,
        addr: u64,
        len: u64,
        write: bool,
        op: &'static str,
        mut f: impl FnMut(usize, *mut u8, usize),
    ) -> Result<()> {
        match self {
            Memory::Pool(pool) => pool.with_memory(addr, len, write, op, |p| f(0, p, len as usize)),
            Memory::Mapped(m) => m.for_each_piece(addr, len, write, op, f),
        }
    }
}

/// One device range an operation touches, resolved to its memory.
#[derive(Debug, Clone)]
pub(crate) struct CheckedRange {
    pub(crate) mem: Memory,
    pub(crate) addr: u64,
    pub(crate) len: u64,
    pub(crate) write: bool,
}

/// Resolves a device range to its pool, whose checks come when it is enqueued, or to the
/// chunks mapped behind it in a reserved range, checked now. With the `checker`, a range
/// of a destroyed pool, and one reserved but not mapped or mapped without the access the
/// operation needs, is a stream-order violation.
pub(crate) fn resolve(
    registry: &PoolRegistry,
    checker: bool,
    ptr: DevicePtr,
    len: u64,
    write: bool,
    op: &'static str,
) -> Result<CheckedRange> {
    if let Some(parts) = registry.vmm.resolve(ptr.addr(), len, write, checker, op) {
        let mem = Memory::Mapped(Arc::new(MappedRange::new(ptr.addr(), parts?, registry.vmm.timeout)));
        return Ok(CheckedRange { mem, addr: ptr.addr(), len, write });
    }
    match registry.pool_at(ptr.addr()) {
        Some(pool) => Ok(CheckedRange { mem: Memory::Pool(pool), addr: ptr.addr(), len, write }),
        None if checker && registry.was_destroyed(ptr.addr()) => {
            Err(Error::stream_order_violation(op, format!("{op} touches {ptr}: memory of a destroyed pool")))
        }
        None => Err(Error::invalid_pointer(op, format!("{ptr} is not device memory"))),
    }
}

/// Resolves a copy side, adding its device range to `ranges`.
fn resolve_side(
    registry: &PoolRegistry,
    checker: bool,
    side: CopySide,
    len: u64,
    write: bool,
    op: &'static str,
    ranges: &mut Vec<CheckedRange>,
) -> Result<ResolvedSide> {
    match side {
        CopySide::Host(p) if p.is_null() => {
            Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, "null host pointer"))
        }
        CopySide::Host(p) => Ok(ResolvedSide::Host(p as usize)),
        CopySide::Device(d) => {
            let r = match resolve(registry, checker, d, len, write, op) {
                Ok(r) => r,
                Err(e) => return registered_side(registry, d, len, write, op).unwrap_or(Err(e)),
            };
            let side = ResolvedSide::Device(r.mem.clone(), d.addr());
            ranges.push(r);
            Ok(side)
        }
    }
}

/// A device side that names a registered host range (contract §15): its host address, or
/// an error for a write to a read-only one or a range that runs past its end; `None` when
/// no registered range holds it.
fn registered_side(
    registry: &PoolRegistry,
    d: DevicePtr,
    len: u64,
    write: bool,
    op: &'static str,
) -> Option<Result<ResolvedSide>> {
    let addr = usize::try_from(d.addr()).ok()?;
    let f = registry.hosts.find(addr, usize::try_from(len).unwrap_or(usize::MAX))?;
    let (base, size) = (f.block.addr(), f.block.size());
    Some(if f.overrun {
        Err(Error::invalid_pointer(
            op,
            format!("[{d}, +{len}) runs past the registered host range [{base:#x}, +{size})"),
        ))
    } else if write && f.read_only {
        Err(Error::invalid_param(op, format!("{d} lies in the host range [{base:#x}, +{size}) registered read-only")))
    } else {
        Ok(ResolvedSide::Host(addr))
    })
}

/// Checks one access to `[t.addr, t.addr + t.len)` of `pool` (whose state is `blocks`)
/// by stream `s` whose clock is `clock` (`None`: a synchronous access by the host), and
/// returns the start of the live allocation it touches.
fn check(
    pool: &PoolShared,
    blocks: &Blocks,
    t: &CheckedRange,
    s: Option<(&StreamShared, &Clock)>,
    op: &'static str,
) -> Result<u64> {
    let checker = pool.settings.checker;
    let (addr, len) = (t.addr, t.len);
    let what = if t.write { "writes" } else { "reads" };
    let on = s.map_or_else(|| "the host".to_string(), |(s, _)| format!("stream {}", s.id));
    let (sid, clock, host) = (s.map(|(s, _)| s.id), s.map(|(_, c)| c), &*pool.settings.host);
    if pool.is_destroyed() {
        return Err(if checker {
            Error::stream_order_violation(
                op,
                format!("{op} on {on} {what} [{addr:#x}, +{len}): memory of a destroyed pool"),
            )
        } else {
            Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) belongs to a destroyed pool"))
        });
    }
    let Some(end) = addr.checked_add(len) else { return Err(Error::invalid_pointer(op, "the range overflows")) };
    if let Some((start, live_len, live)) = blocks.containing_live(addr) {
        if end > start + live_len {
            return Err(Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) runs past the end of its allocation")));
        }
        if !checker {
            return Ok(start);
        }
        if !live.ordered_before(sid, clock, host) {
            let fix = match sid {
                Some(sid) => format!(
                    "record an event on stream {owner} after the allocation and make stream {sid} wait for it, \
                     or synchronize stream {owner}",
                    owner = live.owner,
                ),
                None => format!("synchronize stream {} first", live.owner),
            };
            return Err(Error::stream_order_violation(
                op,
                format!(
                    "{op} on {on} {what} [{addr:#x}, +{len}), allocated on stream {owner} after its position {pos}, \
                     but {on} is not ordered after that allocation (it is ordered after stream {owner} up to \
                     position {seen}): {fix}",
                    owner = live.owner,
                    pos = live.pos,
                    seen = clock.map_or(0, |c| c.get(live.owner)).max(host.get(live.owner)),
                ),
            ));
        }
        if pool.settings.races {
            check_races(blocks.accesses(start), t, sid, clock, host, op)?;
        }
        return Ok(start);
    }
    if checker {
        if let Some((start, c)) = blocks.containing_cached_block(addr) {
            return Err(Error::stream_order_violation(
                op,
                format!(
                    "use after free: {op} on {on} {what} [{addr:#x}, +{len}), inside the block at {start:#x} \
                     freed on stream {} (its position {})",
                    c.stream, c.pos
                ),
            ));
        }
        if blocks.was_allocated(addr) {
            // Freed, then released (when depends on timing; the verdict does not).
            return Err(Error::stream_order_violation(
                op,
                format!("use after free: {op} on {on} {what} [{addr:#x}, +{len}), memory freed and released since"),
            ));
        }
    }
    Err(Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) is not inside a live allocation")))
}

/// Race mode (contract §11): refuses an access by `s` (`None`: the host) that overlaps an
/// earlier access on another stream, one of them a write, not ordered before it.
fn check_races(
    notes: &[Access],
    t: &CheckedRange,
    s: Option<u64>,
    clock: Option<&Clock>,
    host: &HostClock,
    op: &'static str,
) -> Result<()> {
    let end = t.addr + t.len;
    for a in notes {
        let overlaps = a.addr < end && t.addr < a.addr + a.len;
        let ordered = || clock.is_some_and(|c| c.get(a.stream) >= a.pos) || host.get(a.stream) >= a.pos;
        if Some(a.stream) != s && overlaps && (a.write || t.write) && !ordered() {
            let on = s.map_or_else(|| "the host".to_string(), |s| format!("stream {s}"));
            let (what, other) = (if t.write { "writes" } else { "reads" }, if a.write { "writes" } else { "reads" });
            return Err(Error::stream_order_violation(
                op,
                format!(
                    "data race: {op} on {on} {what} [{:#x}, +{}), which {} on stream {} (its position {}) {other} at \
                     [{:#x}, +{}), and neither is ordered after the other: record an event on stream {} after that work \
                     and wait for it",
                    t.addr, t.len, a.op, a.stream, a.pos, a.addr, a.len, a.stream
                ),
            ));
        }
    }
    Ok(())
}

/// The pool of a range in a pool.
fn pool_of(t: &CheckedRange) -> Option<&Arc<PoolShared>> {
    match &t.mem {
        Memory::Pool(pool) => Some(pool),
        Memory::Mapped(_) => None,
    }
}

/// Locks the pools of `ranges` in id order (so two operations never lock in opposite
/// orders) and runs `f` with each range's pool state. Ranges of virtual memory lock
/// nothing: they were checked when resolved.
fn with_locked<R>(ranges: &[CheckedRange], f: impl FnOnce(&mut [(u64, StateGuard<'_>)]) -> R) -> R {
    let mut pools: Vec<&Arc<PoolShared>> = ranges.iter().filter_map(pool_of).collect();
    pools.sort_by_key(|p| p.id);
    pools.dedup_by_key(|p| p.id);
    let mut guards: Vec<(u64, StateGuard<'_>)> = pools.iter().map(|p| (p.id, p.state())).collect();
    f(&mut guards)
}

fn blocks_of<'a>(guards: &'a mut [(u64, StateGuard<'_>)], pool: u64) -> &'a mut Blocks {
    &mut guards.iter_mut().find(|(id, _)| *id == pool).expect("every touched pool is locked").1.blocks
}

/// Checks every range of an operation on stream `s` and enqueues `work` there, under the
/// pool locks, so no free or release can slip between the check and the enqueue.
pub(crate) fn enqueue_touching(
    s: &Arc<StreamShared>,
    ranges: &[CheckedRange],
    op: &'static str,
    work: Work,
) -> Result<()> {
    enqueue_touching_at(s, ranges, op, work, |_, _, _| ()).map(|_| ())
}

/// [`enqueue_touching`], running `pushed(s, state, pos)` under the stream's state lock
/// once the work has its position (before it can run); returns the position.
///
/// Behind a wait whose order is not known yet (`stream.rs`, `OpenWait`), the order checks
/// wait until the work runs: they take the stream's order then, with what those waits
/// gave, and a refusal fails the task. The other checks (live memory) come now.
pub(crate) fn enqueue_touching_at(
    s: &Arc<StreamShared>,
    ranges: &[CheckedRange],
    op: &'static str,
    work: Work,
    pushed: impl FnOnce(&Arc<StreamShared>, &mut StreamState, u64),
) -> Result<u64> {
    with_locked(ranges, |guards| {
        let st = &mut *s.state();
        let deferred = !st.open_waits().is_empty() && ranges.iter().filter_map(pool_of).any(|p| p.settings.checker);
        if deferred {
            for (t, pool) in ranges.iter().filter_map(|t| Some((t, pool_of(t)?))) {
                check(pool, blocks_of(guards, pool.id), t, None::<(&StreamShared, &Clock)>, op).or_else(|e| {
                    // Only the order is left for later: a live range the host has not
                    // observed is fine now.
                    if e.kind() == ErrorKind::StreamOrderViolation
                        && blocks_of(guards, pool.id).containing_live(t.addr).is_some()
                    {
                        Ok(0)
                    } else {
                        Err(e)
                    }
                })?;
            }
            let waits: Vec<_> = st.open_waits().to_vec();
            let base = Arc::clone(st.clock());
            let (me, rs) = (Arc::clone(s), ranges.to_vec());
            let at = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let mine = Arc::clone(&at);
            let checked: Work = Box::new(move || {
                let mut clock = (*base).clone();
                for w in &waits {
                    if let Some(Some(j)) = w.joined.get() {
                        clock.merge(&j.clock);
                        clock.raise(j.point.0, j.point.1);
                    }
                }
                let pos = mine.load(std::sync::atomic::Ordering::Acquire);
                with_locked(&rs, |guards| {
                    let mut starts = Vec::with_capacity(rs.len());
                    for (t, pool) in rs.iter().filter_map(|t| Some((t, pool_of(t)?))) {
                        starts.push(check(pool, blocks_of(guards, pool.id), t, Some((&*me, &clock)), op)?);
                    }
                    note_all(guards, &rs, starts, me.id, pos, op);
                    Ok(())
                })?;
                work()
            });
            let pos = s.push_locked(st, checked)?;
            at.store(pos, std::sync::atomic::Ordering::Release);
            pushed(s, st, pos);
            return Ok(pos);
        }
        let mut starts = Vec::with_capacity(ranges.len());
        for (t, pool) in ranges.iter().filter_map(|t| Some((t, pool_of(t)?))) {
            let blocks = blocks_of(guards, pool.id);
            starts.push(check(pool, blocks, t, Some((s, st.clock())), op)?);
        }
        let pos = s.push_locked(st, work)?;
        note_all(guards, ranges, starts, s.id, pos, op);
        pushed(s, st, pos);
        Ok(pos)
    })
}

/// Notes the accesses of an operation at `pos` of stream `sid`, for the checker.
fn note_all(
    guards: &mut [(u64, StateGuard<'_>)],
    ranges: &[CheckedRange],
    starts: Vec<u64>,
    sid: u64,
    pos: u64,
    op: &'static str,
) {
    for ((t, pool), start) in ranges.iter().filter_map(|t| Some((t, pool_of(t)?))).zip(starts) {
        if pool.settings.checker {
            let a = Access { stream: sid, pos, op, addr: t.addr, len: t.len, write: t.write };
            blocks_of(guards, pool.id).note_access(start, a, pool.settings.races);
        }
    }
}

/// Checks the ranges of an operation on stream `s` as [`enqueue_touching`] does (without
/// noting them as accesses: a wait on a word reads it, racing its writers by design) and
/// runs `push` under the pool locks and the stream's state lock, to enqueue it.
pub(crate) fn check_enqueue(
    s: &Arc<StreamShared>,
    ranges: &[CheckedRange],
    op: &'static str,
    push: impl FnOnce(&mut StreamState) -> Result<u64>,
) -> Result<()> {
    with_locked(ranges, |guards| {
        let st = &mut *s.state();
        for (t, pool) in ranges.iter().filter_map(|t| Some((t, pool_of(t)?))) {
            check(pool, blocks_of(guards, pool.id), t, Some((s, st.clock())), op)?;
        }
        push(st).map(|_| ())
    })
}

/// Checks the ranges of a synchronous host-side operation: live memory and, with the
/// checker, no use after free and an allocation the host has observed (a synchronous
/// one, or one whose stream the host synchronized after it).
pub(crate) fn check_now(ranges: &[CheckedRange], op: &'static str) -> Result<()> {
    with_locked(ranges, |guards| {
        for (t, pool) in ranges.iter().filter_map(|t| Some((t, pool_of(t)?))) {
            check(pool, blocks_of(guards, pool.id), t, None, op)?;
        }
        Ok(())
    })
}

/// Copies `len` bytes from `src` to `dst` in stream order on stream `s`, checking every
/// device side when it is enqueued and again when it runs.
///
/// # Safety
///
/// Every [`CopySide::Host`] side must be valid for `len` bytes (readable for `src`,
/// writable for `dst`) until the copy has run on the stream, and not be written by anyone
/// else meanwhile.
pub(crate) unsafe fn copy_async(
    registry: &PoolRegistry,
    checker: bool,
    s: &Arc<StreamShared>,
    (dst, src): (CopySide, CopySide),
    len: u64,
    op: &'static str,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let mut ranges = Vec::new();
    let d = resolve_side(registry, checker, dst, len, true, op, &mut ranges)?;
    let sr = resolve_side(registry, checker, src, len, false, op, &mut ranges)?;
    enqueue_touching(
        s,
        &ranges,
        op,
        Box::new(move || {
            // SAFETY: the callers guarantee the host sides stay valid until this work
            // runs (`memcpy_raw_async`'s contract, or buffers the work owns).
            unsafe { copy(d, sr, len, op) }
        }),
    )
}

/// Copies `len` bytes from `src` to `dst` now, on the calling thread, after checking the
/// device sides.
///
/// # Safety
///
/// Every [`CopySide::Host`] side must be valid for `len` bytes for the duration of the call.
pub(crate) unsafe fn copy_now(
    registry: &PoolRegistry,
    checker: bool,
    (dst, src): (CopySide, CopySide),
    len: u64,
    op: &'static str,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let mut ranges = Vec::new();
    let d = resolve_side(registry, checker, dst, len, true, op, &mut ranges)?;
    let s = resolve_side(registry, checker, src, len, false, op, &mut ranges)?;
    check_now(&ranges, op)?;
    // SAFETY: the caller guarantees the host sides for the duration of the call.
    unsafe { copy(d, s, len, op) }
}

/// Performs a resolved copy.
///
/// # Safety
///
/// Host sides must be valid for `len` bytes.
pub(crate) unsafe fn copy(dst: ResolvedSide, src: ResolvedSide, len: u64, op: &'static str) -> Result<()> {
    let n = len as usize;
    match (dst, src) {
        (ResolvedSide::Host(d), ResolvedSide::Host(s)) => {
            // SAFETY: both host ranges are valid for `n` bytes (caller's guarantee); `copy`
            // allows overlap.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, n) };
            Ok(())
        }
        (ResolvedSide::Device(m, a), ResolvedSide::Host(s)) => m.for_each_piece(a, len, true, op, |done, dp, k| {
            // SAFETY: the device piece is committed memory pinned for writing (no release,
            // give-back, unmapping or other pinned access touches it); the host range is
            // valid for `n` bytes, and `done + k <= n`.
            unsafe { std::ptr::copy((s + done) as *const u8, dp, k) }
        }),
        (ResolvedSide::Host(d), ResolvedSide::Device(m, a)) => m.for_each_piece(a, len, false, op, |done, sp, k| {
            // SAFETY: the device piece is committed memory pinned for reading (no release,
            // give-back, unmapping or pinned write touches it); the host range is valid for
            // `n` bytes, and `done + k <= n`.
            unsafe { std::ptr::copy(sp.cast_const(), (d + done) as *mut u8, k) }
        }),
        (ResolvedSide::Device(dm, da), ResolvedSide::Device(sm, sa)) => {
            let mut tmp = vec![0u8; n];
            sm.for_each_piece(sa, len, false, op, |done, p, k| {
                // SAFETY: the source piece is committed memory pinned for reading; `tmp`
                // holds `n` bytes and `done + k <= n`.
                unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), tmp.as_mut_ptr().add(done), k) }
            })?;
            dm.for_each_piece(da, len, true, op, |done, p, k| {
                // SAFETY: the destination piece is committed memory pinned for writing;
                // `tmp` holds `n` bytes and `done + k <= n`.
                unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr().add(done), p, k) }
            })
        }
    }
}
