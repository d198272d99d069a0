//! The host memory behind one pool: an address range reserved once, made accessible in
//! chunks while any of it is reserved, and given back at the granularity.
//!
//! The range is mapped `PROT_NONE` with `MAP_NORESERVE`, so reserving a 16 GiB pool costs
//! address space only. [`Commits`] counts the reserved bytes of each chunk (64 MiB or
//! more): a chunk becomes readable and writable when its first byte is reserved and
//! inaccessible again when its last byte is released, so carving a block costs a system
//! call only when it reaches into an untouched chunk. Pages become resident when first
//! touched; a release gives the released pages back to the kernel at once
//! (`MADV_DONTNEED`), so a release really returns memory, and a stray access to a
//! chunk with nothing reserved cannot go unnoticed.

use rustix::mm::{Advice, MapFlags, MprotectFlags, ProtFlags};
use std::ffi::c_void;
use std::io;
use std::ptr;

/// A reserved address range, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    /// Start of the whole mapping (as returned by mmap).
    raw: *mut c_void,
    /// Length of the whole mapping.
    raw_len: usize,
    /// The granularity-aligned start of the usable range.
    base: usize,
    /// The usable length.
    len: usize,
}

// SAFETY: the mapping is a plain address range owned by this value; access to the memory
// inside it is synchronized by the pool's lock, and the pointers are never dereferenced
// through `Mapping` itself.
unsafe impl Send for Mapping {}
// SAFETY: as above; `Mapping`'s own methods only issue syscalls on ranges inside it.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Reserves `len` bytes of address space aligned to `align` (a power of two, at least
    /// the page size).
    pub(crate) fn reserve(len: u64, align: u64) -> io::Result<Mapping> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let align = usize::try_from(align).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let raw_len = len.checked_add(align).ok_or(io::ErrorKind::OutOfMemory)?;
        // SAFETY: an anonymous mapping at an address of the kernel's choosing cannot alias
        // any existing Rust object.
        let raw = unsafe {
            rustix::mm::mmap_anonymous(
                ptr::null_mut(),
                raw_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }?;
        let base = (raw as usize).next_multiple_of(align);
        Ok(Mapping { raw, raw_len, base, len })
    }

    /// The first usable address.
    pub(crate) fn base(&self) -> u64 {
        self.base as u64
    }

    fn range_ptr(&self, addr: u64, len: u64) -> (*mut c_void, usize) {
        let off = (addr - self.base as u64) as usize;
        debug_assert!(off + len as usize <= self.len);
        // The pointer is only handed to syscalls, never dereferenced here.
        ((self.base + off) as *mut c_void, len as usize)
    }

    /// Makes `[addr, addr + len)` readable and writable (`rw`) or inaccessible.
    fn protect(&self, addr: u64, len: u64, rw: bool) -> io::Result<()> {
        let (p, l) = self.range_ptr(addr, len);
        let flags = if rw { MprotectFlags::READ | MprotectFlags::WRITE } else { MprotectFlags::empty() };
        // SAFETY: the range lies inside this mapping (the pool only passes ranges of its
        // own address space). Making it accessible creates no reference; making it
        // inaccessible happens only when nothing in it is reserved, so no queued work
        // may touch it (the pool checks that under the lock every copy takes).
        unsafe { rustix::mm::mprotect(p, l, flags) }?;
        Ok(())
    }

    /// Gives the pages of `[addr, addr + len)` back to the kernel (they read as zero
    /// when touched again).
    fn discard(&self, addr: u64, len: u64) -> io::Result<()> {
        let (p, l) = self.range_ptr(addr, len);
        // SAFETY: the range lies inside this mapping and the pool has checked that no
        // queued work can touch it (its free has executed); the caller holds the pool lock
        // that every checked copy takes, so no copy is inside it now.
        unsafe { rustix::mm::madvise(p, l, Advice::LinuxDontNeed) }?;
        Ok(())
    }
}

/// Reserved bytes per chunk of a [`Mapping`]: which chunks are accessible.
#[derive(Debug)]
pub(crate) struct Commits {
    /// log2 of the chunk size.
    shift: u32,
    /// Reserved bytes in each chunk.
    reserved: Vec<u64>,
}

impl Commits {
    /// Counts for a mapping of `size` bytes carved at `gran` (a power of two): chunks of
    /// at least 64 MiB and the granularity, and at most 65,536 of them. (Large chunks keep
    /// system calls rare when many small blocks are carved; released pages are given back
    /// at the granularity whatever the chunk size.)
    pub(crate) fn new(size: u64, gran: u64) -> Commits {
        let chunk = gran.max(64 << 20).max((size >> 16).next_power_of_two());
        Commits { shift: chunk.trailing_zeros(), reserved: vec![0; size.div_ceil(chunk) as usize] }
    }

    /// The chunks `[addr, addr + len)` overlaps (relative to the mapping), each with the
    /// number of its bytes inside the range.
    fn overlaps(&self, map: &Mapping, addr: u64, len: u64) -> impl Iterator<Item = (usize, u64)> + use<> {
        let (start, end) = (addr - map.base(), addr - map.base() + len);
        let shift = self.shift;
        let first = start >> shift;
        let last = (end - 1) >> shift;
        (first..=last).map(move |k| {
            let lo = (k << shift).max(start);
            let hi = ((k + 1) << shift).min(end);
            (k as usize, hi - lo)
        })
    }

    /// Applies `protect(rw)` to the runs of chunks in `chunks` (ascending) at once.
    fn protect_runs(&self, map: &Mapping, chunks: &[usize], rw: bool) -> io::Result<()> {
        let mut i = 0;
        while i < chunks.len() {
            let mut j = i + 1;
            while j < chunks.len() && chunks[j] == chunks[j - 1] + 1 {
                j += 1;
            }
            let lo = (chunks[i] as u64) << self.shift;
            let hi = ((chunks[j - 1] as u64 + 1) << self.shift).min(map.len as u64);
            map.protect(map.base() + lo, hi - lo, rw)?;
            i = j;
        }
        Ok(())
    }

    /// Reserves `[addr, addr + len)`: makes the chunks that had nothing reserved
    /// accessible. On error nothing is counted.
    pub(crate) fn commit(&mut self, map: &Mapping, addr: u64, len: u64) -> io::Result<()> {
        let untouched: Vec<usize> =
            self.overlaps(map, addr, len).filter(|&(k, _)| self.reserved[k] == 0).map(|(k, _)| k).collect();
        self.protect_runs(map, &untouched, true)?;
        for (k, n) in self.overlaps(map, addr, len) {
            self.reserved[k] += n;
        }
        Ok(())
    }

    /// Releases `[addr, addr + len)`: gives its pages back and makes the chunks left with
    /// nothing reserved inaccessible. The counts change even if a system call fails (the
    /// pages then stay resident or accessible, but the bookkeeping stays exact).
    pub(crate) fn decommit(&mut self, map: &Mapping, addr: u64, len: u64) -> io::Result<()> {
        let discarded = map.discard(addr, len);
        let mut emptied = Vec::new();
        for (k, n) in self.overlaps(map, addr, len) {
            self.reserved[k] -= n;
            if self.reserved[k] == 0 {
                emptied.push(k);
            }
        }
        self.protect_runs(map, &emptied, false)?;
        discarded
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `raw`/`raw_len` are exactly what mmap returned, and this is the last owner
        // of the range: every pool and queued operation that could touch it held an `Arc`
        // to the pool that owns this mapping.
        let _ = unsafe { rustix::mm::munmap(self.raw, self.raw_len) };
    }
}
