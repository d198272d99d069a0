//! The host memory behind one pool: an address range reserved once, made accessible in
//! chunks while any of it is reserved, and given back at the granularity.
//!
//! The range is mapped `PROT_NONE` with `MAP_NORESERVE`, so reserving a 16 GiB pool costs
//! address space only. [`Commits`] counts the reserved bytes of each chunk: a chunk
//! becomes readable and writable when its first byte is reserved and inaccessible again
//! when its last byte is released, so carving a block costs a system call only when it
//! reaches into an untouched chunk. Chunks grow geometrically with their distance from
//! the start of the range: the first two have the base size (64 MiB or more), and each
//! later one is as large as all the chunks before it together (64, 64, 128, 256, ...
//! MiB), so a pool that grows to `n` bytes from its start (the best fit carves fresh
//! space at the lowest address) makes about `log2(n / 64 MiB)` of these calls rather
//! than one per 64 MiB, and the accessible range never reaches beyond twice the end of
//! the highest reserved byte. Pages become resident when first touched; a release gives
//! the released pages back to the kernel at once (`MADV_DONTNEED`), so a release really
//! returns memory, and a stray access to a chunk with nothing reserved cannot go
//! unnoticed.
//!
//! A dropped mapping (its pool destroyed and no longer held) keeps its address range for a
//! while, inaccessible and without memory ([`quarantined`]): the host cannot map anything
//! else there at once, so a device pointer that outlived its pool still names no host
//! memory, and copies and accesses through it are refused instead of landing in whatever
//! the host would have put there. The oldest ranges go back to the host beyond 256 ranges
//! or 16 TiB of address space.

use rustix::mm::{Advice, MapFlags, MprotectFlags, ProtFlags};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::io;
use std::ptr;
use std::sync::{Mutex, PoisonError};

/// Address ranges (start, length) of dropped mappings still kept, oldest first.
static QUARANTINE: Mutex<VecDeque<(usize, usize)>> = Mutex::new(VecDeque::new());
/// The most dropped ranges kept.
const QUARANTINE_RANGES: usize = 256;
/// The most address space the kept ranges take.
const QUARANTINE_BYTES: usize = 16 << 40;

/// Whether `addr` lies in the kept range of a dropped mapping.
pub(crate) fn quarantined(addr: u64) -> bool {
    let q = QUARANTINE.lock().unwrap_or_else(PoisonError::into_inner);
    q.iter().any(|&(start, len)| addr >= start as u64 && addr - (start as u64) < len as u64)
}

/// Below this many bytes an index array is left on normal pages ([`advise_huge`]).
const HUGE_MIN: usize = 4 << 20;

/// Asks the kernel to back the whole pages of `[ptr, ptr + len)`, an allocation of the
/// caller's, with transparent huge pages (`MADV_HUGEPAGE`): the pool's large index arrays,
/// whose random accesses would otherwise miss the TLB on nearly every page. A hint only:
/// ranges under 4 MiB are left alone, and a kernel without huge pages (or an error) changes
/// nothing.
pub(crate) fn advise_huge(ptr: *const u8, len: usize) {
    if len < HUGE_MIN {
        return;
    }
    let page = rustix::param::page_size();
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + len) / page * page;
    if end <= start {
        return;
    }
    // SAFETY: the whole pages of a live allocation the caller owns (rounded inward, so no
    // other object's page is named); MADV_HUGEPAGE changes how its pages are backed, never
    // their contents, and creates no reference.
    let _ = unsafe { rustix::mm::madvise(start as *mut c_void, end - start, Advice::LinuxHugepage) };
}

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
// inside it is synchronized by the pool (its lock, and the pins of ranges being copied),
// and the pointers are never dereferenced through `Mapping` itself.
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

    /// Reserves `len` bytes of address space at `addr` exactly, if nothing is mapped there
    /// (`MAP_FIXED_NOREPLACE`); `None` when something is, or the kernel placed it
    /// elsewhere (a kernel before Linux 4.17 takes the flag as a hint).
    pub(crate) fn reserve_at(addr: u64, len: u64) -> Option<Mapping> {
        let len = usize::try_from(len).ok()?;
        let at = usize::try_from(addr).ok()?;
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping, so the new range
        // cannot alias any Rust object; a range placed elsewhere is unmapped below.
        let raw = unsafe {
            rustix::mm::mmap_anonymous(
                at as *mut c_void,
                len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED_NOREPLACE,
            )
        }
        .ok()?;
        if raw as usize != at {
            // SAFETY: the range the kernel just mapped for this call; nothing refers to it.
            let _ = unsafe { rustix::mm::munmap(raw, len) };
            return None;
        }
        Some(Mapping { raw, raw_len: len, base: at, len })
    }

    /// The first usable address.
    pub(crate) fn base(&self) -> u64 {
        self.base as u64
    }

    /// The usable length.
    pub(crate) fn len(&self) -> u64 {
        self.len as u64
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
        // inaccessible happens only when nothing in it is reserved, or the pool was
        // given back at its destroy (cann-open) once no range was pinned, so no work may
        // touch it (every copy checks both under the pool lock when it pins its range,
        // and a pinned range is never released).
        unsafe { rustix::mm::mprotect(p, l, flags) }?;
        Ok(())
    }

    /// Gives the pages of `[addr, addr + len)` back to the kernel (they read as zero
    /// when touched again).
    fn discard(&self, addr: u64, len: u64) -> io::Result<()> {
        let (p, l) = self.range_ptr(addr, len);
        // SAFETY: the range lies inside this mapping and the pool has checked that no
        // queued work can touch it (its free has executed, or the pool was given back at
        // its destroy and every access now fails); the caller holds the pool lock and no
        // range being copied (pinned) lies inside it, so no copy is inside it now.
        unsafe { rustix::mm::madvise(p, l, Advice::LinuxDontNeed) }?;
        Ok(())
    }
}

/// Reserved bytes per chunk of a [`Mapping`]: which chunks are accessible.
///
/// Chunk 0 is `[0, base)` of the mapping and chunk `k >= 1` is `[base << (k - 1),
/// base << k)`, where `base` (a power of two) is the base chunk size: the chunk of offset
/// `o` is the bit length of `o / base`.
#[derive(Debug)]
pub(crate) struct Commits {
    /// log2 of the base chunk size.
    shift: u32,
    /// Reserved bytes in each chunk.
    reserved: Vec<u64>,
}

impl Commits {
    /// Counts for a mapping of `size` bytes carved at `gran` (a power of two): a base chunk
    /// size of at least 64 MiB and the granularity, and at least 1/65,536 of the mapping;
    /// chunks double from there (see the type). (Large chunks keep system calls rare when
    /// many blocks are carved; released pages are given back at the granularity whatever
    /// the chunk size.)
    pub(crate) fn new(size: u64, gran: u64) -> Commits {
        let chunk = gran.max(64 << 20).max((size >> 16).next_power_of_two());
        let shift = chunk.trailing_zeros();
        Commits { shift, reserved: vec![0; Self::chunk_of(shift, size.max(1) - 1) + 1] }
    }

    /// The chunk holding offset `off` of a mapping whose base chunk size is `1 << shift`.
    fn chunk_of(shift: u32, off: u64) -> usize {
        (u64::BITS - (off >> shift).leading_zeros()) as usize
    }

    /// The offset where chunk `k` starts.
    fn chunk_start(&self, k: usize) -> u64 {
        if k == 0 { 0 } else { 1u64.checked_shl(self.shift + k as u32 - 1).unwrap_or(u64::MAX) }
    }

    /// The chunks `[addr, addr + len)` overlaps (relative to the mapping), each with the
    /// number of its bytes inside the range.
    fn overlaps(&self, map: &Mapping, addr: u64, len: u64) -> impl Iterator<Item = (usize, u64)> + use<> {
        let (start, end) = (addr - map.base(), addr - map.base() + len);
        let shift = self.shift;
        let first = Self::chunk_of(shift, start);
        let last = Self::chunk_of(shift, end - 1);
        let bound = move |k: usize| if k == 0 { 0 } else { 1u64.checked_shl(shift + k as u32 - 1).unwrap_or(u64::MAX) };
        (first..=last).map(move |k| {
            let lo = bound(k).max(start);
            let hi = bound(k + 1).min(end);
            (k, hi - lo)
        })
    }

    /// Applies `protect(rw)` to `chunks` (ascending), one call per run of adjacent ones.
    fn protect_runs(&self, map: &Mapping, chunks: impl Iterator<Item = usize>, rw: bool) -> io::Result<()> {
        let mut run: Option<(usize, usize)> = None;
        for k in chunks {
            run = match run {
                Some((first, last)) if k == last + 1 => Some((first, k)),
                Some((first, last)) => {
                    self.protect(map, first, last, rw)?;
                    Some((k, k))
                }
                None => Some((k, k)),
            };
        }
        match run {
            Some((first, last)) => self.protect(map, first, last, rw),
            None => Ok(()),
        }
    }

    /// Applies `protect(rw)` to chunks `first..=last`.
    fn protect(&self, map: &Mapping, first: usize, last: usize, rw: bool) -> io::Result<()> {
        let lo = self.chunk_start(first);
        let hi = self.chunk_start(last + 1).min(map.len as u64);
        map.protect(map.base() + lo, hi - lo, rw)
    }

    /// Reserves `[addr, addr + len)`: makes the chunks that had nothing reserved
    /// accessible. On error nothing is counted.
    pub(crate) fn commit(&mut self, map: &Mapping, addr: u64, len: u64) -> io::Result<()> {
        let untouched = self.overlaps(map, addr, len).filter(|&(k, _)| self.reserved[k] == 0).map(|(k, _)| k);
        self.protect_runs(map, untouched, true)?;
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
        for (k, n) in self.overlaps(map, addr, len) {
            self.reserved[k] -= n;
        }
        // Every chunk of the range held some of it, so those at zero now were emptied.
        let emptied = self.overlaps(map, addr, len).filter(|&(k, _)| self.reserved[k] == 0).map(|(k, _)| k);
        self.protect_runs(map, emptied, false)?;
        discarded
    }

    /// Gives every page of the mapping back and makes all of it inaccessible: the pool
    /// was destroyed without waiting for queued work (the cann-open profile). The caller
    /// holds the pool lock and has marked the pool so that no work touches it again.
    pub(crate) fn decommit_all(&mut self, map: &Mapping) -> io::Result<()> {
        let discarded = map.discard(map.base(), map.len as u64);
        let held: Vec<usize> = (0..self.reserved.len()).filter(|&k| self.reserved[k] > 0).collect();
        self.reserved.iter_mut().for_each(|n| *n = 0);
        self.protect_runs(map, held.into_iter(), false)?;
        discarded
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `raw`/`raw_len` are exactly what mmap returned, and this is the last owner
        // of the range: every pool and queued operation that could touch it held an `Arc`
        // to the pool that owns this mapping. A fresh inaccessible mapping over it gives
        // every page back and keeps the range (see `quarantined`).
        let kept = unsafe {
            rustix::mm::mmap_anonymous(
                self.raw,
                self.raw_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
            )
        };
        let this = (self.raw as usize, self.raw_len);
        let mut gone = Vec::new();
        if kept.is_ok() {
            let mut q = QUARANTINE.lock().unwrap_or_else(PoisonError::into_inner);
            q.push_back(this);
            let mut total: usize = q.iter().map(|&(_, len)| len).sum();
            while q.len() > QUARANTINE_RANGES || total > QUARANTINE_BYTES {
                let Some(oldest) = q.pop_front() else { break };
                total -= oldest.1;
                gone.push(oldest);
            }
        } else {
            gone.push(this);
        }
        for (start, len) in gone {
            // SAFETY: a range this module mapped and no longer uses (this mapping's, or a
            // kept one leaving the quarantine); nothing refers to memory inside it.
            let _ = unsafe { rustix::mm::munmap(start as *mut c_void, len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The permissions `/proc/self/maps` gives the page at `addr` ("rw-p", "---p", ...).
    fn perms(addr: u64) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines()
            .find_map(|l| {
                let (range, rest) = l.split_once(' ')?;
                let (lo, hi) = range.split_once('-')?;
                let (lo, hi) = (u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?);
                (lo <= addr && addr < hi).then(|| rest[..4].to_string())
            })
            .expect("the address is mapped")
    }

    /// A chunk becomes accessible with its first reserved byte and inaccessible again with
    /// its last released one; a range spanning chunks is handled per chunk; chunks double
    /// in size beyond the first two.
    #[test]
    fn chunks_follow_their_reserved_bytes() {
        const MIB: u64 = 1 << 20;
        let map = Mapping::reserve(1024 * MIB, 2 * MIB).expect("reserve");
        let mut c = Commits::new(1024 * MIB, 2 * MIB);
        assert_eq!(c.shift, 26, "64 MiB base chunks");
        // [0, 64), [64, 128), [128, 256), [256, 512), [512, 1024) MiB.
        assert_eq!(c.reserved.len(), 5);
        let starts: Vec<u64> = (0..=5).map(|k| c.chunk_start(k) / MIB).collect();
        assert_eq!(starts, [0, 64, 128, 256, 512, 1024]);
        let b = map.base();
        assert_eq!(perms(b), "---p");
        c.commit(&map, b, 2 * MIB).unwrap();
        c.commit(&map, b + 4 * MIB, 2 * MIB).unwrap();
        assert_eq!(perms(b + 10 * MIB), "rw-p", "the whole first chunk");
        assert_eq!(perms(b + 64 * MIB), "---p", "not the next one");
        c.decommit(&map, b, 2 * MIB).unwrap();
        assert_eq!(perms(b), "rw-p", "the chunk still holds a reserved range");
        c.decommit(&map, b + 4 * MIB, 2 * MIB).unwrap();
        assert_eq!(perms(b), "---p", "emptied");
        // Across chunks 0-2.
        c.commit(&map, b + 62 * MIB, 70 * MIB).unwrap();
        for at in [0, 64, 128, 255] {
            assert_eq!(perms(b + at * MIB), "rw-p", "{at} MiB");
        }
        assert_eq!(perms(b + 256 * MIB), "---p");
        assert_eq!(c.reserved[..3], [2 * MIB, 64 * MIB, 4 * MIB]);
        c.decommit(&map, b + 62 * MIB, 70 * MIB).unwrap();
        assert!(c.reserved.iter().all(|&r| r == 0));
        for at in [0, 64, 128, 256, 512] {
            assert_eq!(perms(b + at * MIB), "---p", "{at} MiB");
        }
        // One granule in the last chunk opens all of it, and nothing below.
        c.commit(&map, b + 600 * MIB, 2 * MIB).unwrap();
        assert_eq!((perms(b + 512 * MIB), perms(b + 1023 * MIB)), ("rw-p".into(), "rw-p".into()));
        assert_eq!(perms(b + 511 * MIB), "---p");
        c.decommit(&map, b + 600 * MIB, 2 * MIB).unwrap();
        assert_eq!(perms(b + 512 * MIB), "---p");
    }

    /// The chunk of an offset, and the count of chunks, at the edges.
    #[test]
    fn chunk_bounds() {
        const MIB: u64 = 1 << 20;
        let c = Commits::new(16 << 30, 2 * MIB);
        // 64 MiB, then 64 MiB up to 8 GiB: 9 chunks for 16 GiB.
        assert_eq!(c.reserved.len(), 9);
        for k in 0..9 {
            let (lo, hi) = (c.chunk_start(k), c.chunk_start(k + 1));
            assert_eq!(Commits::chunk_of(c.shift, lo), k);
            assert_eq!(Commits::chunk_of(c.shift, hi - 1), k);
        }
        // A pool of one granule, and one just over a base chunk.
        assert_eq!(Commits::new(2 * MIB, 2 * MIB).reserved.len(), 1);
        assert_eq!(Commits::new(66 * MIB, 2 * MIB).reserved.len(), 2);
        assert_eq!(Commits::chunk_of(26, u64::MAX), 64 - 26);
    }
}
