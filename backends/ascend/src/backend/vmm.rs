//! [`VirtualMemory`] for [`Ascend`]: reserved ranges, physical chunks and mappings
//! through `aclrtReserveMemAddress` … `aclrtMemSetAccess` (contract §14).
//!
//! CANN dereferences a physical handle, so a handle it did not hand out, or one freed
//! already, is undefined behaviour there: the instance keeps the handles it created and
//! has not freed ([`Chunks`]) and passes only those, answering any other with
//! `InvalidParam` (107000, as CANN answers a handle it does not accept). Addresses are the
//! runtime's to check. A runtime without the
//! calls (a CANN older than them) answers `NotSupported` (207000) naming the symbol.

use super::Ascend;
use crate::{result, sys};
use mempool_backend_kit::context::InstanceContext;
use mempool_hal::{Access, DevicePtr, Error, Granularity, Mapping, Physical, Reserved, Result, VirtualMemory};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The physical chunks an instance created and has not freed: handle → size. The lock is
/// held across the runtime call that uses or frees a handle, so a free on one thread
/// never overtakes a mapping of the same handle on another.
#[derive(Debug, Default)]
pub(super) struct Chunks(Mutex<HashMap<u64, u64>>);

impl Chunks {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, u64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `n` as a `size_t`.
fn size_t(n: u64, op: &'static str, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid_param(op, format!("{what} {n} does not fit a size_t")))
}

/// An address as the runtime takes it.
fn raw(p: DevicePtr) -> *mut c_void {
    p.addr() as usize as *mut c_void
}

/// A chunk this instance did not create, or freed already: `InvalidParam` (107000), what
/// CANN's driver answers for a handle whose fields it does not accept.
fn unknown_chunk(op: &'static str, chunk: Physical) -> Error {
    Error::invalid_param(
        op,
        format!("{:#x} is not a live physical memory handle of this instance (never created, or freed)", chunk.handle),
    )
}

impl VirtualMemory for Ascend {
    /// `aclrtMemGetAllocationGranularity` of device memory in 2 MiB pages (CANN answers
    /// 2 MiB for both options).
    fn granularity(&self, which: Granularity) -> Result<u64> {
        let option = match which {
            Granularity::Minimum => sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
            Granularity::Recommended => sys::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
        };
        self.shared.enter()?;
        result::vmm::granularity(&self.shared.rt, self.shared.device, option)
    }

    /// `aclrtReserveMemAddress`. CANN takes no alignment (it aligns every reservation to
    /// its 2 MiB granularity): an `alignment` that is a power of two dividing the
    /// granularity is met by that and passed as 0; any other is passed on, and the runtime
    /// refuses it (107000).
    fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved> {
        const OP: &str = "aclrtReserveMemAddress";
        let len = size_t(size, OP, "size")?;
        let mut align = size_t(alignment, OP, "alignment")?;
        if align != 0 && alignment.is_power_of_two() && self.granularity(Granularity::Minimum)? % alignment == 0 {
            align = 0;
        }
        self.shared.enter()?;
        let expect = hint.map_or(std::ptr::null_mut(), raw);
        let p = result::vmm::reserve(&self.shared.rt, len, align, expect)?;
        Ok(Reserved { base: DevicePtr::from_addr(p as u64), size })
    }

    /// `aclrtReleaseMemAddress` of `range.base` (CANN takes the start address only).
    fn release_reserved(&self, range: Reserved) -> Result<()> {
        self.shared.enter()?;
        result::vmm::release(&self.shared.rt, raw(range.base))
    }

    /// `aclrtMallocPhysical` of pinned device memory in 2 MiB pages on this device.
    fn create_physical(&self, size: u64) -> Result<Physical> {
        let len = size_t(size, "aclrtMallocPhysical", "size")?;
        self.shared.enter()?;
        let mut chunks = self.shared.chunks.lock();
        let h = result::vmm::malloc_physical(&self.shared.rt, self.shared.device, len)?;
        let handle = h as usize as u64;
        chunks.insert(handle, size);
        Ok(Physical { handle, size })
    }

    /// `aclrtFreePhysical` of a chunk this instance created; any other handle is
    /// `InvalidParam` (107000) and never reaches the runtime.
    fn release_physical(&self, chunk: Physical) -> Result<()> {
        const OP: &str = "aclrtFreePhysical";
        self.shared.enter()?;
        let mut chunks = self.shared.chunks.lock();
        let Some(size) = chunks.remove(&chunk.handle) else {
            return Err(unknown_chunk(OP, chunk));
        };
        let freed = result::vmm::free_physical(&self.shared.rt, chunk.handle as usize as sys::aclrtDrvMemHandle);
        if freed.is_err() {
            // The runtime kept it: it is still ours to free.
            chunks.insert(chunk.handle, size);
        }
        freed
    }

    /// `aclrtMapMem` (flags 0) of a chunk this instance created.
    fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping> {
        const OP: &str = "aclrtMapMem";
        let len = size_t(size, OP, "size")?;
        let off = size_t(offset, OP, "offset")?;
        self.shared.enter()?;
        let chunks = self.shared.chunks.lock();
        if !chunks.contains_key(&chunk.handle) {
            return Err(unknown_chunk(OP, chunk));
        }
        let h = chunk.handle as usize as sys::aclrtDrvMemHandle;
        result::vmm::map(&self.shared.rt, raw(at), len, off, h)?;
        Ok(Mapping { at, size })
    }

    /// `aclrtUnmapMem` of `mapping.at` (CANN takes the start address only).
    fn unmap(&self, mapping: Mapping) -> Result<()> {
        self.shared.enter()?;
        result::vmm::unmap(&self.shared.rt, raw(mapping.at))
    }

    /// `aclrtMemSetAccess` with one descriptor for this device. CANN on Atlas A2/A3
    /// grants only read-write; none and read-only answer `NotSupported` (207000) there.
    fn set_access(&self, at: DevicePtr, size: u64, access: Access) -> Result<()> {
        let len = size_t(size, "aclrtMemSetAccess", "size")?;
        let flags = match access {
            Access::None => sys::ACL_RT_MEM_ACCESS_FLAGS_NONE,
            Access::Read => sys::ACL_RT_MEM_ACCESS_FLAGS_READ,
            Access::ReadWrite => sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
        };
        self.shared.enter()?;
        result::vmm::set_access(&self.shared.rt, raw(at), len, self.shared.device, flags)
    }
}
