//! The system calls on a reserved range's host addresses: a chunk's pages put at an
//! address (`MAP_SHARED | MAP_FIXED` of its file, so every mapping of one chunk shows the
//! same bytes), access applied with `mprotect`, and an unmapped range made an inaccessible
//! reservation again (a fresh `PROT_NONE`, `MAP_NORESERVE` anonymous mapping over it).
//!
//! The range itself is a pool's kind of reservation (`pool/mapping.rs`): reserved
//! `PROT_NONE` once, and kept out of the host's reach for a while after it is dropped.
//! Every address passed here lies inside the range (the bookkeeping of `space.rs` checks
//! it first), and nothing in the emulator dereferences these addresses: its copies go
//! through each chunk's own view (`chunk.rs`).

use super::chunk::Chunk;
use crate::pool::mapping::Mapping as HostRange;
use mempool_hal::Access;
use rustix::mm::{MapFlags, MprotectFlags, ProtFlags};
use std::ffi::c_void;
use std::io;

/// The pointer and length of `[at, at + len)`, which must lie inside `host`.
fn span(host: &HostRange, at: u64, len: u64) -> (*mut c_void, usize) {
    assert!(at >= host.base() && at + len <= host.base() + host.len(), "a range of the reservation");
    // Only handed to system calls, never dereferenced here.
    (at as usize as *mut c_void, len as usize)
}

fn prot(access: Access) -> ProtFlags {
    match access {
        Access::None => ProtFlags::empty(),
        Access::Read => ProtFlags::READ,
        Access::ReadWrite => ProtFlags::READ | ProtFlags::WRITE,
    }
}

/// Puts `len` bytes of `chunk` from `offset` at `at`, with `access`.
pub(crate) fn map_chunk(
    host: &HostRange,
    at: u64,
    len: u64,
    chunk: &Chunk,
    offset: u64,
    access: Access,
) -> io::Result<()> {
    let (p, l) = span(host, at, len);
    // SAFETY: `[at, at + len)` lies in the reservation and holds no mapping (the
    // bookkeeping says so): what MAP_FIXED replaces there is the inaccessible reservation,
    // or the pages of an unmapped chunk that nothing in the emulator reaches through this
    // address. The new pages are the chunk's file, which stays open while mapped.
    let got = unsafe { rustix::mm::mmap(p, l, prot(access), MapFlags::SHARED | MapFlags::FIXED, chunk.fd(), offset) }?;
    debug_assert_eq!(got, p);
    Ok(())
}

/// Applies `access` to `[at, at + len)`, a mapped part of the reservation.
pub(crate) fn protect(host: &HostRange, at: u64, len: u64, access: Access) -> io::Result<()> {
    let (p, l) = span(host, at, len);
    let flags = match access {
        Access::None => MprotectFlags::empty(),
        Access::Read => MprotectFlags::READ,
        Access::ReadWrite => MprotectFlags::READ | MprotectFlags::WRITE,
    };
    // SAFETY: the range lies in the reservation and is mapped; changing its protection
    // creates no reference, and the emulator never accesses memory through it.
    unsafe { rustix::mm::mprotect(p, l, flags) }?;
    Ok(())
}

/// Makes `[at, at + len)` an inaccessible reservation again: the chunk pages there go.
pub(crate) fn restore(host: &HostRange, at: u64, len: u64) -> io::Result<()> {
    let (p, l) = span(host, at, len);
    // SAFETY: the range lies in the reservation and its unmapping has drained: no work
    // queued before it remains, and the emulator refuses work touching it since. A fresh
    // inaccessible anonymous mapping over it aliases no Rust object.
    unsafe {
        rustix::mm::mmap_anonymous(p, l, ProtFlags::empty(), MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED)
    }?;
    Ok(())
}
