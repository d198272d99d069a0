//! The host memory behind one pool: an address range reserved once, committed and
//! decommitted at the granularity.
//!
//! The range is mapped `PROT_NONE` with `MAP_NORESERVE`, so reserving a 16 GiB pool costs
//! address space only. Committing a range makes it readable and writable (pages become
//! resident when first touched); decommitting gives the pages back to the kernel
//! (`MADV_DONTNEED`) and makes the range inaccessible again, so a release really returns
//! memory and a stray access to released memory cannot go unnoticed.

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

    /// Makes `[addr, addr + len)` readable and writable.
    pub(crate) fn commit(&self, addr: u64, len: u64) -> io::Result<()> {
        let (p, l) = self.range_ptr(addr, len);
        // SAFETY: the range lies inside this mapping (the pool only passes ranges of its
        // own address space); nothing in Rust holds references into a PROT_NONE range.
        unsafe { rustix::mm::mprotect(p, l, MprotectFlags::READ | MprotectFlags::WRITE) }?;
        Ok(())
    }

    /// Gives the pages of `[addr, addr + len)` back and makes the range inaccessible.
    pub(crate) fn decommit(&self, addr: u64, len: u64) -> io::Result<()> {
        let (p, l) = self.range_ptr(addr, len);
        // SAFETY: the range lies inside this mapping and the pool has checked that no
        // queued work can touch it (its free has executed); the caller holds the pool lock
        // that every checked copy takes, so no copy is inside it now.
        unsafe {
            rustix::mm::madvise(p, l, Advice::LinuxDontNeed)?;
            rustix::mm::mprotect(p, l, MprotectFlags::empty())?;
        }
        Ok(())
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
