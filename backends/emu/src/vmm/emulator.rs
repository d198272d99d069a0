//! [`VirtualMemory`] for [`Emulator`], and the lookups the drop-in libraries need for
//! calls that name only an address (`aclrtReleaseMemAddress`, `aclrtUnmapMem`,
//! `cuMemGetAccess`, `cuMemRetainAllocationHandle`) or only a handle
//! (`cuMemGetAllocationPropertiesFromHandle`).

use super::chunk::Chunk;
use super::space::{acl_param, drv, param};
use crate::device::Emulator;
use mempool_hal::{Access, DevicePtr, Granularity, Mapping, Physical, Reserved, Result, VirtualMemory};
use std::sync::Arc;

impl Emulator {
    /// The reserved range holding `ptr` (any address inside it), or `None`.
    pub fn reserved_at(&self, ptr: DevicePtr) -> Option<Reserved> {
        self.platform.registry.vmm.reserved_at(ptr.addr())
    }

    /// The mapping holding `ptr` (any address inside it) and the chunk mapped there, or
    /// `None` where nothing is mapped.
    pub fn mapping_at(&self, ptr: DevicePtr) -> Option<(Mapping, Physical)> {
        self.platform.registry.vmm.mapping_at(ptr.addr()).map(|(m, p, _)| (m, p))
    }

    /// The access of the mapping holding `ptr`, or `None` where nothing is mapped.
    pub fn access_at(&self, ptr: DevicePtr) -> Option<Access> {
        self.platform.registry.vmm.mapping_at(ptr.addr()).map(|(_, _, a)| a)
    }

    /// The live physical chunk `handle` (not yet released) and the device whose memory it
    /// is, or `None`.
    pub fn physical(&self, handle: u64) -> Option<(Physical, u32)> {
        self.platform.registry.vmm.physical(handle)
    }

    /// Adds a reference to the handle of the chunk mapped at `ptr` (any address inside
    /// the mapping), as `cuMemRetainAllocationHandle` does: the same handle the chunk was
    /// created with, live again if it was released while mapped; each reference needs its
    /// own [`VirtualMemory::release_physical`].
    ///
    /// # Errors
    ///
    /// `ptr` is not mapped: `InvalidParam` (107000).
    pub fn retain_physical_at(&self, ptr: DevicePtr) -> Result<Physical> {
        self.platform.registry.vmm.retain_at(ptr.addr(), "retain_physical")
    }
}

impl VirtualMemory for Emulator {
    /// The pool granularity of the platform ([`Config::granularity`](crate::Config::granularity),
    /// 2 MiB by default, as on both runtimes) for both options.
    fn granularity(&self, _which: Granularity) -> Result<u64> {
        Ok(self.platform.config.granularity)
    }

    fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved> {
        const OP: &str = "reserve";
        let c = &self.platform.config;
        if size == 0 {
            return Err(acl_param(OP, "size 0"));
        }
        if size % c.granularity != 0 {
            return Err(param(OP, format!("size {size} is not a multiple of the granularity {}", c.granularity)));
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            return Err(param(OP, format!("alignment {alignment} is not a power of two")));
        }
        let align = alignment.max(c.granularity);
        let hint = hint.filter(|h| !h.is_null()).map(DevicePtr::addr);
        if let Some(h) = hint {
            // CANN's driver refuses an address it cannot use; CUDA takes it as a hint.
            if c.profile.maps_with_access() && h % c.granularity != 0 {
                return Err(param(OP, format!("address {h:#x} is not aligned to the granularity {}", c.granularity)));
            }
        }
        self.platform.registry.vmm.reserve(size, align, hint, OP)
    }

    fn release_reserved(&self, range: Reserved) -> Result<()> {
        const OP: &str = "release_reserved";
        if range.base.is_null() {
            return Err(acl_param(OP, "null address"));
        }
        self.platform.registry.vmm.release(range.base.addr(), range.size, OP)
    }

    fn create_physical(&self, size: u64) -> Result<Physical> {
        const OP: &str = "create_physical";
        let gran = self.platform.config.granularity;
        if size == 0 {
            return Err(acl_param(OP, "size 0"));
        }
        if size % gran != 0 {
            return Err(drv(OP, format!("size {size} is not a multiple of the granularity {gran}")));
        }
        if self.platform.faults.take_commit_failure() {
            return Err(mempool_hal::Error::new(
                mempool_hal::ErrorKind::OutOfMemory,
                mempool_hal::code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                OP,
                format!("the host could not commit the {size} bytes of the chunk (injected failure)"),
            ));
        }
        let memory = &self.platform.memory[self.device as usize];
        self.platform.registry.vmm.add_chunk(|handle| Chunk::create(handle, self.device, size, memory))
    }

    fn release_physical(&self, chunk: Physical) -> Result<()> {
        const OP: &str = "release_physical";
        if chunk.handle == 0 {
            return Err(acl_param(OP, "null handle"));
        }
        self.platform.registry.vmm.release_chunk(chunk.handle, self.device, OP)
    }

    fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping> {
        const OP: &str = "map";
        if at.is_null() || chunk.handle == 0 || size == 0 {
            return Err(acl_param(OP, "null address or handle, or size 0"));
        }
        let c = &self.platform.config;
        self.platform.registry.vmm.map(
            (at.addr(), size, offset),
            chunk.handle,
            (self.device, c.granularity, c.profile),
            OP,
        )
    }

    /// Returns at once; the work queued before it on any stream still reaches the chunk
    /// (module docs), and work queued after it that touches the range is refused.
    fn unmap(&self, mapping: Mapping) -> Result<()> {
        const OP: &str = "unmap";
        if mapping.at.is_null() {
            return Err(acl_param(OP, "null address"));
        }
        let vmm = Arc::clone(&self.platform.registry.vmm);
        let unmapped = vmm.unmap(mapping.at.addr(), mapping.size, OP)?;
        self.after_queued_work(move || vmm.finish_unmap(unmapped));
        Ok(())
    }

    fn set_access(&self, at: DevicePtr, size: u64, access: Access) -> Result<()> {
        const OP: &str = "set_access";
        let c = &self.platform.config;
        if at.is_null() {
            return Err(param(OP, "null address"));
        }
        if size == 0 || size % c.granularity != 0 {
            return Err(param(
                OP,
                format!("size {size} is not a positive multiple of the granularity {}", c.granularity),
            ));
        }
        self.platform.registry.vmm.set_access(at.addr(), size, access, c.profile, OP)
    }
}
