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
/// once a chunk is mapped there with the access the work needs: on CANN (and the emulator's
/// Ascend profiles) a fresh mapping is read-write for its device at once, on CUDA (and the
/// `cuda` profile) it has no access until [`set_access`](VirtualMemory::set_access).
/// Unmapping never pulls memory from under work already queued on it: the chunk stays
/// behind the range until that work has run.
///
/// # Errors and their codes
///
/// Every mistake below is [`InvalidParam`](crate::ErrorKind::InvalidParam) unless said
/// otherwise. Codes are given as on [`Device`]: "ACL" for the emulator and the Ascend backend
/// (CANN checks in layers, each with its code: 100000 for the ACL layer's checks, 107000 for
/// the runtime's, 507899 for what the driver's kernel module refuses), "CUDA" for the CUDA
/// backend, where the driver answers nearly every mistake with `CUDA_ERROR_INVALID_VALUE` (1).
/// Call by call, with the checks in order, they are in [contract §14](crate::contract::vmm). A
/// runtime without the calls answers [`NotSupported`](crate::ErrorKind::NotSupported) naming
/// the symbol (ACL 207000; CUDA `CUDA_ERROR_NOT_SUPPORTED`, 801).
pub trait VirtualMemory: Device {
    /// The allocation granularity of this device.
    ///
    /// # Errors
    ///
    /// The runtime's or the driver's refusal only, with its own code.
    fn granularity(&self, which: Granularity) -> Result<u64>;

    /// Reserves `size` bytes of address space, aligned to `alignment` (0: the
    /// granularity), at `hint` if it is free (`None` or a taken hint: anywhere).
    ///
    /// # Errors
    ///
    /// `size` 0 (ACL 100000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1); `size` not a multiple of the
    /// granularity, an alignment that is not a power of two, and under Ascend's rules a hint
    /// not aligned to the granularity (CUDA takes any hint as a hint only): ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1. No address space left:
    /// [`OutOfMemory`](crate::ErrorKind::OutOfMemory) (ACL 207001; CUDA
    /// `CUDA_ERROR_OUT_OF_MEMORY`, 2).
    fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved>;

    /// Gives a reserved range back. Its mappings must have been unmapped first.
    ///
    /// # Errors
    ///
    /// A range that is not one reservation (CANN takes its start only), or one still
    /// mapped: ACL 107000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1.
    fn release_reserved(&self, range: Reserved) -> Result<()>;

    /// Creates a physical chunk of `size` bytes on this device.
    ///
    /// # Errors
    ///
    /// `size` 0 (ACL 100000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1); `size` not a multiple of the
    /// granularity (ACL 507899; CUDA `CUDA_ERROR_INVALID_VALUE`, 1). Beyond the device's memory
    /// (on the emulator, or the host's): [`OutOfMemory`](crate::ErrorKind::OutOfMemory) (ACL
    /// 207001; CUDA `CUDA_ERROR_OUT_OF_MEMORY`, 2).
    fn create_physical(&self, size: u64) -> Result<Physical>;

    /// Frees a physical chunk. Mappings of it keep its memory until they are unmapped.
    ///
    /// # Errors
    ///
    /// A handle this device did not create, or one already freed: ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1. The Ascend and CUDA backends answer it themselves,
    /// without a runtime call: CANN and the CUDA driver would read freed memory.
    fn release_physical(&self, chunk: Physical) -> Result<()>;

    /// Maps `size` bytes of `chunk`, from `offset` in it, at `at`, which lies in a
    /// reserved range and is not mapped yet. Both runtimes refuse an offset other than 0.
    ///
    /// # Errors
    ///
    /// A null address or size 0 (ACL 100000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1); a stale
    /// handle or an offset other than 0 (ACL 107000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1); an
    /// address outside any reserved range, past its end, misaligned or already mapped, a size
    /// past the chunk or not a multiple of the granularity (ACL 507899; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1).
    fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping>;

    /// Unmaps a mapping. Work already queued on the range still sees the chunk.
    ///
    /// # Errors
    ///
    /// Not one or more whole mappings back to back (CANN takes the start address only: no
    /// mapping starts there): ACL 507899; CUDA `CUDA_ERROR_INVALID_VALUE`, 1.
    fn unmap(&self, mapping: Mapping) -> Result<()>;

    /// Sets what this device's work may do with the mapped range `[at, at + size)`.
    ///
    /// # Errors
    ///
    /// A range that is not wholly mapped, a size 0 or not a multiple of the granularity: ACL
    /// 107000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1. Under Ascend's rules (the emulator's Ascend
    /// profiles, the Ascend backend): [`Access::None`] or [`Access::Read`] is
    /// [`NotSupported`](crate::ErrorKind::NotSupported) (ACL 207000: CANN grants only
    /// read-write on Atlas A2/A3), and read-write over more than one mapping is ACL 507899. The
    /// CUDA backend and the `cuda` profile take all three accesses.
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
    /// - A null pointer or length 0: [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL
    ///   100000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1).
    /// - A range that wraps the address space or lies in device memory: `InvalidParam` (ACL
    ///   107000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1).
    /// - A range that overlaps one already registered, or the runtime's own page-locked
    ///   memory: `InvalidParam` (ACL 507910, `ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED`;
    ///   CUDA `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`, 712).
    /// - A runtime without the calls: [`NotSupported`](crate::ErrorKind::NotSupported)
    ///   naming the symbol.
    ///
    /// The Ascend and CUDA backends pass the runtime's codes on; the flags and context
    /// checks of each runtime are in [contract §15](crate::contract::host_register).
    #[allow(unsafe_code)]
    unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr>;

    /// Unregisters the range registered at `ptr`.
    ///
    /// # Errors
    ///
    /// `ptr` is not the start of a registered range (never registered, unregistered
    /// already): [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 507911,
    /// `ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED`; CUDA `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`,
    /// 713). CUDA answers an interior pointer with `CUDA_ERROR_INVALID_VALUE` (1):
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) on the CUDA backend.
    fn unregister_host(&self, ptr: *mut u8) -> Result<()>;
}
