//! The bookkeeping of a platform's virtual memory: reserved ranges by base address, the
//! chunks mapped in each, the live handles of physical chunks, and the unmappings whose
//! queued work has not run yet. Every call's checks live here, under one lock; the system
//! calls on the host ranges are in `range.rs`.
//!
//! Codes (ACL numbering, [contract §14](mempool_hal::contract::vmm)): a missing argument
//! is 100000 as CANN's ACL layer answers; what CANN's driver library refuses is 107000;
//! what its kernel module refuses (a mapping outside a reservation, over a mapping,
//! misaligned, beyond its chunk; an unmapping of nothing; a chunk size not a multiple of
//! the granularity) is 507899; out of device memory is 207001. The kind carries CUDA's
//! code: the CPU libcuda stamps it from the CUDA numbering's table
//! (`mempool_cuda::result::code_of`), so `InvalidParam` is `CUDA_ERROR_INVALID_VALUE` and
//! `OutOfMemory` is `CUDA_ERROR_OUT_OF_MEMORY`.

use super::chunk::Chunk;
use super::range;
use crate::pool::mapping::Mapping as HostRange;
use crate::sync::{Arc, Mutex, MutexGuard, PoisonError};
use mempool_hal::{Access, DevicePtr, Error, ErrorKind, Mapping, Physical, Profile, Reserved, Result, code};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// A missing or zero argument, as CANN's ACL layer refuses it: `InvalidParam`, 100000.
pub(crate) fn acl_param(op: &'static str, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, msg)
}

/// What CANN's driver library refuses: `InvalidParam`, 107000.
pub(crate) fn param(op: &'static str, msg: impl Into<String>) -> Error {
    Error::invalid_param(op, msg)
}

/// What CANN's driver kernel module refuses: `InvalidParam`, 507899.
pub(crate) fn drv(op: &'static str, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_DRV_INTERNAL_ERROR, op, msg)
}

/// One chunk mapped in a range.
#[derive(Debug, Clone)]
pub(crate) struct Mapped {
    /// Mapped bytes.
    pub(crate) size: u64,
    /// Where in the chunk the mapping starts.
    pub(crate) offset: u64,
    pub(crate) chunk: Arc<Chunk>,
    pub(crate) access: Access,
}

/// An unmapped range whose chunk stays at its address until the work queued before the
/// unmapping has run.
#[derive(Debug)]
struct Draining {
    id: u64,
    at: u64,
    size: u64,
}

/// One reserved range.
#[derive(Debug)]
struct Range {
    host: Arc<HostRange>,
    size: u64,
    /// Mappings by address.
    maps: BTreeMap<u64, Mapped>,
    draining: Vec<Draining>,
}

impl Range {
    fn end(&self, base: u64) -> u64 {
        base + self.size
    }

    /// The mappings covering `[at, at + size)` back to back, starting exactly at `at` and
    /// ending exactly at its end (whole mappings only); `None` if there is a gap or an
    /// edge falls inside a mapping.
    fn whole_maps(&self, at: u64, size: u64) -> Option<Vec<u64>> {
        let end = at.checked_add(size)?;
        let mut out = Vec::new();
        let mut next = at;
        for (&a, m) in self.maps.range(at..end) {
            if a != next {
                return None;
            }
            next = a + m.size;
            out.push(a);
        }
        (next == end && !out.is_empty()).then_some(out)
    }

    /// Whether `[at, at + size)` overlaps a mapping.
    fn overlaps_map(&self, at: u64, size: u64) -> bool {
        let end = at + size;
        let below = self.maps.range(..at).next_back().is_some_and(|(&a, m)| a + m.size > at);
        below || self.maps.range(at..end).next().is_some()
    }
}

/// A live handle of a physical chunk: the chunk and its references (one from the
/// creation, one per retain).
#[derive(Debug)]
struct Handle {
    chunk: Arc<Chunk>,
    refs: u32,
}

#[derive(Debug, Default)]
struct State {
    ranges: BTreeMap<u64, Range>,
    handles: HashMap<u64, Handle>,
    next_handle: u64,
    next_drain: u64,
}

impl State {
    /// The range holding `addr`, with its base.
    fn range_at(&self, addr: u64) -> Option<(u64, &Range)> {
        let (&base, r) = self.ranges.range(..=addr).next_back()?;
        (addr < r.end(base)).then_some((base, r))
    }

    fn range_at_mut(&mut self, addr: u64) -> Option<(u64, &mut Range)> {
        let (&base, r) = self.ranges.range_mut(..=addr).next_back()?;
        (addr < base + r.size).then_some((base, r))
    }
}

/// Where one piece of a device range lives: `len` bytes of `chunk` from `off`.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub(crate) chunk: Arc<Chunk>,
    pub(crate) off: u64,
    pub(crate) len: u64,
}

/// What an unmapping leaves to finish once the work queued before it has run: the pages
/// stay at their address until then ([`VmmSpace::finish_unmap`]).
#[derive(Debug)]
pub(crate) struct Unmapped {
    pub(crate) ids: Vec<u64>,
    /// Keep the host range and the chunks until then.
    pub(crate) keep: (Arc<HostRange>, Vec<Arc<Chunk>>),
}

/// The virtual memory of one platform (see the module docs).
#[derive(Debug)]
pub(crate) struct VmmSpace {
    state: Mutex<State>,
    /// The longest a copy waits for an overlapping one on a chunk (`Config::wait_timeout`).
    pub(crate) timeout: Duration,
}

impl Default for VmmSpace {
    fn default() -> Self {
        VmmSpace::new(crate::Config::default().wait_timeout)
    }
}

impl VmmSpace {
    pub(crate) fn new(timeout: Duration) -> VmmSpace {
        VmmSpace { state: Mutex::new(State::default()), timeout }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `[addr, addr + len)` is wholly mapped (whatever its access).
    pub(crate) fn is_mapped(&self, addr: u64, len: u64) -> bool {
        let st = self.state();
        let Some((base, r)) = st.range_at(addr) else { return false };
        let Some(end) = addr.checked_add(len).filter(|&e| e <= r.end(base)) else { return false };
        let mut next = addr;
        let first = r.maps.range(..=addr).next_back().map_or(addr, |(&a, _)| a);
        for (&a, m) in r.maps.range(first..end) {
            if a > next {
                return false;
            }
            next = next.max(a + m.size);
        }
        next >= end
    }

    /// Reserves `size` bytes aligned to `align` (a power of two, at least the page size),
    /// at `hint` if it is aligned and free.
    pub(crate) fn reserve(&self, size: u64, align: u64, hint: Option<u64>, op: &'static str) -> Result<Reserved> {
        let oom = |why: String| Error::new(ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION, op, why);
        let at_hint = hint.filter(|h| h % align == 0).and_then(|h| HostRange::reserve_at(h, size));
        let host = match at_hint {
            Some(h) => h,
            None => HostRange::reserve(size, align)
                .map_err(|e| oom(format!("no {size} bytes of address space aligned to {align}: {e}")))?,
        };
        let base = host.base();
        let mut st = self.state();
        st.ranges.insert(base, Range { host: Arc::new(host), size, maps: BTreeMap::new(), draining: Vec::new() });
        Ok(Reserved { base: DevicePtr::from_addr(base), size })
    }

    /// Releases the range reserved at `base` with `size` bytes.
    pub(crate) fn release(&self, base: u64, size: u64, op: &'static str) -> Result<()> {
        let mut st = self.state();
        let Some(r) = st.ranges.get(&base) else {
            return Err(param(op, format!("{base:#x} is not the base of a reserved range")));
        };
        if r.size != size {
            return Err(param(op, format!("the range at {base:#x} has {} bytes, not {size}", r.size)));
        }
        if let Some((&at, m)) = r.maps.iter().next() {
            return Err(param(
                op,
                format!(
                    "the range at {base:#x} is still mapped ({} mapping(s), the first at {at:#x}, {} bytes)",
                    r.maps.len(),
                    m.size
                ),
            ));
        }
        // Unmappings still draining keep the host range themselves (`Unmapped::keep`).
        st.ranges.remove(&base);
        Ok(())
    }

    /// Registers a new chunk; answers its handle.
    pub(crate) fn add_chunk(&self, make: impl FnOnce(u64) -> Result<Chunk>) -> Result<Physical> {
        let mut st = self.state();
        // Handles look like the addresses of CANN's (heap pointers): never 0, 16-aligned.
        st.next_handle += 1;
        let handle = 0x1000_0000 + (st.next_handle << 4);
        let chunk = make(handle)?;
        let size = chunk.size;
        st.handles.insert(handle, Handle { chunk: Arc::new(chunk), refs: 1 });
        Ok(Physical { handle, size })
    }

    /// Drops one reference of `handle` (of `device`); the chunk goes with the last one
    /// and the last mapping.
    pub(crate) fn release_chunk(&self, handle: u64, device: u32, op: &'static str) -> Result<()> {
        let mut st = self.state();
        match st.handles.get_mut(&handle) {
            Some(h) if h.chunk.device == device => {
                h.refs -= 1;
                if h.refs == 0 {
                    st.handles.remove(&handle);
                }
                Ok(())
            }
            Some(h) => Err(param(op, format!("chunk {handle:#x} belongs to device {}", h.chunk.device))),
            None => Err(param(op, format!("{handle:#x} is not a live physical chunk (never created, or freed)"))),
        }
    }

    /// Maps `size` bytes of chunk `handle` from `offset` at `at`.
    pub(crate) fn map(
        &self,
        (at, size, offset): (u64, u64, u64),
        handle: u64,
        (device, gran, profile): (u32, u64, Profile),
        op: &'static str,
    ) -> Result<Mapping> {
        let mut st = self.state();
        let chunk = match st.handles.get(&handle) {
            Some(h) if h.chunk.device == device => Arc::clone(&h.chunk),
            Some(h) => return Err(param(op, format!("chunk {handle:#x} belongs to device {}", h.chunk.device))),
            None => {
                return Err(param(op, format!("{handle:#x} is not a live physical chunk (never created, or freed)")));
            }
        };
        if offset != 0 {
            return Err(param(op, format!("offset {offset}: the runtimes map chunks from offset 0 only")));
        }
        if size > chunk.size {
            return Err(drv(
                op,
                format!("{size} bytes from offset {offset} run past the chunk's {} bytes", chunk.size),
            ));
        }
        if at % gran != 0 || size % gran != 0 {
            return Err(drv(
                op,
                format!("address {at:#x} and size {size} must be multiples of the granularity {gran}"),
            ));
        }
        let Some((base, r)) = st.range_at_mut(at) else {
            return Err(drv(op, format!("{at:#x} lies in no reserved range")));
        };
        if at + size > r.end(base) {
            return Err(drv(op, format!("[{at:#x}, +{size}) runs past the end of the range reserved at {base:#x}")));
        }
        if r.overlaps_map(at, size) {
            return Err(drv(op, format!("[{at:#x}, +{size}) overlaps a mapping")));
        }
        let access = if profile.maps_with_access() { Access::ReadWrite } else { Access::None };
        range::map_chunk(&r.host, at, size, &chunk, offset, access)
            .map_err(|e| Error::new(ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION, op, e.to_string()))?;
        r.maps.insert(at, Mapped { size, offset, chunk, access });
        Ok(Mapping { at: DevicePtr::from_addr(at), size })
    }

    /// Unmaps the whole mappings covering `[at, at + size)` back to back. Their chunks stay
    /// at the address until [`VmmSpace::finish_unmap`].
    pub(crate) fn unmap(&self, at: u64, size: u64, op: &'static str) -> Result<Unmapped> {
        let mut st = self.state();
        let Some((_, r)) = st.range_at(at) else {
            return Err(drv(op, format!("{at:#x} lies in no reserved range")));
        };
        let Some(starts) = r.whole_maps(at, size) else {
            return Err(drv(op, format!("[{at:#x}, +{size}) is not one or more whole mappings")));
        };
        let first = st.next_drain + 1;
        st.next_drain += starts.len() as u64;
        let (_, r) = st.range_at_mut(at).expect("found above");
        let mut out = Unmapped { ids: Vec::new(), keep: (Arc::clone(&r.host), Vec::new()) };
        for (id, a) in (first..).zip(starts) {
            let m = r.maps.remove(&a).expect("whole_maps names mappings");
            r.draining.push(Draining { id, at: a, size: m.size });
            out.ids.push(id);
            out.keep.1.push(m.chunk);
        }
        Ok(out)
    }

    /// The work queued before unmapping `u` has run: its address ranges become
    /// inaccessible reservation again, except where a mapping or another unmapping still
    /// draining lies now.
    pub(crate) fn finish_unmap(&self, u: Unmapped) {
        let mut st = self.state();
        for id in &u.ids {
            let Some(r) = st.ranges.values_mut().find(|r| r.draining.iter().any(|d| d.id == *id)) else {
                continue; // Released meanwhile: the host range goes with `u`.
            };
            let i = r.draining.iter().position(|d| d.id == *id).expect("found above");
            let d = r.draining.swap_remove(i);
            let mut holes = vec![(d.at, d.at + d.size)];
            let busy =
                r.maps.iter().map(|(&a, m)| (a, a + m.size)).chain(r.draining.iter().map(|o| (o.at, o.at + o.size)));
            for (lo, hi) in busy {
                holes = holes.into_iter().flat_map(|h| cut(h, (lo, hi))).collect();
            }
            for (lo, hi) in holes {
                // A failure leaves the chunk's pages at the address: accessible, never
                // reachable through the emulator, which checks its bookkeeping first.
                let _ = range::restore(&r.host, lo, hi - lo);
            }
        }
        drop(st);
        drop(u);
    }

    /// Sets `access` over the whole mappings covering `[at, at + size)`.
    pub(crate) fn set_access(
        &self,
        at: u64,
        size: u64,
        access: Access,
        profile: Profile,
        op: &'static str,
    ) -> Result<()> {
        let mut st = self.state();
        let Some((_, r)) = st.range_at_mut(at) else {
            return Err(param(op, format!("{at:#x} lies in no reserved range")));
        };
        let Some(starts) = r.whole_maps(at, size) else {
            return Err(param(op, format!("[{at:#x}, +{size}) is not wholly mapped (whole mappings, back to back)")));
        };
        if profile.maps_with_access() {
            // CANN: the owner has read-write from the mapping on, and only read-write is
            // accepted; asking again is accepted for exactly the range of one mapping.
            if access != Access::ReadWrite {
                return Err(Error::new(
                    ErrorKind::NotSupported,
                    code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    op,
                    format!("access {access:?}: this runtime grants read-write only"),
                ));
            }
            if starts.len() != 1 {
                return Err(drv(
                    op,
                    format!("[{at:#x}, +{size}) already has access with the size of each of its mappings"),
                ));
            }
            return Ok(());
        }
        for a in starts {
            let m = r.maps.get_mut(&a).expect("whole_maps names mappings");
            range::protect(&r.host, a, m.size, access)
                .map_err(|e| Error::new(ErrorKind::Internal, code::ACL_ERROR_RT_INTERNAL_ERROR, op, e.to_string()))?;
            m.access = access;
        }
        Ok(())
    }

    /// The reserved range holding `addr`.
    pub(crate) fn reserved_at(&self, addr: u64) -> Option<Reserved> {
        let st = self.state();
        st.range_at(addr).map(|(base, r)| Reserved { base: DevicePtr::from_addr(base), size: r.size })
    }

    /// The mapping holding `addr`, with its chunk and access.
    pub(crate) fn mapping_at(&self, addr: u64) -> Option<(Mapping, Physical, Access)> {
        let st = self.state();
        let (_, r) = st.range_at(addr)?;
        let (&a, m) = r.maps.range(..=addr).next_back()?;
        (addr < a + m.size).then(|| {
            let p = Physical { handle: m.chunk.handle, size: m.chunk.size };
            (Mapping { at: DevicePtr::from_addr(a), size: m.size }, p, m.access)
        })
    }

    /// The live chunk `handle`: its size and device.
    pub(crate) fn physical(&self, handle: u64) -> Option<(Physical, u32)> {
        let st = self.state();
        st.handles.get(&handle).map(|h| (Physical { handle, size: h.chunk.size }, h.chunk.device))
    }

    /// Adds a reference to the handle of the chunk mapped at `addr` (live again if it was
    /// released while mapped).
    pub(crate) fn retain_at(&self, addr: u64, op: &'static str) -> Result<Physical> {
        let mut st = self.state();
        let chunk = {
            let Some((_, r)) = st.range_at(addr) else {
                return Err(param(op, format!("{addr:#x} lies in no reserved range")));
            };
            let m = r.maps.range(..=addr).next_back().filter(|(a, m)| addr < **a + m.size).map(|(_, m)| m);
            let Some(m) = m else { return Err(param(op, format!("{addr:#x} is not mapped"))) };
            Arc::clone(&m.chunk)
        };
        let h = st.handles.entry(chunk.handle).or_insert_with(|| Handle { chunk: Arc::clone(&chunk), refs: 0 });
        h.refs = h
            .refs
            .checked_add(1)
            .ok_or_else(|| param(op, format!("chunk {:#x} has too many references", chunk.handle)))?;
        Ok(Physical { handle: chunk.handle, size: chunk.size })
    }

    /// Resolves `[addr, addr + len)` to the chunks behind it, checking that it is mapped
    /// with the access the work needs (`write`). `None`: no reserved range holds `addr`.
    pub(crate) fn resolve(
        &self,
        addr: u64,
        len: u64,
        write: bool,
        checker: bool,
        op: &'static str,
    ) -> Option<Result<Vec<Part>>> {
        // A checker report with the checker on, else a plain invalid pointer.
        let report = |msg: String| {
            if checker { Error::stream_order_violation(op, msg) } else { Error::invalid_pointer(op, msg) }
        };
        let st = self.state();
        let (base, r) = st.range_at(addr)?;
        let what = if write { "writes" } else { "reads" };
        let Some(end) = addr.checked_add(len).filter(|&e| e <= r.end(base)) else {
            return Some(Err(Error::invalid_pointer(
                op,
                format!(
                    "{op} {what} [{addr:#x}, +{len}), which runs past the range reserved at {base:#x} ({} bytes)",
                    r.size
                ),
            )));
        };
        let mut parts = Vec::new();
        let mut next = addr;
        let first = r.maps.range(..=addr).next_back().map_or(addr, |(&a, _)| a);
        for (&a, m) in r.maps.range(first..end) {
            if a + m.size <= next {
                continue;
            }
            if a > next {
                break;
            }
            let denied = match m.access {
                Access::None => true,
                Access::Read => write,
                Access::ReadWrite => false,
            };
            if denied {
                return Some(Err(report(format!(
                    "{op} {what} [{addr:#x}, +{len}), but the mapping at {a:#x} ({} bytes) has access {:?}: \
                         set the access first",
                    m.size, m.access
                ))));
            }
            let hi = end.min(a + m.size);
            parts.push(Part { chunk: Arc::clone(&m.chunk), off: m.offset + (next - a), len: hi - next });
            next = hi;
            if next == end {
                break;
            }
        }
        if next < end {
            return Some(Err(report(format!(
                "{op} {what} [{addr:#x}, +{len}), but {next:#x} is reserved (the range at {base:#x}) and not \
                     mapped: map a physical chunk there first (or the work was queued after its unmapping)"
            ))));
        }
        Some(Ok(parts))
    }
}

/// `h` less `cut`, as up to two ranges.
fn cut(h: (u64, u64), c: (u64, u64)) -> Vec<(u64, u64)> {
    if c.1 <= h.0 || h.1 <= c.0 {
        return vec![h];
    }
    let mut out = Vec::new();
    if h.0 < c.0 {
        out.push((h.0, c.0));
    }
    if c.1 < h.1 {
        out.push((c.1, h.1));
    }
    out
}
