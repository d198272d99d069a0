//! `aclrtMalloc` memory: small pieces carved out of granule blocks of a hidden pool.
//!
//! CANN pads an `aclrtMalloc` size to a multiple of 32 bytes and adds 32 more
//! (`aclrtMallocAlign32` adds nothing), and many small allocations share device pages. The
//! emulator's pools hand out whole granules (2 MiB by default), so each device has one
//! hidden whole-device pool whose granule blocks this heap divides: a piece starts on a
//! 32-byte boundary, first fit in the blocks already taken, else a new block (one that
//! fits a large piece). Freeing the last piece of a block with `aclrtFree` gives the block
//! back to the pool.
//!
//! What the emulator checks, the pieces inherit: a block is a synchronous allocation, so it
//! is ordered before everything enqueued after the call (contract §11), and copies and
//! memsets may use it on any stream. On top of that, every device range of a copy or memset
//! that falls in a block must lie inside one live piece (its padded size: CANN gives the
//! padding too) — [`SyncHeap::check_range`], 107000 otherwise, so a piece freed, or an
//! overrun into a neighbour, is refused at the call. The free of a block is checked by the
//! emulator's stream-order checker against every access to the block; the free of a piece
//! that leaves other pieces live is checked for liveness only (the host must still have
//! synchronized the streams that used it, which the checker does not verify then).

use crate::ffi::{code, err};
use mempool_emu::{EmuPool, EmuStream, Emulator};
use mempool_hal::attr::UsedMemCurrent;
use mempool_hal::{Device, DevicePtr, ErrorKind, MemPool, MemPoolExt, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Pieces start on this boundary, and their sizes are multiples of it.
pub(crate) const ALIGN: u64 = 32;

/// The heap of one device.
pub(crate) struct SyncHeap {
    pool: EmuPool,
    stream: EmuStream,
    /// The pool's granularity: the size blocks are rounded to.
    gran: u64,
    books: Arc<Mutex<Books>>,
    /// `aclrtFree` calls whose trim waits for work queued before them
    /// ([`Emulator::after_queued_work`]): the pool is trimmed when the last one's turn comes.
    trims_waiting: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Books {
    /// Block start → block.
    blocks: BTreeMap<u64, Block>,
}

struct Block {
    len: u64,
    /// Bytes in pieces (live or waiting for their stream-ordered free).
    used: u64,
    /// Piece start → piece.
    pieces: BTreeMap<u64, Piece>,
}

#[derive(Clone, Copy)]
struct Piece {
    len: u64,
    /// `false` once freed in stream order: the range is not reused until the stream has
    /// reached the free.
    live: bool,
}

impl Block {
    /// The first gap of `len` bytes, if any.
    fn gap(&self, base: u64, len: u64) -> Option<u64> {
        if self.len - self.used < len {
            return None;
        }
        let mut at = base;
        for (&a, p) in &self.pieces {
            if a - at >= len {
                return Some(at);
            }
            at = a + p.len;
        }
        (base + self.len - at >= len).then_some(at)
    }
}

/// Gives a piece freed in stream order back to its block when the stream has reached the
/// free (dropped by the emulator then).
struct PieceReturn {
    books: Arc<Mutex<Books>>,
    block: u64,
    addr: u64,
}

impl Drop for PieceReturn {
    fn drop(&mut self) {
        let mut books = lock(&self.books);
        if let Some(b) = books.blocks.get_mut(&self.block)
            && let Some(p) = b.pieces.remove(&self.addr)
        {
            b.used -= p.len;
        }
    }
}

fn lock(m: &Mutex<Books>) -> MutexGuard<'_, Books> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The padded size of an `aclrtMalloc` (`extra`: 32 more bytes) or `aclrtMallocAlign32`.
pub(crate) fn padded(size: u64, extra: bool, op: &'static str) -> Result<u64> {
    size.checked_next_multiple_of(ALIGN)
        .and_then(|n| n.checked_add(if extra { ALIGN } else { 0 }))
        .ok_or_else(|| err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("size {size} overflows when padded")))
}

impl SyncHeap {
    pub(crate) fn new(pool: EmuPool, stream: EmuStream, gran: u64) -> SyncHeap {
        SyncHeap { pool, stream, gran, books: Arc::default(), trims_waiting: Arc::default() }
    }

    /// Whether `addr` lies in this heap's pool.
    pub(crate) fn contains(&self, addr: u64) -> bool {
        let base = self.pool.base().addr();
        addr >= base && addr - base < self.pool.size()
    }

    /// A piece of `len` bytes (padded already). Out of device memory: 207001, as CANN.
    pub(crate) fn malloc(&self, len: u64, op: &'static str) -> Result<DevicePtr> {
        let mut books = lock(&self.books);
        for (&base, b) in books.blocks.iter_mut() {
            if let Some(at) = b.gap(base, len) {
                b.pieces.insert(at, Piece { len, live: true });
                b.used += len;
                return Ok(DevicePtr::from_addr(at));
            }
        }
        let p = self.pool.malloc_sync(len, &self.stream).map_err(|e| {
            if e.kind() == ErrorKind::OutOfMemory {
                mempool_hal::Error::new(ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION, op, e.message())
            } else {
                e.with_op(op)
            }
        })?;
        // The pool rounded `len` up to its granularity without overflow.
        let block_len = len.next_multiple_of(self.gran);
        let pieces = BTreeMap::from([(p.addr(), Piece { len, live: true })]);
        books.blocks.insert(p.addr(), Block { len: block_len, used: len, pieces });
        Ok(p)
    }

    /// The block holding `addr` (its start), and the live piece starting at `addr`, or why
    /// there is none (107000).
    fn live_piece(books: &Books, addr: u64, op: &'static str) -> Result<(u64, Piece)> {
        let not = |why: &str| err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("{addr:#x} {why}"));
        let Some((&base, b)) = books.blocks.range(..=addr).next_back().filter(|(a, b)| addr - **a < b.len) else {
            return Err(not("was not allocated by aclrtMalloc (or was freed already)"));
        };
        match b.pieces.get(&addr) {
            Some(p) if p.live => Ok((base, *p)),
            Some(_) => Err(not("was already freed (in stream order)")),
            None => match b.pieces.range(..addr).next_back() {
                Some((&a, p)) if p.live && addr - a < p.len => {
                    Err(not(&format!("is an interior pointer of aclrtMalloc memory at {a:#x}")))
                }
                _ => Err(not("is not the start of live aclrtMalloc memory (freed already, or never allocated)")),
            },
        }
    }

    /// `aclrtFree`: frees the piece at `ptr` now; the last piece of a block gives the
    /// block back to the pool (a free the emulator checks against every access to the
    /// block, then waits for).
    pub(crate) fn free(&self, dev: &Emulator, ptr: DevicePtr, op: &'static str) -> Result<()> {
        let mut books = lock(&self.books);
        let (base, piece) = Self::live_piece(&books, ptr.addr(), op)?;
        let last = books.blocks.get(&base).is_some_and(|b| b.pieces.len() == 1);
        if last {
            self.pool.free(DevicePtr::from_addr(base), &self.stream).map_err(|e| e.with_op(op))?;
            books.blocks.remove(&base);
            drop(books);
            // Wait for the hidden stream to reach the free, then let the host observe it
            // (a complete query is an observation, as a synchronization is), without a
            // synchronization: that would run the release pass of every pool of the
            // device (contract §6), and an `aclrtFree` must leave user pools alone.
            dev.run_pending(&self.stream)?;
            let _ = dev.query_stream(&self.stream)?;
            // `aclrtFree` gives memory back to the device on every runtime (the hidden
            // pool is not released by a synchronization either way now), so the pool is
            // trimmed to what is still allocated. The block is free at once (statistics,
            // reuse, the checker), but CANN's `aclrtFree` does not wait for queued work,
            // and a host function queued before it may still read the block through a raw
            // pointer: the trim waits until every stream has run what was queued before
            // this call, and until every earlier `aclrtFree` has waited too (a trim
            // releases every cached block, theirs included).
            self.trims_waiting.fetch_add(1, Ordering::AcqRel);
            let (pool, waiting) = (self.pool.clone(), Arc::clone(&self.trims_waiting));
            dev.after_queued_work(move || {
                if waiting.fetch_sub(1, Ordering::AcqRel) == 1 {
                    // A trim that races with another thread's `aclrtMalloc` (USED rose
                    // meanwhile) is refused and changes nothing; the next one trims.
                    if let Ok(used) = pool.get(UsedMemCurrent) {
                        let _ = pool.trim_to(used);
                    }
                }
            });
            return Ok(());
        }
        if let Some(b) = books.blocks.get_mut(&base) {
            b.pieces.remove(&ptr.addr());
            b.used -= piece.len;
        }
        Ok(())
    }

    /// `aclrtMemPoolFreeAsync` of `aclrtMalloc` memory: frees the piece at `ptr` in stream
    /// order on `stream`. The last piece of a block frees the block in stream order (the
    /// emulator checks it); another piece is unusable at once and its range is reused once
    /// the stream has reached the free. A block emptied that way stays in the heap for
    /// later pieces.
    pub(crate) fn free_async(
        &self,
        dev: &Emulator,
        ptr: DevicePtr,
        stream: &EmuStream,
        op: &'static str,
    ) -> Result<()> {
        let mut books = lock(&self.books);
        let (base, _) = Self::live_piece(&books, ptr.addr(), op)?;
        let last = books.blocks.get(&base).is_some_and(|b| b.pieces.len() == 1);
        if last {
            dev.free(DevicePtr::from_addr(base), stream).map_err(|e| e.with_op(op))?;
            books.blocks.remove(&base);
            return Ok(());
        }
        if let Some(p) = books.blocks.get_mut(&base).and_then(|b| b.pieces.get_mut(&ptr.addr())) {
            p.live = false;
        }
        drop(books);
        let back = PieceReturn { books: Arc::clone(&self.books), block: base, addr: ptr.addr() };
        dev.hold_until_reached(stream, back).map_err(|e| e.with_op(op))
    }

    /// For a copy or memset of `[addr, addr + len)`: `None` when `addr` is not in one of
    /// this heap's blocks (the emulator checks it); otherwise whether the range lies inside
    /// one live piece (107000 if not).
    pub(crate) fn check_range(&self, addr: u64, len: u64, op: &'static str) -> Option<Result<()>> {
        let books = lock(&self.books);
        let (_, b) = books.blocks.range(..=addr).next_back().filter(|(a, b)| addr - **a < b.len)?;
        let inside = b.pieces.range(..=addr).next_back().filter(|(a, p)| {
            p.live && addr - **a < p.len && addr.checked_add(len).is_some_and(|end| end <= **a + p.len)
        });
        Some(match inside {
            Some(_) => Ok(()),
            None => Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!(
                    "[{addr:#x}, +{len}) is not inside one live aclrtMalloc allocation (its padded size): freed \
                     memory, or a range running past the end of its allocation"
                ),
            )),
        })
    }
}
