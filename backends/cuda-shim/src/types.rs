//! The C types and values of the driver API this library implements, declared from their
//! documented names, numbers and layouts (64-bit Linux): handles, the pool properties
//! struct, and the enum values the exports accept. `include/cuda.h` declares the same for
//! C; its `_Static_assert`s and the `headers` test hold the two together.
//!
//! The handle targets and the structs are the CUDA backend's own declarations
//! ([`mempool_cuda::sys`]), re-exported, so the exports have exactly the Rust types of the
//! backend's table and the crate's `signatures` check compares the C signatures. The
//! layout checks below hold them to the C ABI this library exports.

#![allow(non_camel_case_types, non_snake_case)]

pub use crate::ffi::{CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED};
pub use crate::ffi::{
    CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_ERROR_UNKNOWN, CUDA_SUCCESS, CUresult,
};
/// The flags of `cuMemHostRegister` (contract §15), as the backend declares them.
pub use mempool_cuda::sys::{
    CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_IOMEMORY, CU_MEMHOSTREGISTER_PORTABLE,
    CU_MEMHOSTREGISTER_READ_ONLY,
};
use std::ffi::{c_char, c_int, c_uint};

/// `CUuuid`: a device's 16-byte UUID.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CUuuid {
    /// The bytes.
    pub bytes: [c_char; 16],
}

/// A device ordinal (`CUdevice`, an `int`).
pub type CUdevice = c_int;
/// A device address (`CUdeviceptr`, an `unsigned long long`).
pub type CUdeviceptr = u64;
/// A 64-bit attribute value (`cuuint64_t`).
pub type cuuint64_t = u64;

/// The opaque handle targets (never dereferenced: handles are registry ids), the handle
/// types (a null [`CUstream`] is the current context's legacy default stream) and the host
/// function type (`CUhostFn`: `void (*)(void *userData)`), as the backend declares them.
pub use mempool_cuda::sys::{
    CUcontext, CUctx_st, CUevent, CUevent_st, CUhostFn, CUmemPoolHandle_st, CUmemoryPool, CUstream, CUstream_st,
};

/// `CUmemAllocationType`: pinned device memory, the only type a pool takes.
pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
/// `CUmemAllocationHandleType`: no shareable handle.
pub const CU_MEM_HANDLE_TYPE_NONE: c_int = 0;
/// `CUmemAllocationHandleType`: a POSIX file descriptor (accepted at creation; this
/// library exports no call that shares a pool).
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: c_int = 1;
/// `CUmemLocationType`: device memory.
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;

/// `CUmemPool_attribute`s, declared once in the backend's `sys` (with the one mapping to the
/// portable keys, `mempool_cuda::sys::mempool_attribute`).
pub use mempool_cuda::sys::{
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_HIGH,
};

/// `CUstream_flags`: the default, a blocking stream: its work and the legacy default
/// stream's wait for each other's earlier work.
pub const CU_STREAM_DEFAULT: c_uint = 0;
/// `CUstream_flags`: the stream does not synchronize with the legacy default stream.
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;

/// `CU_STREAM_LEGACY` (`((CUstream)0x1)`): the current context's legacy default stream,
/// as the NULL stream is.
pub const CU_STREAM_LEGACY: CUstream = std::ptr::without_provenance_mut(0x1);
/// `CU_STREAM_PER_THREAD` (`((CUstream)0x2)`): the calling thread's per-thread default
/// stream in the current context, a blocking stream of its own.
pub const CU_STREAM_PER_THREAD: CUstream = std::ptr::without_provenance_mut(0x2);

/// `CUevent_flags`: the default (timing on).
pub const CU_EVENT_DEFAULT: c_uint = 0;
/// `CUevent_flags`: the host blocks instead of spinning in `cuEventSynchronize`.
pub const CU_EVENT_BLOCKING_SYNC: c_uint = 1;
/// `CUevent_flags`: no timing (`cuEventElapsedTime` refuses the event).
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
/// `CUevent_flags`: an event shared between processes (needs `CU_EVENT_DISABLE_TIMING`).
pub const CU_EVENT_INTERPROCESS: c_uint = 4;

/// `CUdevice_attribute` 10: the warp size, in threads.
pub const CU_DEVICE_ATTRIBUTE_WARP_SIZE: c_int = 10;
/// `CUdevice_attribute` 16: the number of multiprocessors.
pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
/// `CUdevice_attribute` 19: host memory can be mapped into the device's address space.
pub const CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: c_int = 19;
/// `CUdevice_attribute` 75: the compute capability's major number.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
/// `CUdevice_attribute` 76: the compute capability's minor number.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `CUdevice_attribute` 83: the device supports managed memory.
pub const CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: c_int = 83;
/// `CUdevice_attribute` 89: the device can access managed memory concurrently with the host.
pub const CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: c_int = 89;
/// `CUdevice_attribute` 41: the device shares one address space with the host.
pub const CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: c_int = 41;
/// `CUdevice_attribute` 115: the device supports `cuMemAllocAsync` and pools.
pub const CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: c_int = 115;
/// `CUdevice_attribute` 119: the handle types pools can be shared with (a bit mask).
pub const CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: c_int = 119;

/// `CUmemLocation` (where memory lives, 8 bytes) and `CUmemPoolProps` (the properties a
/// pool is created with, 88 bytes, 8-byte aligned), as the backend declares them: fields
/// `allocType` ([`CU_MEM_ALLOCATION_TYPE_PINNED`]), `handleTypes`
/// ([`CU_MEM_HANDLE_TYPE_NONE`] or [`CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`]),
/// `location` (the device), `win32SecurityAttributes` (Windows only; ignored), `maxSize`
/// (the most the pool may reserve, in bytes; 0 is the whole device), `usage` (must be 0
/// here) and `reserved` (must be zero).
pub use mempool_cuda::sys::{CUmemLocation, CUmemPoolProps};

/// Ready-made [`CUmemPoolProps`] (a trait, since the struct is the backend's): with
/// `use cuda::types::*`, `CUmemPoolProps::device(0, size)`.
pub trait PoolPropsExt {
    /// Valid properties of a pool of `max_size` bytes (0: the whole device) on `device`.
    fn device(device: CUdevice, max_size: usize) -> Self;
}

impl PoolPropsExt for CUmemPoolProps {
    fn device(device: CUdevice, max_size: usize) -> CUmemPoolProps {
        CUmemPoolProps {
            allocType: CU_MEM_ALLOCATION_TYPE_PINNED,
            handleTypes: CU_MEM_HANDLE_TYPE_NONE,
            location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: device },
            win32SecurityAttributes: std::ptr::null_mut(),
            maxSize: max_size,
            usage: 0,
            reserved: [0; 54],
        }
    }
}

// The layouts are those of `mempool_cuda::sys`, checked at compile time there.

/// The virtual-memory types and values, as the backend declares them
/// (`CUmemGenericAllocationHandle`, `CUmemAllocationProp` with its `allocFlags`,
/// `CUmemAccessDesc`, the granularity options and the access flags).
pub use mempool_cuda::sys::{
    CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ, CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_ALLOC_GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED, CUmemAccess_flags, CUmemAccessDesc,
    CUmemAllocationGranularity_flags, CUmemAllocationProp, CUmemAllocationProp_allocFlags,
    CUmemGenericAllocationHandle,
};
