//! Virtual memory and host registration: the extension traits a backend implements when
//! its runtime has the calls.
//!
//! [`VirtualMemory`] is CANN's `aclrtReserveMemAddress` … `aclrtMemSetAccess` family and
//! CUDA's `cuMemAddressReserve` … `cuMemSetAccess`: an address range reserved with nothing
//! behind it, physical chunks created on their own, and chunks mapped into the range at
//! offsets. Frameworks grow memory this way without fragmentation (an *expandable
//! segment*: one reserved range, physical chunks mapped at its end as it grows).
//! [`HostRegistration`] is `aclrtHostRegister` / `cuMemHostRegister`: a host range the
//! program allocated itself, made reachable by device work.
//!
//! The rules (argument checks, codes, what an unmapping does to work still queued) are in
//! [`contract::vmm`](crate::contract::vmm) and
//! [`contract::host_register`](crate::contract::host_register).

use crate::{Device, DevicePtr, Result};

/// Which allocation granularity [`VirtualMemory::granularity`] answers (the runtimes'
/// granularity options: minimum 0, recommended 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// The smallest size and alignment a physical chunk and a mapping may have.
    Minimum,
    /// The size the runtime recommends for performance.
    Recommended,
}

/// A reserved virtual address range: what [`VirtualMemory::reserve`] hands out and
/// [`VirtualMemory::release_reserved`] takes back. Nothing is behind it until chunks are
/// mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reserved {
    /// The first address.
    pub base: DevicePtr,
    /// Its length in bytes.
    pub size: u64,
}

/// A physical chunk of device memory: an opaque handle (the runtime's
/// `aclrtDrvMemHandle` or `CUmemGenericAllocationHandle`), usable only through the device
/// that created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Physical {
    /// The runtime's handle, as a number.
    pub handle: u64,
    /// The chunk's size in bytes.
    pub size: u64,
}

/// A chunk mapped into a reserved range: what [`VirtualMemory::map`] hands out and
/// [`VirtualMemory::unmap`] takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// Where the chunk is mapped.
    pub at: DevicePtr,
    /// How many bytes are mapped.
    pub size: u64,
}

/// What device work may do with a mapped range ([`VirtualMemory::set_access`]); the
/// runtimes' access flags (none 0, read 1, read-write 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// No access: any use is a fault (the emulator's checker reports it).
    None,
    /// Reads only.
    Read,
    /// Reads and writes.
    ReadWrite,
}

/// Reserved address ranges, physical chunks, and mappings between them.
///
/// Sizes and offsets are multiples of [`granularity`](VirtualMemory::granularity)`(Minimum)`;
/// a request that is not is an invalid parameter. A range is usable by device work only
/// once a chunk is mapped there and access is set. Unmapping never pulls memory from under
/// work already queued on it: the chunk stays behind the range until that work has run.
pub trait VirtualMemory: Device {
    /// The allocation granularity of this device.
    ///
    /// # Errors
    ///
    /// A backend whose runtime cannot answer.
    fn granularity(&self, which: Granularity) -> Result<u64>;

    /// Reserves `size` bytes of address space, aligned to `alignment` (0: the
    /// granularity), at `hint` if it is free (`None` or a taken hint: anywhere).
    ///
    /// # Errors
    ///
    /// `size` 0 or not a multiple of the granularity, a bad alignment, or no address
    /// space left.
    fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved>;

    /// Gives a reserved range back. Its mappings must have been unmapped first.
    ///
    /// # Errors
    ///
    /// A range this device did not reserve, or one still mapped.
    fn release_reserved(&self, range: Reserved) -> Result<()>;

    /// Creates a physical chunk of `size` bytes on this device.
    ///
    /// # Errors
    ///
    /// `size` 0 or not a multiple of the granularity; out of device memory.
    fn create_physical(&self, size: u64) -> Result<Physical>;

    /// Frees a physical chunk. Mappings of it keep its memory until they are unmapped.
    ///
    /// # Errors
    ///
    /// A handle this device did not create, or one already freed.
    fn release_physical(&self, chunk: Physical) -> Result<()>;

    /// Maps `size` bytes of `chunk`, from `offset` in it, at `at`, which lies in a
    /// reserved range and is not mapped yet.
    ///
    /// # Errors
    ///
    /// An address outside any reserved range or already mapped, a size or offset beyond
    /// the chunk or not a multiple of the granularity, a stale handle.
    fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping>;

    /// Unmaps a mapping. Work already queued on the range still sees the chunk.
    ///
    /// # Errors
    ///
    /// Nothing mapped there.
    fn unmap(&self, mapping: Mapping) -> Result<()>;

    /// Sets what this device's work may do with the mapped range `[at, at + size)`.
    ///
    /// # Errors
    ///
    /// A range that is not wholly mapped; a size not a multiple of the granularity.
    fn set_access(&self, at: DevicePtr, size: u64, access: Access) -> Result<()>;
}

/// How a host range is registered ([`HostRegistration::register_host`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HostRegisterFlags {
    /// Device work may only read it (CUDA's `CU_MEMHOSTREGISTER_READ_ONLY`; on CANN the
    /// register type).
    pub read_only: bool,
}

/// Host memory the program allocated, made reachable by device work.
pub trait HostRegistration: Device {
    /// Registers `len` bytes at `ptr` and answers the device address through which device
    /// work reaches them (on the emulator and on unified-address runtimes, `ptr` itself).
    ///
    /// # Safety
    ///
    /// `[ptr, ptr + len)` must be host memory the caller owns, valid for reads and writes
    /// until it is unregistered and every copy queued on it has run.
    ///
    /// # Errors
    ///
    /// A null pointer or length 0; a range that overlaps one already registered.
    #[allow(unsafe_code)]
    unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr>;

    /// Unregisters the range registered at `ptr`.
    ///
    /// # Errors
    ///
    /// `ptr` is not the start of a registered range.
    fn unregister_host(&self, ptr: *mut u8) -> Result<()>;
}
