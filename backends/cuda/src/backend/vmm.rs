//! [`VirtualMemory`] for [`Cuda`]: reserved ranges, physical chunks and mappings through
//! `cuMemAddressReserve` … `cuMemSetAccess` (contract §14).
//!
//! An unknown or released allocation handle is undefined behaviour on the driver, so the
//! instance keeps the handles it created and has not released ([`Chunks`]) and passes
//! only those, answering any other with `InvalidParam` (`CUDA_ERROR_INVALID_VALUE`, the
//! code the driver documents for these calls).
//! Addresses are the driver's to check. A driver without the calls answers
//! `NotSupported` (801) naming the symbol.

use super::Cuda;
use crate::{result, sys};
use mempool_backend_kit::context::InstanceContext;
use mempool_hal::{Access, DevicePtr, Error, Granularity, Mapping, Physical, Reserved, Result, VirtualMemory};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The physical chunks an instance created and has not released: handle → size. The lock
/// is held across the driver call that uses or releases a handle, so a release on one
/// thread never overtakes a mapping of the same handle on another.
#[derive(Debug, Default)]
pub(super) struct Chunks(Mutex<HashMap<u64, u64>>);

impl Chunks {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, u64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `n` as a `size_t`.
fn size_t(n: u64, op: &'static str, what: &str) -> Result<usize> {
    usize::try_from(n)
        .map_err(|_| result::renumbered(Error::invalid_param(op, format!("{what} {n} does not fit a size_t"))))
}

/// A chunk this instance did not create, or released already: `InvalidParam`
/// (`CUDA_ERROR_INVALID_VALUE`, the code the driver documents for these calls).
fn unknown_chunk(op: &'static str, chunk: Physical) -> Error {
    result::renumbered(Error::invalid_param(
        op,
        format!("{:#x} is not a live allocation handle of this instance (never created, or released)", chunk.handle),
    ))
}

impl VirtualMemory for Cuda {
    /// `cuMemGetAllocationGranularity` of pinned memory on this device.
    fn granularity(&self, which: Granularity) -> Result<u64> {
        let option = match which {
            Granularity::Minimum => sys::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            Granularity::Recommended => sys::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
        };
        self.shared.enter()?;
        result::vmm::granularity(&self.shared.rt, self.shared.cu_device, option)
    }

    /// `cuMemAddressReserve` (flags 0); `hint` is the driver's `addr`, which it honours
    /// when it can.
    fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved> {
        const OP: &str = "cuMemAddressReserve";
        let len = size_t(size, OP, "size")?;
        let align = size_t(alignment, OP, "alignment")?;
        self.shared.enter()?;
        let p = result::vmm::reserve(&self.shared.rt, len, align, hint.map_or(0, DevicePtr::addr))?;
        Ok(Reserved { base: DevicePtr::from_addr(p), size })
    }

    /// `cuMemAddressFree` of the whole reservation.
    fn release_reserved(&self, range: Reserved) -> Result<()> {
        let len = size_t(range.size, "cuMemAddressFree", "size")?;
        self.shared.enter()?;
        result::vmm::free(&self.shared.rt, range.base.addr(), len)
    }

    /// `cuMemCreate` of pinned memory on this device (no shareable handle, flags 0).
    fn create_physical(&self, size: u64) -> Result<Physical> {
        let len = size_t(size, "cuMemCreate", "size")?;
        self.shared.enter()?;
        let mut chunks = self.shared.chunks.lock();
        let handle = result::vmm::create(&self.shared.rt, self.shared.cu_device, len)?;
        chunks.insert(handle, size);
        Ok(Physical { handle, size })
    }

    /// `cuMemRelease` of a chunk this instance created; any other handle is
    /// `InvalidParam` and never reaches the driver.
    fn release_physical(&self, chunk: Physical) -> Result<()> {
        const OP: &str = "cuMemRelease";
        self.shared.enter()?;
        let mut chunks = self.shared.chunks.lock();
        let Some(size) = chunks.remove(&chunk.handle) else {
            return Err(unknown_chunk(OP, chunk));
        };
        let released = result::vmm::release(&self.shared.rt, chunk.handle);
        if released.is_err() {
            // The driver kept it: it is still ours to release.
            chunks.insert(chunk.handle, size);
        }
        released
    }

    /// `cuMemMap` (flags 0) of a chunk this instance created.
    fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping> {
        const OP: &str = "cuMemMap";
        let len = size_t(size, OP, "size")?;
        let off = size_t(offset, OP, "offset")?;
        self.shared.enter()?;
        let chunks = self.shared.chunks.lock();
        if !chunks.contains_key(&chunk.handle) {
            return Err(unknown_chunk(OP, chunk));
        }
        result::vmm::map(&self.shared.rt, at.addr(), len, off, chunk.handle)?;
        Ok(Mapping { at, size })
    }

    /// `cuMemUnmap` of the whole mapping.
    fn unmap(&self, mapping: Mapping) -> Result<()> {
        let len = size_t(mapping.size, "cuMemUnmap", "size")?;
        self.shared.enter()?;
        result::vmm::unmap(&self.shared.rt, mapping.at.addr(), len)
    }

    /// `cuMemSetAccess` with one descriptor for this device.
    fn set_access(&self, at: DevicePtr, size: u64, access: Access) -> Result<()> {
        let len = size_t(size, "cuMemSetAccess", "size")?;
        let flags = match access {
            Access::None => sys::CU_MEM_ACCESS_FLAGS_PROT_NONE,
            Access::Read => sys::CU_MEM_ACCESS_FLAGS_PROT_READ,
            Access::ReadWrite => sys::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        self.shared.enter()?;
        result::vmm::set_access(&self.shared.rt, at.addr(), len, self.shared.cu_device, flags)
    }
}
