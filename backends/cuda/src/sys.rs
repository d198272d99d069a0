//! Hand-written C declarations of the CUDA driver API calls this backend uses, with
//! compile-time layout checks. No CUDA toolkit, header or library is needed to build.
//!
//! Every declaration here is written from the driver's documented facts: the exported
//! symbol names (the `_v2` names where the driver exports a second version), the numbers
//! of the enumerations and error codes, and the layout of the one structure passed by
//! pointer, [`CUmemPoolProps`]. Names follow the C API, so they are not Rust-style.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `CUresult`: 0 is success, anything else an error code.
pub type CUresult = c_int;
/// `CUdevice`: a device ordinal, as `cuDeviceGet` hands it out.
pub type CUdevice = c_int;
/// `CUdeviceptr`: a device address (64 bits on every 64-bit platform).
pub type CUdeviceptr = u64;
/// `CUdevice_attribute`: the attribute numbers of `cuDeviceGetAttribute`.
pub type CUdevice_attribute = c_int;
/// `CUmemPool_attribute`: the attribute numbers of `cuMemPoolGetAttribute` and
/// `cuMemPoolSetAttribute`, 1-8, the same ids as [`mempool_hal::AttrId`].
pub type CUmemPool_attribute = c_int;
/// The host function type of `cuLaunchHostFunc`.
pub type CUhostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

macro_rules! opaque {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {$(
        $(#[doc = $doc])*
        ///
        /// Opaque: only pointers to it exist, and only the driver reads them.
        #[repr(C)]
        #[derive(Debug)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque! {
    /// The driver's context object.
    CUctx_st;
    /// The driver's stream object.
    CUstream_st;
    /// The driver's event object.
    CUevent_st;
    /// The driver's memory pool object.
    CUmemPoolHandle_st;
}

/// `CUcontext`.
pub type CUcontext = *mut CUctx_st;
/// `CUstream`.
pub type CUstream = *mut CUstream_st;
/// `CUevent`.
pub type CUevent = *mut CUevent_st;
/// `CUmemoryPool`.
pub type CUmemoryPool = *mut CUmemPoolHandle_st;

/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: CUresult = 0;
/// `CUDA_ERROR_INVALID_VALUE`: a parameter out of range (a bad pointer, size or property).
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
/// `CUDA_ERROR_OUT_OF_MEMORY`: device (or page-locked host) memory exhausted, or a pool at
/// its maximum size.
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
/// `CUDA_ERROR_NOT_INITIALIZED`: `cuInit` was not called, or failed.
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
/// `CUDA_ERROR_DEINITIALIZED`: the driver is shutting down.
pub const CUDA_ERROR_DEINITIALIZED: CUresult = 4;
/// `CUDA_ERROR_STUB_LIBRARY`: the library is the toolkit's link stub, not a driver.
pub const CUDA_ERROR_STUB_LIBRARY: CUresult = 34;
/// `CUDA_ERROR_NO_DEVICE`: no CUDA device is present (also the backend's code for "no
/// driver library found").
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
/// `CUDA_ERROR_INVALID_DEVICE`: a device ordinal that does not exist.
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
/// `CUDA_ERROR_INVALID_CONTEXT`: no context, or a destroyed one, is current.
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
/// `CUDA_ERROR_NOT_MAPPED`: an address range that is not mapped.
pub const CUDA_ERROR_NOT_MAPPED: CUresult = 211;
/// `CUDA_ERROR_INVALID_HANDLE`: a destroyed or foreign stream, event or pool.
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
/// `CUDA_ERROR_NOT_FOUND`: a named object (a symbol, say) does not exist.
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
/// `CUDA_ERROR_NOT_READY`: the answer of `cuStreamQuery` and `cuEventQuery` while work is
/// pending.
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
/// `CUDA_ERROR_ILLEGAL_ADDRESS`: work on the device touched an address it may not.
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`: a host range that overlaps one registered
/// already (or page-locked memory from `cuMemAllocHost`).
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
/// `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`: an unregister of a pointer no registration
/// knows.
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
/// `CUDA_ERROR_HARDWARE_STACK_ERROR`: work on the device corrupted its stack.
pub const CUDA_ERROR_HARDWARE_STACK_ERROR: CUresult = 714;
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION`: work on the device ran an illegal instruction.
pub const CUDA_ERROR_ILLEGAL_INSTRUCTION: CUresult = 715;
/// `CUDA_ERROR_MISALIGNED_ADDRESS`: work on the device used a misaligned address.
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
/// `CUDA_ERROR_INVALID_ADDRESS_SPACE`: work on the device used the wrong address space.
pub const CUDA_ERROR_INVALID_ADDRESS_SPACE: CUresult = 717;
/// `CUDA_ERROR_INVALID_PC`: work on the device jumped to an invalid address.
pub const CUDA_ERROR_INVALID_PC: CUresult = 718;
/// `CUDA_ERROR_LAUNCH_FAILED`: work on the device failed.
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
/// `CUDA_ERROR_NOT_PERMITTED`: the operation is not permitted (a fabric handle without
/// access to its channel, say).
pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
/// `CUDA_ERROR_NOT_SUPPORTED`: the device or driver lacks the feature.
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
/// `CUDA_ERROR_UNKNOWN`.
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// The name of a `CUresult` this crate knows, for messages when the driver cannot name it
/// (`cuGetErrorName` missing, or the failure came before a driver was loaded).
pub fn error_name(rc: CUresult) -> Option<&'static str> {
    Some(match rc {
        CUDA_SUCCESS => "CUDA_SUCCESS",
        CUDA_ERROR_INVALID_VALUE => "CUDA_ERROR_INVALID_VALUE",
        CUDA_ERROR_OUT_OF_MEMORY => "CUDA_ERROR_OUT_OF_MEMORY",
        CUDA_ERROR_NOT_INITIALIZED => "CUDA_ERROR_NOT_INITIALIZED",
        CUDA_ERROR_DEINITIALIZED => "CUDA_ERROR_DEINITIALIZED",
        CUDA_ERROR_STUB_LIBRARY => "CUDA_ERROR_STUB_LIBRARY",
        CUDA_ERROR_NO_DEVICE => "CUDA_ERROR_NO_DEVICE",
        CUDA_ERROR_INVALID_DEVICE => "CUDA_ERROR_INVALID_DEVICE",
        CUDA_ERROR_INVALID_CONTEXT => "CUDA_ERROR_INVALID_CONTEXT",
        CUDA_ERROR_NOT_MAPPED => "CUDA_ERROR_NOT_MAPPED",
        CUDA_ERROR_INVALID_HANDLE => "CUDA_ERROR_INVALID_HANDLE",
        CUDA_ERROR_NOT_FOUND => "CUDA_ERROR_NOT_FOUND",
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED => "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
        CUDA_ERROR_NOT_READY => "CUDA_ERROR_NOT_READY",
        CUDA_ERROR_ILLEGAL_ADDRESS => "CUDA_ERROR_ILLEGAL_ADDRESS",
        CUDA_ERROR_HARDWARE_STACK_ERROR => "CUDA_ERROR_HARDWARE_STACK_ERROR",
        CUDA_ERROR_ILLEGAL_INSTRUCTION => "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        CUDA_ERROR_MISALIGNED_ADDRESS => "CUDA_ERROR_MISALIGNED_ADDRESS",
        CUDA_ERROR_INVALID_ADDRESS_SPACE => "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        CUDA_ERROR_INVALID_PC => "CUDA_ERROR_INVALID_PC",
        CUDA_ERROR_LAUNCH_FAILED => "CUDA_ERROR_LAUNCH_FAILED",
        CUDA_ERROR_NOT_PERMITTED => "CUDA_ERROR_NOT_PERMITTED",
        CUDA_ERROR_NOT_SUPPORTED => "CUDA_ERROR_NOT_SUPPORTED",
        CUDA_ERROR_UNKNOWN => "CUDA_ERROR_UNKNOWN",
        _ => return None,
    })
}

/// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`: 1 when the device supports
/// `cuMemAllocAsync` and the `cuMemPool*` calls.
pub const CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: CUdevice_attribute = 115;
/// `CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES`: the bit mask of the shareable
/// handle types a pool of the device may be created with.
pub const CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: CUdevice_attribute = 119;

/// `CU_STREAM_DEFAULT`: a stream that synchronizes with the legacy NULL stream.
pub const CU_STREAM_DEFAULT: c_uint = 0;
/// `CU_STREAM_NON_BLOCKING`: a stream that does not synchronize with the legacy NULL
/// stream (the backend's streams).
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;

/// `CU_STREAM_LEGACY` (`((CUstream)0x1)`): the current context's legacy default stream,
/// as the NULL stream is.
pub const CU_STREAM_LEGACY: CUstream = std::ptr::without_provenance_mut(0x1);
/// `CU_STREAM_PER_THREAD` (`((CUstream)0x2)`): the calling thread's per-thread default
/// stream in the current context.
pub const CU_STREAM_PER_THREAD: CUstream = std::ptr::without_provenance_mut(0x2);

/// `CU_EVENT_DEFAULT`: an event that records timing (the backend's events).
pub const CU_EVENT_DEFAULT: c_uint = 0;
/// `CU_EVENT_BLOCKING_SYNC`: `cuEventSynchronize` blocks the thread instead of spinning.
pub const CU_EVENT_BLOCKING_SYNC: c_uint = 1;
/// `CU_EVENT_DISABLE_TIMING`: an event without timing (`cuEventElapsedTime` refuses it).
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;

/// `CU_MEM_ALLOCATION_TYPE_PINNED`: the only allocation type of a pool.
pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
/// `CU_MEM_HANDLE_TYPE_NONE`: a pool that cannot be shared with other processes.
pub const CU_MEM_HANDLE_TYPE_NONE: c_int = 0;
/// `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`: a pool shareable through a file
/// descriptor (a bit of [`CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES`] too).
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: c_int = 1;
/// `CU_MEM_LOCATION_TYPE_DEVICE`: memory on the device `CUmemLocation::id`.
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;

/// `CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES` (an `int` flag, on by default).
pub const CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: CUmemPool_attribute = 1;
/// `CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC` (an `int` flag, on by default).
pub const CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: CUmemPool_attribute = 2;
/// `CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES` (an `int` flag, on by default).
pub const CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: CUmemPool_attribute = 3;
/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD` (a `cuuint64_t`, bytes).
pub const CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: CUmemPool_attribute = 4;
/// `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT` (a `cuuint64_t`, read-only).
pub const CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: CUmemPool_attribute = 5;
/// `CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH` (a `cuuint64_t`; writing 0 resets it to the current
/// value).
pub const CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: CUmemPool_attribute = 6;
/// `CU_MEMPOOL_ATTR_USED_MEM_CURRENT` (a `cuuint64_t`, read-only).
pub const CU_MEMPOOL_ATTR_USED_MEM_CURRENT: CUmemPool_attribute = 7;
/// `CU_MEMPOOL_ATTR_USED_MEM_HIGH` (a `cuuint64_t`; writing 0 resets it to the current
/// value).
pub const CU_MEMPOOL_ATTR_USED_MEM_HIGH: CUmemPool_attribute = 8;

/// The driver's number of each portable attribute key: the one mapping from
/// [`mempool_hal::attr::AttrKey`] to `CUmemPool_attribute`, through the constants above. A
/// key added to the portable table does not compile here until it is mapped.
pub const fn mempool_attribute(key: mempool_hal::attr::AttrKey) -> CUmemPool_attribute {
    use mempool_hal::attr::AttrKey;
    match key {
        AttrKey::ReuseFollowEventDependencies => CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
        AttrKey::ReuseAllowOpportunistic => CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
        AttrKey::ReuseAllowInternalDependencies => CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        AttrKey::ReleaseThreshold => CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
        AttrKey::ReservedMemCurrent => CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
        AttrKey::ReservedMemHigh => CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
        AttrKey::UsedMemCurrent => CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        AttrKey::UsedMemHigh => CU_MEMPOOL_ATTR_USED_MEM_HIGH,
    }
}

/// The portable key of the driver's attribute number `attr`; `None` for one the portable
/// table does not have.
pub fn mempool_attribute_key(attr: CUmemPool_attribute) -> Option<mempool_hal::attr::AttrKey> {
    mempool_hal::attr::AttrKey::ALL.iter().copied().find(|&k| mempool_attribute(k) == attr)
}

// Checked at compile time: every portable key's id is the driver's number for it (the
// numbering is shared, so the portable id can travel through the C API unchanged).
const _: () = {
    let keys = mempool_hal::attr::AttrKey::ALL;
    let mut i = 0;
    while i < keys.len() {
        assert!(keys[i].id().0 as i64 == mempool_attribute(keys[i]) as i64, "an attribute id differs from CUDA's");
        i += 1;
    }
};

/// The symbol of the project's CPU libcuda that gives the calling thread's message of its
/// last failed call: `const char *mempool_cuda_shim_last_error(void)` ([`ShimLastError`]).
/// NVIDIA's driver has no such call (its API gives only a code); the backend adds the
/// message to its errors where the library has it.
pub const SHIM_LAST_ERROR: &str = "mempool_cuda_shim_last_error";

/// The type of [`SHIM_LAST_ERROR`]: the message (NUL-terminated, valid until the thread's
/// next call into the library) or NULL. The CPU libcuda's export is checked against it at
/// compile time.
pub type ShimLastError = unsafe extern "C" fn() -> *const c_char;

/// The first driver version (`cuDriverGetVersion`, 1000 × major + 10 × minor) that reads
/// [`CUmemPoolProps::maxSize`]: 12.2. Older drivers ignore the field (it was reserved
/// bytes), so the backend enforces the size itself there.
pub const VERSION_POOL_MAX_SIZE: c_int = 12_020;

/// `CUmemLocation`: `{ int type; int id }`, 8 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CUmemLocation {
    /// @0: the location type ([`CU_MEM_LOCATION_TYPE_DEVICE`]).
    pub type_: c_int,
    /// @4: the device ordinal.
    pub id: c_int,
}

/// `CUmemPoolProps`, the layout of CUDA 12.6 and later: 88 bytes, 8-aligned. Earlier
/// drivers read the same 88 bytes, with `maxSize` (12.2) and `usage` (12.6) still part of
/// the reserved bytes, which must then be zero.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CUmemPoolProps {
    /// @0: the allocation type ([`CU_MEM_ALLOCATION_TYPE_PINNED`]).
    pub allocType: c_int,
    /// @4: the shareable handle types, a bit mask ([`CU_MEM_HANDLE_TYPE_NONE`],
    /// [`CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`]).
    pub handleTypes: c_int,
    /// @8: where the memory lives.
    pub location: CUmemLocation,
    /// @16: Windows security attributes for a Win32 handle type; null here.
    pub win32SecurityAttributes: *mut c_void,
    /// @24: the pool's maximum size in bytes, 0 for no limit (read from CUDA 12.2).
    pub maxSize: usize,
    /// @32: usage flags (read from CUDA 12.6); 0 here.
    pub usage: u16,
    /// @34: must be zero.
    pub reserved: [u8; 54],
}

const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<CUmemLocation>() == 8);
    assert!(offset_of!(CUmemLocation, type_) == 0);
    assert!(offset_of!(CUmemLocation, id) == 4);
    assert!(size_of::<CUmemPoolProps>() == 88);
    assert!(align_of::<CUmemPoolProps>() == 8);
    assert!(offset_of!(CUmemPoolProps, allocType) == 0);
    assert!(offset_of!(CUmemPoolProps, handleTypes) == 4);
    assert!(offset_of!(CUmemPoolProps, location) == 8);
    assert!(offset_of!(CUmemPoolProps, win32SecurityAttributes) == 16);
    assert!(offset_of!(CUmemPoolProps, maxSize) == 24);
    assert!(offset_of!(CUmemPoolProps, usage) == 32);
    assert!(offset_of!(CUmemPoolProps, reserved) == 34);
    assert!(size_of::<CUdeviceptr>() == 8);
    assert!(size_of::<CUhostFn>() == size_of::<*mut c_void>());
};

impl Default for CUmemPoolProps {
    /// Pinned memory on device 0, no shareable handle, no size limit.
    fn default() -> Self {
        CUmemPoolProps {
            allocType: CU_MEM_ALLOCATION_TYPE_PINNED,
            handleTypes: CU_MEM_HANDLE_TYPE_NONE,
            location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 },
            win32SecurityAttributes: std::ptr::null_mut(),
            maxSize: 0,
            usage: 0,
            reserved: [0; 54],
        }
    }
}

impl CUmemPoolProps {
    /// The driver's properties for the portable `props`, renumbered: the portable
    /// properties use ACL's numbers (pinned 0, POSIX handle 2), the driver its own (pinned
    /// 1, POSIX file descriptor 1). `maxSize` is `max_size` as given; the backend puts the
    /// rounded size there (or 0 on a driver that does not read it).
    ///
    /// `None` for a value the driver has no number for: an allocation type other than
    /// pinned, a handle type other than none or POSIX, a location other than a device, a
    /// device id beyond `int`, or a size beyond `size_t`. [`mempool_hal::PoolProps::validate`]
    /// refuses all of these first, with the contract's errors.
    pub fn from_portable(props: &mempool_hal::PoolProps) -> Option<CUmemPoolProps> {
        use mempool_hal::{AllocationType, HandleType, LocationType};
        let allocType = match props.alloc_type {
            AllocationType::PINNED => CU_MEM_ALLOCATION_TYPE_PINNED,
            _ => return None,
        };
        let handleTypes = match props.handle_type {
            HandleType::NONE => CU_MEM_HANDLE_TYPE_NONE,
            HandleType::POSIX => CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            _ => return None,
        };
        let type_ = match props.location.kind {
            LocationType::DEVICE => CU_MEM_LOCATION_TYPE_DEVICE,
            _ => return None,
        };
        Some(CUmemPoolProps {
            allocType,
            handleTypes,
            location: CUmemLocation { type_, id: c_int::try_from(props.location.id).ok()? },
            maxSize: usize::try_from(props.max_size).ok()?,
            ..CUmemPoolProps::default()
        })
    }
}

// ---------------------------------------------------------------- virtual memory (contract §14)

/// `CUmemGenericAllocationHandle`: a physical chunk of `cuMemCreate`, an opaque number.
pub type CUmemGenericAllocationHandle = u64;
/// `CUmemAllocationGranularity_flags`: which granularity `cuMemGetAllocationGranularity`
/// answers.
pub type CUmemAllocationGranularity_flags = c_int;
/// `CUmemAccess_flags`: what device work may do with a mapped range.
pub type CUmemAccess_flags = c_int;

/// `CU_MEM_LOCATION_TYPE_INVALID`.
pub const CU_MEM_LOCATION_TYPE_INVALID: c_int = 0;
/// `CU_MEM_LOCATION_TYPE_HOST`: host memory (the id is ignored).
pub const CU_MEM_LOCATION_TYPE_HOST: c_int = 2;
/// `CU_MEM_LOCATION_TYPE_HOST_NUMA`: host memory of the NUMA node `id`.
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA: c_int = 3;
/// `CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT`: host memory of the calling thread's node.
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: c_int = 4;
/// `CU_MEM_HANDLE_TYPE_FABRIC`: a handle shareable across nodes.
pub const CU_MEM_HANDLE_TYPE_FABRIC: c_int = 0x8;
/// `CU_MEM_ALLOC_GRANULARITY_MINIMUM`.
pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: CUmemAllocationGranularity_flags = 0;
/// `CU_MEM_ALLOC_GRANULARITY_RECOMMENDED`.
pub const CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: CUmemAllocationGranularity_flags = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_NONE`.
pub const CU_MEM_ACCESS_FLAGS_PROT_NONE: CUmemAccess_flags = 0;
/// `CU_MEM_ACCESS_FLAGS_PROT_READ`.
pub const CU_MEM_ACCESS_FLAGS_PROT_READ: CUmemAccess_flags = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: CUmemAccess_flags = 3;

/// The `allocFlags` of [`CUmemAllocationProp`]: 8 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CUmemAllocationProp_allocFlags {
    /// @0: `CUmemAllocationCompType` (none 0, generic 1), as a byte.
    pub compressionType: u8,
    /// @1: whether the chunk may be used for GPUDirect RDMA.
    pub gpuDirectRDMACapable: u8,
    /// @2: usage flags (`CU_MEM_CREATE_USAGE_TILE_POOL`, ...).
    pub usage: u16,
    /// @4: must be zero.
    pub reserved: [u8; 4],
}

/// `CUmemAllocationProp`: what `cuMemCreate` creates and `cuMemGetAllocationGranularity`
/// asks about. 32 bytes, 8-aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CUmemAllocationProp {
    /// @0: the allocation type ([`CU_MEM_ALLOCATION_TYPE_PINNED`]).
    pub type_: c_int,
    /// @4: the shareable handle types wanted, a bit mask.
    pub requestedHandleTypes: c_int,
    /// @8: where the chunk lives.
    pub location: CUmemLocation,
    /// @16: Windows only; null elsewhere.
    pub win32HandleMetaData: *mut c_void,
    /// @24: compression, RDMA and usage flags.
    pub allocFlags: CUmemAllocationProp_allocFlags,
}

/// `CUmemAccessDesc`: one entry of `cuMemSetAccess`. 12 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CUmemAccessDesc {
    /// @0: whose access.
    pub location: CUmemLocation,
    /// @8: the access ([`CU_MEM_ACCESS_FLAGS_PROT_READWRITE`], ...).
    pub flags: CUmemAccess_flags,
}

const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<CUmemAllocationProp_allocFlags>() == 8);
    assert!(offset_of!(CUmemAllocationProp_allocFlags, usage) == 2);
    assert!(offset_of!(CUmemAllocationProp_allocFlags, reserved) == 4);
    assert!(size_of::<CUmemAllocationProp>() == 32);
    assert!(align_of::<CUmemAllocationProp>() == 8);
    assert!(offset_of!(CUmemAllocationProp, requestedHandleTypes) == 4);
    assert!(offset_of!(CUmemAllocationProp, location) == 8);
    assert!(offset_of!(CUmemAllocationProp, win32HandleMetaData) == 16);
    assert!(offset_of!(CUmemAllocationProp, allocFlags) == 24);
    assert!(size_of::<CUmemAccessDesc>() == 12);
    assert!(offset_of!(CUmemAccessDesc, flags) == 8);
};

impl CUmemAllocationProp {
    /// Pinned memory on the device `device`, no shareable handle, no flags.
    pub fn device(device: CUdevice) -> Self {
        CUmemAllocationProp {
            type_: CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: CU_MEM_HANDLE_TYPE_NONE,
            location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: device },
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: CUmemAllocationProp_allocFlags::default(),
        }
    }
}

impl CUmemAccessDesc {
    /// `flags` for the device `device`.
    pub fn device(device: CUdevice, flags: CUmemAccess_flags) -> Self {
        CUmemAccessDesc { location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: device }, flags }
    }
}

// Host registration (contract §15).
/// `CU_MEMHOSTREGISTER_PORTABLE`: the registration is seen by every context.
pub const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
/// `CU_MEMHOSTREGISTER_DEVICEMAP`: the range is mapped into the device's address space.
pub const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;
/// `CU_MEMHOSTREGISTER_IOMEMORY`: the range is I/O memory.
pub const CU_MEMHOSTREGISTER_IOMEMORY: c_uint = 0x04;
/// `CU_MEMHOSTREGISTER_READ_ONLY`: device work only reads the range.
pub const CU_MEMHOSTREGISTER_READ_ONLY: c_uint = 0x08;

/// Expands the declaration table ([`for_each_cuda_function!`]): the function-pointer
/// types ([`fns`]) used by the loader, the list of names and the lazy symbol slots.
macro_rules! cuda_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) ; )*) => {
        /// Function-pointer types, one per C function; each returns a [`CUresult`].
        pub mod fns {
            #![allow(non_camel_case_types)]
            use super::*;
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub type $name = unsafe extern "C" fn($($arg: $ty),*) -> CUresult;
            )*
        }

        /// The exported names of every driver function this crate uses, in declaration
        /// order.
        pub const FUNCTION_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// One lazily resolved slot per function: `None` inside means the library lacks it.
        #[derive(Default, Debug)]
        pub struct Symbols {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: std::sync::OnceLock<Option<fns::$name>>,
            )*
        }
    };
}

/// The declaration table: every driver function this crate uses, once, with its exported
/// name and parameters (each returns `CUresult`). Calls `$callback! { NAME(arg: Type, ..);
/// .. }` with the whole table, so other crates can expand it too (a drop-in driver library
/// can check its exports against it at compile time). The types are written as in this
/// module (names from [`sys`](crate::sys) and `std::ffi`), so a callback that uses them
/// must have those in scope; one that only needs the names can match the parameters as
/// `tt`s and name each function's type as `mempool_cuda::sys::fns::NAME`.
#[macro_export]
macro_rules! for_each_cuda_function {
    ($callback:ident) => {
        $callback! {
            cuInit(flags: c_uint);
            cuDriverGetVersion(version: *mut c_int);
            cuDeviceGetCount(count: *mut c_int);
            cuDeviceGet(device: *mut CUdevice, ordinal: c_int);
            cuDeviceGetAttribute(value: *mut c_int, attribute: CUdevice_attribute, device: CUdevice);
            cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, device: CUdevice);
            cuDevicePrimaryCtxRelease_v2(device: CUdevice);
            cuCtxSetCurrent(ctx: CUcontext);
            cuCtxGetCurrent(ctx: *mut CUcontext);
            cuCtxSynchronize();
            cuStreamCreate(stream: *mut CUstream, flags: c_uint);
            cuStreamDestroy_v2(stream: CUstream);
            cuStreamSynchronize(stream: CUstream);
            cuStreamQuery(stream: CUstream);
            cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint);
            cuEventCreate(event: *mut CUevent, flags: c_uint);
            cuEventRecord(event: CUevent, stream: CUstream);
            cuEventSynchronize(event: CUevent);
            cuEventQuery(event: CUevent);
            cuEventDestroy_v2(event: CUevent);
            cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent);
            cuLaunchHostFunc(stream: CUstream, func: CUhostFn, user_data: *mut c_void);
            cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream);
            cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream);
            cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream);
            cuMemsetD8Async(dst: CUdeviceptr, value: u8, count: usize, stream: CUstream);
            cuMemAllocHost_v2(ptr: *mut *mut c_void, bytes: usize);
            cuMemFreeHost(ptr: *mut c_void);
            cuMemGetInfo_v2(free: *mut usize, total: *mut usize);
            cuGetErrorName(error: CUresult, name: *mut *const c_char);
            cuGetErrorString(error: CUresult, text: *mut *const c_char);
            cuMemPoolCreate(pool: *mut CUmemoryPool, props: *const CUmemPoolProps);
            cuMemPoolDestroy(pool: CUmemoryPool);
            cuMemPoolSetAttribute(pool: CUmemoryPool, attr: CUmemPool_attribute, value: *mut c_void);
            cuMemPoolGetAttribute(pool: CUmemoryPool, attr: CUmemPool_attribute, value: *mut c_void);
            cuMemPoolTrimTo(pool: CUmemoryPool, min_bytes_to_keep: usize);
            cuMemAllocFromPoolAsync(ptr: *mut CUdeviceptr, bytes: usize, pool: CUmemoryPool, stream: CUstream);
            cuMemAllocAsync(ptr: *mut CUdeviceptr, bytes: usize, stream: CUstream);
            cuMemFreeAsync(ptr: CUdeviceptr, stream: CUstream);
            cuDeviceGetDefaultMemPool(pool: *mut CUmemoryPool, device: CUdevice);
            cuDeviceGetMemPool(pool: *mut CUmemoryPool, device: CUdevice);
            cuDeviceSetMemPool(device: CUdevice, pool: CUmemoryPool);
            // Virtual memory (contract §14).
            cuMemAddressReserve(ptr: *mut CUdeviceptr, size: usize, alignment: usize, addr: CUdeviceptr, flags: u64);
            cuMemAddressFree(ptr: CUdeviceptr, size: usize);
            cuMemCreate(handle: *mut CUmemGenericAllocationHandle, size: usize, prop: *const CUmemAllocationProp, flags: u64);
            cuMemRelease(handle: CUmemGenericAllocationHandle);
            cuMemMap(ptr: CUdeviceptr, size: usize, offset: usize, handle: CUmemGenericAllocationHandle, flags: u64);
            cuMemUnmap(ptr: CUdeviceptr, size: usize);
            cuMemSetAccess(ptr: CUdeviceptr, size: usize, desc: *const CUmemAccessDesc, count: usize);
            cuMemGetAccess(flags: *mut u64, location: *const CUmemLocation, ptr: CUdeviceptr);
            cuMemGetAllocationGranularity(granularity: *mut usize, prop: *const CUmemAllocationProp, option: CUmemAllocationGranularity_flags);
            cuMemRetainAllocationHandle(handle: *mut CUmemGenericAllocationHandle, addr: *mut c_void);
            cuMemGetAllocationPropertiesFromHandle(prop: *mut CUmemAllocationProp, handle: CUmemGenericAllocationHandle);
            // Host registration (contract §15); optional: a driver without them still loads.
            cuMemHostRegister_v2(p: *mut c_void, bytes: usize, flags: c_uint);
            cuMemHostUnregister(p: *mut c_void);
            cuMemHostGetDevicePointer_v2(dptr: *mut CUdeviceptr, p: *mut c_void, flags: c_uint);
            // Peer access between devices.
            cuDeviceCanAccessPeer(can_access_peer: *mut c_int, device: CUdevice, peer: CUdevice);
            cuCtxEnablePeerAccess(peer_context: CUcontext, flags: c_uint);
            cuCtxDisablePeerAccess(peer_context: CUcontext);
        }
    };
}
pub use crate::for_each_cuda_function;

for_each_cuda_function!(cuda_functions);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_call_once() {
        assert_eq!(FUNCTION_NAMES.len(), 59);
        let mut sorted = FUNCTION_NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), FUNCTION_NAMES.len());
        for versioned in ["cuDevicePrimaryCtxRelease_v2", "cuStreamDestroy_v2", "cuMemGetInfo_v2", "cuMemAllocHost_v2"]
        {
            assert!(FUNCTION_NAMES.contains(&versioned), "{versioned}");
        }
    }

    #[test]
    fn the_props_layout_is_cuda_12_6s() {
        use std::mem::{align_of, offset_of, size_of};
        // The same facts as the compile-time checks, reported by the test run.
        let offsets = [
            offset_of!(CUmemPoolProps, allocType),
            offset_of!(CUmemPoolProps, handleTypes),
            offset_of!(CUmemPoolProps, location),
            offset_of!(CUmemPoolProps, win32SecurityAttributes),
            offset_of!(CUmemPoolProps, maxSize),
            offset_of!(CUmemPoolProps, usage),
            offset_of!(CUmemPoolProps, reserved),
        ];
        assert_eq!(offsets, [0, 4, 8, 16, 24, 32, 34]);
        assert_eq!((size_of::<CUmemPoolProps>(), align_of::<CUmemPoolProps>()), (88, 8));
        assert_eq!((size_of::<CUmemLocation>(), offset_of!(CUmemLocation, id)), (8, 4));
    }

    #[test]
    fn portable_props_are_renumbered() {
        use mempool_hal::{AllocationType, HandleType, Location, LocationType, PoolProps};
        let p = PoolProps::builder().device(3).max_size(12345).build();
        let c = CUmemPoolProps::from_portable(&p).unwrap();
        assert_eq!((c.allocType, c.handleTypes), (CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_HANDLE_TYPE_NONE));
        assert_eq!((c.location.type_, c.location.id, c.maxSize), (CU_MEM_LOCATION_TYPE_DEVICE, 3, 12345));
        assert!(c.win32SecurityAttributes.is_null());
        assert_eq!((c.usage, c.reserved), (0, [0; 54]));
        let posix = PoolProps::builder().handle_type(HandleType::POSIX).build();
        assert_eq!(
            CUmemPoolProps::from_portable(&posix).unwrap().handleTypes,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        );
        for bad in [
            PoolProps::builder().alloc_type(AllocationType(1)).build(),
            PoolProps::builder().handle_type(HandleType(1)).build(),
            PoolProps::builder().location(Location { id: 0, kind: LocationType::HOST }).build(),
            PoolProps::builder().device(u32::MAX).build(),
        ] {
            assert_eq!(CUmemPoolProps::from_portable(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn known_codes_have_names() {
        assert_eq!(error_name(CUDA_ERROR_OUT_OF_MEMORY), Some("CUDA_ERROR_OUT_OF_MEMORY"));
        assert_eq!(error_name(CUDA_ERROR_STUB_LIBRARY), Some("CUDA_ERROR_STUB_LIBRARY"));
        assert_eq!(error_name(12_345), None);
    }
}
