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
    CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_SUPPORTED,
    CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_UNKNOWN, CUDA_SUCCESS, CUresult,
};
/// The flags of `cuMemHostRegister` (contract §15), as the backend declares them.
pub use mempool_cuda::sys::{
    CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_IOMEMORY, CU_MEMHOSTREGISTER_PORTABLE,
    CU_MEMHOSTREGISTER_READ_ONLY,
};
use std::ffi::{c_char, c_int, c_uint, c_void};

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

/// `CUdriverProcAddress_flags`: the default search (the legacy default stream's variants).
pub const CU_GET_PROC_ADDRESS_DEFAULT: u64 = 0;
/// `CUdriverProcAddress_flags`: the variants whose NULL stream is the legacy default stream.
pub const CU_GET_PROC_ADDRESS_LEGACY_STREAM: u64 = 1;
/// `CUdriverProcAddress_flags`: the per-thread default-stream variants (`_ptds`, `_ptsz`).
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;

/// `CUdriverProcAddressQueryResult`: what `cuGetProcAddress_v2` found (an `int` enum).
pub type CUdriverProcAddressQueryResult = c_int;
/// `CUdriverProcAddressQueryResult`: the symbol was found.
pub const CU_GET_PROC_ADDRESS_SUCCESS: c_int = 0;
/// `CUdriverProcAddressQueryResult`: no driver function has that name.
pub const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: c_int = 1;
/// `CUdriverProcAddressQueryResult`: the function is newer than the CUDA version asked for.
pub const CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: c_int = 2;

/// `CUctx_flags`: the scheduling bits (`CU_CTX_SCHED_AUTO` 0, `SPIN` 1, `YIELD` 2,
/// `BLOCKING_SYNC` 4; at most one).
pub const CU_CTX_SCHED_MASK: c_uint = 0x07;
/// `CUctx_flags`: every flag a context takes (`CU_CTX_FLAGS_MASK`).
pub const CU_CTX_FLAGS_MASK: c_uint = 0xFF;
/// `CUresult` 224: the execution-affinity parameters of `cuCtxCreate_v3`/`_v4` are not
/// supported.
pub const CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY: CUresult = 224;

/// `CUctxCreateParams` (`cuCtxCreate_v4`'s parameters, 24 bytes): execution-affinity
/// parameters and their count, and the CUDA-in-graphics parameters.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUctxCreateParams {
    /// `CUexecAffinityParam *execAffinityParams`.
    pub execAffinityParams: *mut std::ffi::c_void,
    /// `int numExecAffinityParams`.
    pub numExecAffinityParams: c_int,
    /// `CUctxCigParam *cigParams`.
    pub cigParams: *mut std::ffi::c_void,
}

const _: () = assert!(std::mem::size_of::<CUctxCreateParams>() == 24);

/// `CUstreamCallback`: `void (*)(CUstream hStream, CUresult status, void *userData)`, what
/// `cuStreamAddCallback` runs.
pub type CUstreamCallback = Option<unsafe extern "C" fn(stream: CUstream, status: CUresult, user_data: *mut c_void)>;
/// `CUstreamCaptureStatus` (an `int` enum): the stream is not capturing.
pub const CU_STREAM_CAPTURE_STATUS_NONE: c_int = 0;
/// `CUhostTaskSyncMode`: the thread running host functions blocks between them.
pub const CU_HOST_TASK_BLOCKING: c_uint = 0;
/// `CUevent_record_flags`: the default record.
pub const CU_EVENT_RECORD_DEFAULT: c_uint = 0;
/// `CUevent_record_flags`: a record node for stream capture (no capture here).
pub const CU_EVENT_RECORD_EXTERNAL: c_uint = 1;

/// `CUmemorytype`: where memory lives (`cuPointerGetAttribute`'s memory type).
pub const CU_MEMORYTYPE_HOST: c_uint = 1;
/// `CUmemorytype` 2.
pub const CU_MEMORYTYPE_DEVICE: c_uint = 2;
/// `CUmemorytype` 3.
pub const CU_MEMORYTYPE_ARRAY: c_uint = 3;
/// `CUmemorytype` 4.
pub const CU_MEMORYTYPE_UNIFIED: c_uint = 4;

/// `CUpointer_attribute` ids (`cuPointerGetAttribute`, `cuPointerGetAttributes`).
pub const CU_POINTER_ATTRIBUTE_CONTEXT: c_int = 1;
/// `CUpointer_attribute` 2.
pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
/// `CUpointer_attribute` 3.
pub const CU_POINTER_ATTRIBUTE_DEVICE_POINTER: c_int = 3;
/// `CUpointer_attribute` 4.
pub const CU_POINTER_ATTRIBUTE_HOST_POINTER: c_int = 4;
/// `CUpointer_attribute` 5.
pub const CU_POINTER_ATTRIBUTE_P2P_TOKENS: c_int = 5;
/// `CUpointer_attribute` 6.
pub const CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: c_int = 6;
/// `CUpointer_attribute` 7.
pub const CU_POINTER_ATTRIBUTE_BUFFER_ID: c_int = 7;
/// `CUpointer_attribute` 8.
pub const CU_POINTER_ATTRIBUTE_IS_MANAGED: c_int = 8;
/// `CUpointer_attribute` 9.
pub const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
/// `CUpointer_attribute` 10.
pub const CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: c_int = 10;
/// `CUpointer_attribute` 11.
pub const CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: c_int = 11;
/// `CUpointer_attribute` 12.
pub const CU_POINTER_ATTRIBUTE_RANGE_SIZE: c_int = 12;
/// `CUpointer_attribute` 13.
pub const CU_POINTER_ATTRIBUTE_MAPPED: c_int = 13;
/// `CUpointer_attribute` 14.
pub const CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: c_int = 14;
/// `CUpointer_attribute` 15.
pub const CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: c_int = 15;
/// `CUpointer_attribute` 16.
pub const CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: c_int = 16;
/// `CUpointer_attribute` 17.
pub const CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: c_int = 17;
/// `CUpointer_attribute` 18.
pub const CU_POINTER_ATTRIBUTE_MAPPING_SIZE: c_int = 18;
/// `CUpointer_attribute` 19.
pub const CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: c_int = 19;
/// `CUpointer_attribute` 20.
pub const CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: c_int = 20;
/// `CUpointer_attribute` 21.
pub const CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: c_int = 21;
/// `CUpointer_attribute` 22.
pub const CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL: c_int = 22;
/// `CUstreamCaptureStatus`.
pub const CU_STREAM_CAPTURE_STATUS_ACTIVE: c_int = 1;
/// `CUstreamCaptureStatus`.
pub const CU_STREAM_CAPTURE_STATUS_INVALIDATED: c_int = 2;
