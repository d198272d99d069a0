//! Hand-written C declarations of the ACL runtime API this project uses
//! ([contract §8](mempool_hal::contract::c_abi)), with compile-time layout checks. No SDK header is needed.
//!
//! Names follow the C API, so they are not Rust-style.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_void};

mod allocator;
pub use allocator::*;

/// The ACL codes of the pool API and its neighbours, as the contract numbers them
/// (`mempool_hal::code`, the emulator's own numbering), read from here by this backend and
/// by the drop-in `libacl_rt.so`; the codes declared below are the rest of CANN's that
/// either uses.
pub use mempool_hal::code::*;

/// `aclError`: 0 is success.
pub type aclError = c_int;
/// `aclrtStream`.
pub type aclrtStream = *mut c_void;
/// `aclrtEvent`.
pub type aclrtEvent = *mut c_void;
/// `aclrtContext`.
pub type aclrtContext = *mut c_void;
/// `aclrtMemPool`.
pub type aclrtMemPool = *mut c_void;
/// `aclrtMemPoolAttr`: 1-8, see [`mempool_hal::attr`].
pub type aclrtMemPoolAttr = c_int;
/// `aclrtMemcpyKind`.
pub type aclrtMemcpyKind = c_int;
/// `aclrtMemMallocPolicy`.
pub type aclrtMemMallocPolicy = c_int;
/// `aclrtMemAttr`.
pub type aclrtMemAttr = c_int;
/// `aclrtEventRecordedStatus`.
pub type aclrtEventRecordedStatus = c_int;
/// The host function type of `aclrtLaunchHostFunc`.
pub type aclrtHostFunc = Option<unsafe extern "C" fn(args: *mut c_void)>;
/// `aclrtRunMode`: where the program runs.
pub type aclrtRunMode = c_int;
/// `aclrtStreamStatus`: the answer of `aclrtStreamQuery`.
pub type aclrtStreamStatus = c_int;
/// `aclrtCallbackBlockType`: whether a callback's stream waits for it.
pub type aclrtCallbackBlockType = c_int;
/// `aclrtLastErrLevel`: the scope of `aclrtGetLastError` / `aclrtPeekAtLastError`.
pub type aclrtLastErrLevel = c_int;
/// The callback type of `aclrtLaunchCallback`.
pub type aclrtCallback = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

// Host registration (contract §15).
/// `aclrtHostRegisterType`: how `aclrtHostRegister` maps a host range.
pub type aclrtHostRegisterType = c_int;
/// `ACL_HOST_REGISTER_MAPPED`: the range is mapped for the device (the default).
pub const ACL_HOST_REGISTER_MAPPED: aclrtHostRegisterType = 0;
/// `ACL_HOST_REGISTER_IOMEMORY`: the range is I/O memory.
pub const ACL_HOST_REGISTER_IOMEMORY: aclrtHostRegisterType = 0x4;
/// `ACL_HOST_REGISTER_READONLY`: device work only reads the range.
pub const ACL_HOST_REGISTER_READONLY: aclrtHostRegisterType = 0x8;
/// `ACL_HOST_REG_MAPPED`, a flag of `aclrtHostRegisterV2`.
pub const ACL_HOST_REG_MAPPED: u32 = 0x2;
/// `ACL_HOST_REG_IOMEMORY`, a flag of `aclrtHostRegisterV2`.
pub const ACL_HOST_REG_IOMEMORY: u32 = 0x4;
/// `ACL_HOST_REG_READONLY`, a flag of `aclrtHostRegisterV2`.
pub const ACL_HOST_REG_READONLY: u32 = 0x8;
/// `ACL_HOST_REG_PINNED`, a flag of `aclrtHostRegisterV2`: page-locks pageable memory.
pub const ACL_HOST_REG_PINNED: u32 = 0x1000_0000;

/// `ACL_MEMCPY_HOST_TO_HOST`.
pub const ACL_MEMCPY_HOST_TO_HOST: aclrtMemcpyKind = 0;
/// `ACL_MEMCPY_HOST_TO_DEVICE`.
pub const ACL_MEMCPY_HOST_TO_DEVICE: aclrtMemcpyKind = 1;
/// `ACL_MEMCPY_DEVICE_TO_HOST`.
pub const ACL_MEMCPY_DEVICE_TO_HOST: aclrtMemcpyKind = 2;
/// `ACL_MEMCPY_DEVICE_TO_DEVICE`.
pub const ACL_MEMCPY_DEVICE_TO_DEVICE: aclrtMemcpyKind = 3;
/// `ACL_MEMCPY_DEFAULT`: the runtime infers the direction from the addresses.
pub const ACL_MEMCPY_DEFAULT: aclrtMemcpyKind = 4;
/// `ACL_EVENT_RECORDED_STATUS_NOT_READY`.
pub const ACL_EVENT_RECORDED_STATUS_NOT_READY: aclrtEventRecordedStatus = 0;
/// `ACL_EVENT_RECORDED_STATUS_COMPLETE`.
pub const ACL_EVENT_RECORDED_STATUS_COMPLETE: aclrtEventRecordedStatus = 1;
/// `ACL_MEM_MALLOC_HUGE_FIRST`.
pub const ACL_MEM_MALLOC_HUGE_FIRST: aclrtMemMallocPolicy = 0;
/// `ACL_HBM_MEM`: device memory, for `aclrtGetMemInfo`.
pub const ACL_HBM_MEM: aclrtMemAttr = 1;
/// `ACL_ERROR_REPEAT_INITIALIZE`: `aclInit` was already called in this process.
pub const ACL_ERROR_REPEAT_INITIALIZE: aclError = 100_002;
/// `ACL_ERROR_INVALID_FILE`: `aclInit`'s configuration path is not a readable file.
pub const ACL_ERROR_INVALID_FILE: aclError = 100_003;
/// `ACL_ERROR_REPEAT_FINALIZE`: `aclFinalize` without an `aclInit` since the last one.
pub const ACL_ERROR_REPEAT_FINALIZE: aclError = 100_037;
/// `ACL_ERROR_RT_INVALID_MEMORY_TYPE`: an `aclrtGetMemInfo` attribute out of range.
pub const ACL_ERROR_RT_INVALID_MEMORY_TYPE: aclError = 107_016;
/// `ACL_ERROR_RT_STREAM_SUBSCRIBE`: a stream already subscribed, or not subscribed by
/// the thread named.
pub const ACL_ERROR_RT_STREAM_SUBSCRIBE: aclError = 107_011;
/// `ACL_ERROR_RT_THREAD_SUBSCRIBE`: `aclrtProcessReport` on a thread that subscribed no stream.
pub const ACL_ERROR_RT_THREAD_SUBSCRIBE: aclError = 107_012;
/// `ACL_ERROR_RT_STREAM_NO_CB_REG`: a callback launched on a stream no thread subscribed.
pub const ACL_ERROR_RT_STREAM_NO_CB_REG: aclError = 107_015;
/// `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR`: `aclrtResetDevice` of a device not set.
pub const ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: aclError = 507_007;
/// `ACL_ERROR_RT_DEVICE_OOM`: the device is out of memory.
pub const ACL_ERROR_RT_DEVICE_OOM: aclError = 207_018;
/// `ACL_ERROR_RT_REPORT_TIMEOUT`: `aclrtProcessReport` found no callback in time.
pub const ACL_ERROR_RT_REPORT_TIMEOUT: aclError = 507_012;
/// `ACL_DEVICE`: the program runs on the device.
pub const ACL_DEVICE: aclrtRunMode = 0;
/// `ACL_HOST`: the program runs on a host (the drop-in library's answer).
pub const ACL_HOST: aclrtRunMode = 1;
/// `ACL_STREAM_STATUS_COMPLETE`: everything enqueued on the stream has run.
pub const ACL_STREAM_STATUS_COMPLETE: aclrtStreamStatus = 0;
/// `ACL_STREAM_STATUS_NOT_READY`: work on the stream is pending.
pub const ACL_STREAM_STATUS_NOT_READY: aclrtStreamStatus = 1;
/// `ACL_CALLBACK_NO_BLOCK`: the stream goes on while the callback waits to be processed.
pub const ACL_CALLBACK_NO_BLOCK: aclrtCallbackBlockType = 0;
/// `ACL_CALLBACK_BLOCK`: the stream waits until the callback has run.
pub const ACL_CALLBACK_BLOCK: aclrtCallbackBlockType = 1;
/// `ACL_RT_THREAD_LEVEL`: the calling thread's last error.
pub const ACL_RT_THREAD_LEVEL: aclrtLastErrLevel = 0;
/// `ACL_CONTINUE_ON_FAILURE`: a stream goes on after a failed task (the default).
pub const ACL_CONTINUE_ON_FAILURE: u64 = 0;
/// `ACL_STOP_ON_FAILURE`: a stream stops at its first failed task.
pub const ACL_STOP_ON_FAILURE: u64 = 1;
/// `ACL_STREAM_FAST_LAUNCH`, a flag of `aclrtCreateStreamWithConfig`.
pub const ACL_STREAM_FAST_LAUNCH: u32 = 0x1;
/// `ACL_STREAM_FAST_SYNC`, a flag of `aclrtCreateStreamWithConfig`.
pub const ACL_STREAM_FAST_SYNC: u32 = 0x2;
/// `ACL_STREAM_PERSISTENT`, a flag of `aclrtCreateStreamWithConfig`.
pub const ACL_STREAM_PERSISTENT: u32 = 0x4;
/// `ACL_STREAM_HUGE`, a flag of `aclrtCreateStreamWithConfig`.
pub const ACL_STREAM_HUGE: u32 = 0x8;
/// `ACL_EVENT_SYNC`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_SYNC: u32 = 0x1;
/// `ACL_EVENT_CAPTURE_STREAM_PROGRESS`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_CAPTURE_STREAM_PROGRESS: u32 = 0x2;
/// `ACL_EVENT_TIME_LINE`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_TIME_LINE: u32 = 0x8;

/// `aclrtNotify`: a notification handle.
pub type aclrtNotify = *mut c_void;
/// `ACL_NOTIFY_DEFAULT`, a flag of `aclrtCreateNotify`.
pub const ACL_NOTIFY_DEFAULT: u64 = 0;
/// `ACL_NOTIFY_DEVICE_USE_ONLY`, a flag of `aclrtCreateNotify`.
pub const ACL_NOTIFY_DEVICE_USE_ONLY: u64 = 1;
/// `ACL_STREAM_WAIT_VALUE_GEQ`: `aclrtValueWait` until the word is at least the value.
pub const ACL_STREAM_WAIT_VALUE_GEQ: u32 = 0;
/// `ACL_STREAM_WAIT_VALUE_EQ`: until the word equals the value.
pub const ACL_STREAM_WAIT_VALUE_EQ: u32 = 1;
/// `ACL_STREAM_WAIT_VALUE_AND`: until the word and the value share a set bit.
pub const ACL_STREAM_WAIT_VALUE_AND: u32 = 2;
/// `ACL_STREAM_WAIT_VALUE_NOR`: until `~(word | value)` is not zero.
pub const ACL_STREAM_WAIT_VALUE_NOR: u32 = 3;
/// `ACL_EVENT_DEVICE_USE_ONLY`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_DEVICE_USE_ONLY: u32 = 0x10;
/// `ACL_EVENT_EXTERNAL`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_EXTERNAL: u32 = 0x20;
/// `ACL_EVENT_IPC`, a flag of `aclrtCreateEventWithFlag`.
pub const ACL_EVENT_IPC: u32 = 0x40;
/// `ACL_EVENT_RECORD_DEFAULT`, a flag of `aclrtRecordEventWithFlag`.
pub const ACL_EVENT_RECORD_DEFAULT: u32 = 0;
/// `ACL_EVENT_RECORD_EXTERNAL`: a record seen outside a captured graph.
pub const ACL_EVENT_RECORD_EXTERNAL: u32 = 1;
/// `ACL_EVENT_WAIT_DEFAULT`, a flag of `aclrtStreamWaitEventWithFlag`.
pub const ACL_EVENT_WAIT_DEFAULT: u32 = 0;
/// `ACL_EVENT_WAIT_EXTERNAL`: a wait seen outside a captured graph.
pub const ACL_EVENT_WAIT_EXTERNAL: u32 = 1;
/// `ACL_ERROR_RT_WAIT_TIMEOUT`: a wait of the runtime ran out of time.
pub const ACL_ERROR_RT_WAIT_TIMEOUT: aclError = 107_019;
/// `ACL_ERROR_RT_TASK_TIMEOUT`: a task ran out of time (a notification wait's own limit).
pub const ACL_ERROR_RT_TASK_TIMEOUT: aclError = 107_020;
/// `ACL_ERROR_RT_STREAM_ABORT`: the stream was aborted.
pub const ACL_ERROR_RT_STREAM_ABORT: aclError = 107_023;
/// `ACL_ERROR_RT_STREAM_NOT_CAPTURED`: an external record or wait on a stream not capturing.
pub const ACL_ERROR_RT_STREAM_NOT_CAPTURED: aclError = 107_029;
/// `aclrtStreamState`: what an `aclrtStreamStateCallback` is told.
pub type aclrtStreamState = c_int;
/// `ACL_RT_STREAM_STATE_CREATE_POST`: the stream was just created.
pub const ACL_RT_STREAM_STATE_CREATE_POST: aclrtStreamState = 1;
/// `ACL_RT_STREAM_STATE_DESTROY_PRE`: the stream is about to be destroyed.
pub const ACL_RT_STREAM_STATE_DESTROY_PRE: aclrtStreamState = 2;
/// `aclrtStreamStateCallback`: `void (*)(aclrtStream, aclrtStreamState, void *)`.
pub type aclrtStreamStateCallback =
    Option<unsafe extern "C" fn(stream: aclrtStream, state: aclrtStreamState, args: *mut c_void)>;
/// `aclrtFuncHandle`: a kernel function handle.
pub type aclrtFuncHandle = *mut c_void;
/// `aclrtErrorType`: the kind of device fault `aclrtGetErrorVerbose` reports.
pub type aclrtErrorType = c_int;
/// `ACL_RT_NO_ERROR`: no device fault.
pub const ACL_RT_NO_ERROR: aclrtErrorType = 0;
/// `aclrtErrorInfo`, as `aclrtGetErrorVerbose` fills it: 4 flag bytes, the type, and a
/// detail union of 20 memory-fault records (`{ void *addr; size_t len; size_t
/// reserved[14]; }`) after a count: 2576 bytes, 8-aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtErrorInfo {
    /// @0: whether the fault may be repaired.
    pub tryRepair: u8,
    /// @1: whether `detail` holds anything.
    pub hasDetail: u8,
    /// @2: reserved.
    pub reserved: [u8; 2],
    /// @4: the kind of fault.
    pub errorType: aclrtErrorType,
    /// @8: the detail union (`aclrtErrorInfoDetail`), as raw words.
    pub detail: [u64; 1 + 20 * 16],
}
const _: () = assert!(std::mem::size_of::<aclrtErrorInfo>() == 2576);

/// `aclrtDevAttr`: what `aclrtGetDeviceInfo` reads.
pub type aclrtDevAttr = c_int;
/// `aclrtDeviceStatus`: what `aclrtQueryDeviceStatus` answers.
pub type aclrtDeviceStatus = c_int;
/// `ACL_RT_DEVICE_STATUS_NORMAL`.
pub const ACL_RT_DEVICE_STATUS_NORMAL: aclrtDeviceStatus = 0;
/// `aclrtDevResLimitType`: a kind of core a device's resource limit counts.
pub type aclrtDevResLimitType = c_int;
/// `ACL_RT_DEV_RES_CUBE_CORE`.
pub const ACL_RT_DEV_RES_CUBE_CORE: aclrtDevResLimitType = 0;
/// `ACL_RT_DEV_RES_VECTOR_CORE`.
pub const ACL_RT_DEV_RES_VECTOR_CORE: aclrtDevResLimitType = 1;
/// `aclrtStreamConfigAttr`: an option of a stream configuration handle.
pub type aclrtStreamConfigAttr = c_int;
/// `aclDataType`: an element type of CANN's tensors.
pub type aclDataType = c_int;
/// `aclFloat16`: the bits of an IEEE half-precision number.
pub type aclFloat16 = u16;
/// `ACL_ERROR_FEATURE_UNSUPPORTED`: a reserved argument that is not 0.
pub const ACL_ERROR_FEATURE_UNSUPPORTED: aclError = 200_006;
/// `ACL_ERROR_RT_DEV_SETUP_ERROR`: the device was not set.
pub const ACL_ERROR_RT_DEV_SETUP_ERROR: aclError = 507_033;
/// `aclrtUtilizationInfo`: four percentages (-1 where not measured) and a reserved pointer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtUtilizationInfo {
    /// @0.
    pub cubeUtilization: i32,
    /// @4.
    pub vectorUtilization: i32,
    /// @8.
    pub aicpuUtilization: i32,
    /// @12.
    pub memoryUtilization: i32,
    /// @16: reserved, must be NULL.
    pub utilizationExtend: *mut c_void,
}
/// `aclrtStreamConfigHandle`: a public struct, filled by `aclrtSetStreamConfigOpt`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtStreamConfigHandle {
    /// @0.
    pub workptr: *mut c_void,
    /// @8.
    pub workSize: usize,
    /// @16: the stream flags.
    pub flag: usize,
    /// @24: the priority (0-7).
    pub priority: u32,
}

/// `aclrtMemLocation`: `{ uint32 id; int type }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemLocation {
    /// Device id.
    pub id: u32,
    /// Location type (DEVICE = 1).
    pub type_: c_int,
}

/// `aclrtMemPoolProps`: 56 bytes, 8-aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemPoolProps {
    /// @0: allocation type (PINNED = 0).
    pub allocType: c_int,
    /// @4: handle type (NONE = 0, POSIX = 2).
    pub handleType: c_int,
    /// @8: location.
    pub location: aclrtMemLocation,
    /// @16: maximum size in bytes (0 = whole device).
    pub maxSize: usize,
    /// @24: must be zero.
    pub reserved: [u8; 32],
}

const _: () = {
    assert!(std::mem::size_of::<aclrtMemPoolProps>() == 56);
    assert!(std::mem::align_of::<aclrtMemPoolProps>() == 8);
    assert!(std::mem::offset_of!(aclrtMemPoolProps, allocType) == 0);
    assert!(std::mem::offset_of!(aclrtMemPoolProps, handleType) == 4);
    assert!(std::mem::offset_of!(aclrtMemPoolProps, location) == 8);
    assert!(std::mem::offset_of!(aclrtMemLocation, type_) == 4);
    assert!(std::mem::offset_of!(aclrtMemPoolProps, maxSize) == 16);
    assert!(std::mem::offset_of!(aclrtMemPoolProps, reserved) == 24);
};

impl From<&mempool_hal::PoolProps> for aclrtMemPoolProps {
    fn from(p: &mempool_hal::PoolProps) -> Self {
        aclrtMemPoolProps {
            allocType: p.alloc_type.0,
            handleType: p.handle_type.0,
            location: aclrtMemLocation { id: p.location.id, type_: p.location.kind.0 },
            // A size that does not fit the platform's size_t cannot be valid anyway.
            maxSize: usize::try_from(p.max_size).unwrap_or(usize::MAX),
            reserved: p.reserved,
        }
    }
}

impl From<&aclrtMemPoolProps> for mempool_hal::PoolProps {
    fn from(p: &aclrtMemPoolProps) -> Self {
        use mempool_hal::{AllocationType, HandleType, Location, LocationType};
        mempool_hal::PoolProps {
            alloc_type: AllocationType(p.allocType),
            handle_type: HandleType(p.handleType),
            location: Location { id: p.location.id, kind: LocationType(p.location.type_) },
            max_size: p.maxSize as u64,
            reserved: p.reserved,
        }
    }
}

// ---------------------------------------------------------------- virtual memory (contract §14)

/// `aclrtDrvMemHandle`: a physical chunk of `aclrtMallocPhysical`, opaque.
pub type aclrtDrvMemHandle = *mut c_void;
/// `aclrtMemGranularityOptions`: which granularity `aclrtMemGetAllocationGranularity` answers.
pub type aclrtMemGranularityOptions = c_int;
/// `aclrtMemAccessFlags`: what device work may do with a mapped range.
pub type aclrtMemAccessFlags = c_int;

/// `ACL_MEM_LOCATION_TYPE_DEVICE`: memory of the device `aclrtMemLocation::id`.
pub const ACL_MEM_LOCATION_TYPE_DEVICE: c_int = 1;
/// `ACL_MEM_HANDLE_TYPE_NONE`: a chunk with no shareable handle (the only type
/// `aclrtMallocPhysical` takes).
pub const ACL_MEM_HANDLE_TYPE_NONE: c_int = 0;
/// `ACL_MEM_ALLOCATION_TYPE_PINNED`: the only allocation type.
pub const ACL_MEM_ALLOCATION_TYPE_PINNED: c_int = 0;
/// `ACL_HBM_MEM_HUGE`: device memory in 2 MiB pages (what frameworks ask
/// `aclrtMallocPhysical` for).
pub const ACL_HBM_MEM_HUGE: aclrtMemAttr = 4;
/// `ACL_HBM_MEM_NORMAL`: device memory in normal pages.
pub const ACL_HBM_MEM_NORMAL: aclrtMemAttr = 5;
/// `ACL_HBM_MEM_HUGE1G`: device memory in 1 GiB pages.
pub const ACL_HBM_MEM_HUGE1G: aclrtMemAttr = 10;
/// `ACL_MEM_NORMAL`: normal pages, device or host by the location.
pub const ACL_MEM_NORMAL: aclrtMemAttr = 12;
/// `ACL_MEM_HUGE`: 2 MiB pages, device or host by the location.
pub const ACL_MEM_HUGE: aclrtMemAttr = 13;
/// `ACL_MEM_HUGE1G`: 1 GiB pages, device or host by the location.
pub const ACL_MEM_HUGE1G: aclrtMemAttr = 14;
/// `ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM`.
pub const ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM: aclrtMemGranularityOptions = 0;
/// `ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED`.
pub const ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED: aclrtMemGranularityOptions = 1;
/// `ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF`: refused by the runtime (207000).
pub const ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF: aclrtMemGranularityOptions = 0xFFFF;
/// `ACL_RT_MEM_ACCESS_FLAGS_NONE`.
pub const ACL_RT_MEM_ACCESS_FLAGS_NONE: aclrtMemAccessFlags = 0;
/// `ACL_RT_MEM_ACCESS_FLAGS_READ`.
pub const ACL_RT_MEM_ACCESS_FLAGS_READ: aclrtMemAccessFlags = 1;
/// `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`.
pub const ACL_RT_MEM_ACCESS_FLAGS_READWRITE: aclrtMemAccessFlags = 3;
/// `ACL_ERROR_RT_DRV_INTERNAL_ERROR`: what CANN answers for a driver failure it has no
/// code for (a mapping at an address that is not reserved, or already mapped; an unmap
/// of an address that does not start a mapping; a chunk size that is not a multiple of
/// 2 MiB).
pub const ACL_ERROR_RT_DRV_INTERNAL_ERROR: aclError = mempool_hal::code::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

/// `aclrtPhysicalMemProp`: what `aclrtMallocPhysical` creates and
/// `aclrtMemGetAllocationGranularity` asks about. 32 bytes, 8-aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtPhysicalMemProp {
    /// @0: the shareable handle type ([`ACL_MEM_HANDLE_TYPE_NONE`]).
    pub handleType: c_int,
    /// @4: the allocation type ([`ACL_MEM_ALLOCATION_TYPE_PINNED`]).
    pub allocationType: c_int,
    /// @8: the memory and page kind ([`ACL_HBM_MEM_HUGE`], ...).
    pub memAttr: aclrtMemAttr,
    /// @12: where the chunk lives.
    pub location: aclrtMemLocation,
    /// @24: must be zero.
    pub reserve: u64,
}

/// `aclrtMemAccessDesc`: one entry of `aclrtMemSetAccess`. 24 bytes, 4-aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemAccessDesc {
    /// @0: the access ([`ACL_RT_MEM_ACCESS_FLAGS_READWRITE`], ...).
    pub flags: aclrtMemAccessFlags,
    /// @4: whose access.
    pub location: aclrtMemLocation,
    /// @12: reserved.
    pub rsv: [u8; 12],
}

const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<aclrtPhysicalMemProp>() == 32);
    assert!(align_of::<aclrtPhysicalMemProp>() == 8);
    assert!(offset_of!(aclrtPhysicalMemProp, allocationType) == 4);
    assert!(offset_of!(aclrtPhysicalMemProp, memAttr) == 8);
    assert!(offset_of!(aclrtPhysicalMemProp, location) == 12);
    assert!(offset_of!(aclrtPhysicalMemProp, reserve) == 24);
    assert!(size_of::<aclrtMemAccessDesc>() == 24);
    assert!(align_of::<aclrtMemAccessDesc>() == 4);
    assert!(offset_of!(aclrtMemAccessDesc, location) == 4);
    assert!(offset_of!(aclrtMemAccessDesc, rsv) == 12);
};

impl aclrtPhysicalMemProp {
    /// Pinned device memory in 2 MiB pages on `device`, no shareable handle: what
    /// torch_npu's expandable segments ask for.
    pub fn device(device: u32) -> Self {
        aclrtPhysicalMemProp {
            handleType: ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: ACL_HBM_MEM_HUGE,
            location: aclrtMemLocation { id: device, type_: ACL_MEM_LOCATION_TYPE_DEVICE },
            reserve: 0,
        }
    }
}

impl aclrtMemAccessDesc {
    /// `flags` for the device `device`.
    pub fn device(device: u32, flags: aclrtMemAccessFlags) -> Self {
        aclrtMemAccessDesc {
            flags,
            location: aclrtMemLocation { id: device, type_: ACL_MEM_LOCATION_TYPE_DEVICE },
            rsv: [0; 12],
        }
    }
}

/// Expands the declaration table ([`for_each_acl_function!`]): the function-pointer types
/// ([`fns`]) used by the loader, the list of names and the lazy symbol slots.
macro_rules! acl_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) ; )*) => {
        /// Function-pointer types, one per C function.
        pub mod fns {
            #![allow(non_camel_case_types)]
            use super::*;
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub type $name = unsafe extern "C" fn($($arg: $ty),*) -> aclError;
            )*
        }
        /// The names of every function this project uses, in declaration order.
        pub const FUNCTION_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// One lazily resolved slot per function: `None` inside means the library lacks it.
        #[derive(Default, Debug)]
        pub struct Symbols {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: std::sync::OnceLock<Option<fns::$name>>,
            )*
            /// `aclGetRecentErrMsg`.
            pub aclGetRecentErrMsg: std::sync::OnceLock<Option<fn_aclGetRecentErrMsg>>,
            /// `aclrtGetSocName`.
            pub aclrtGetSocName: std::sync::OnceLock<Option<fn_aclrtGetSocName>>,
            /// The external-allocator registry's calls ([`AllocatorSymbols`]).
            pub allocator: AllocatorSymbols,
        }
    };
}

/// The declaration table: every C function this project uses, once, with its name and
/// parameters (each returns `aclError`). Calls `$callback! { NAME(arg: Type, ..); .. }` with
/// the whole table, so other crates can expand it too: the drop-in library checks its
/// exported functions against it at compile time. The types are written as in this module
/// (names from [`sys`](crate::sys) and `std::ffi`), so a callback that uses them must have
/// those in scope; one that only needs the names can match the parameters as `tt`s and
/// name each function's type as `mempool_ascend::sys::fns::NAME`.
///
/// `aclGetRecentErrMsg` and `aclrtGetSocName` are not in the table: they return a
/// string, not an `aclError` ([`fn_aclGetRecentErrMsg`], [`fn_aclrtGetSocName`]).
#[macro_export]
macro_rules! for_each_acl_function {
    ($callback:ident) => {
        $callback! {
            aclInit(config: *const c_char);
            aclFinalize();
            aclFinalizeReference(ref_count: *mut u64);
            aclrtSetDevice(device: i32);
            aclrtResetDevice(device: i32);
            aclrtGetDeviceCount(count: *mut u32);
            aclrtCreateContext(context: *mut aclrtContext, device: i32);
            aclrtDestroyContext(context: aclrtContext);
            aclrtSetCurrentContext(context: aclrtContext);
            aclrtGetCurrentContext(context: *mut aclrtContext);
            aclrtCreateStream(stream: *mut aclrtStream);
            aclrtDestroyStream(stream: aclrtStream);
            aclrtSynchronizeStream(stream: aclrtStream);
            aclrtSynchronizeDevice();
            aclrtCreateEvent(event: *mut aclrtEvent);
            aclrtDestroyEvent(event: aclrtEvent);
            aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream);
            aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent);
            aclrtSynchronizeEvent(event: aclrtEvent);
            aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus);
            aclrtEventElapsedTime(ms: *mut f32, start: aclrtEvent, end: aclrtEvent);
            aclrtMalloc(ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy);
            aclrtFree(ptr: *mut c_void);
            aclrtMallocHost(ptr: *mut *mut c_void, size: usize);
            aclrtFreeHost(ptr: *mut c_void);
            aclrtMemcpy(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind);
            aclrtMemcpyAsync(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream);
            aclrtMemset(ptr: *mut c_void, max_count: usize, value: i32, count: usize);
            aclrtMemsetAsync(ptr: *mut c_void, max_count: usize, value: i32, count: usize, stream: aclrtStream);
            aclrtLaunchHostFunc(stream: aclrtStream, func: aclrtHostFunc, args: *mut c_void);
            aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize);
            aclrtMemPoolCreate(pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps);
            aclrtMemPoolDestroy(pool: aclrtMemPool);
            aclrtMemPoolSetAttr(pool: aclrtMemPool, attr: aclrtMemPoolAttr, value: *mut c_void);
            aclrtMemPoolGetAttr(pool: aclrtMemPool, attr: aclrtMemPoolAttr, value: *mut c_void);
            aclrtMemPoolMallocAsync(ptr: *mut *mut c_void, size: usize, pool: aclrtMemPool, stream: aclrtStream);
            aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream);
            aclrtMemPoolTrimTo(pool: aclrtMemPool, min_bytes_to_keep: usize);
            aclrtGetRunMode(mode: *mut aclrtRunMode);
            aclrtGetDevice(device: *mut i32);
            aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32);
            aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus);
            aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64);
            aclrtDestroyStreamForce(stream: aclrtStream);
            aclrtResetDeviceForce(device: i32);
            aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32);
            aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32);
            aclrtResetEvent(event: aclrtEvent, stream: aclrtStream);
            aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32);
            aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32);
            aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64);
            aclrtMallocAlign32(ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy);
            aclrtLaunchCallback(func: aclrtCallback, user_data: *mut c_void, block_type: aclrtCallbackBlockType, stream: aclrtStream);
            aclrtSubscribeReport(thread_id: u64, stream: aclrtStream);
            aclrtProcessReport(timeout: i32);
            aclrtUnSubscribeReport(thread_id: u64, stream: aclrtStream);
            aclrtGetLastError(level: aclrtLastErrLevel);
            aclrtPeekAtLastError(level: aclrtLastErrLevel);
            // Virtual memory (contract §14).
            aclrtReserveMemAddress(virPtr: *mut *mut c_void, size: usize, alignment: usize, expectPtr: *mut c_void, flags: u64);
            aclrtReleaseMemAddress(virPtr: *mut c_void);
            aclrtMallocPhysical(handle: *mut aclrtDrvMemHandle, size: usize, prop: *const aclrtPhysicalMemProp, flags: u64);
            aclrtFreePhysical(handle: aclrtDrvMemHandle);
            aclrtMapMem(virPtr: *mut c_void, size: usize, offset: usize, handle: aclrtDrvMemHandle, flags: u64);
            aclrtUnmapMem(virPtr: *mut c_void);
            aclrtMemSetAccess(virPtr: *mut c_void, size: usize, desc: *mut aclrtMemAccessDesc, count: usize);
            aclrtMemGetAllocationGranularity(prop: *mut aclrtPhysicalMemProp, option: aclrtMemGranularityOptions, granularity: *mut usize);
            // Host registration (contract §15); optional: an older runtime lacks them.
            aclrtHostRegister(ptr: *mut c_void, size: u64, type_: aclrtHostRegisterType, dev_ptr: *mut *mut c_void);
            aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32);
            aclrtHostUnregister(ptr: *mut c_void);
            // Peer access between devices; optional as well.
            aclrtDeviceCanAccessPeer(can_access_peer: *mut i32, device: i32, peer: i32);
            aclrtDeviceEnablePeerAccess(peer: i32, flags: u32);
            aclrtDeviceDisablePeerAccess(peer: i32);
        }
    };
}
pub use crate::for_each_acl_function;

for_each_acl_function!(acl_functions);

/// `const char *aclGetRecentErrMsg(void)` (it returns a string, not an `aclError`).
pub type fn_aclGetRecentErrMsg = unsafe extern "C" fn() -> *const c_char;

/// `const char *aclrtGetSocName(void)` (it returns a string, not an `aclError`; the
/// backend does not call it).
pub type fn_aclrtGetSocName = unsafe extern "C" fn() -> *const c_char;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_convert_both_ways() {
        let p = mempool_hal::PoolProps::builder().device(3).max_size(12345).build();
        let c = aclrtMemPoolProps::from(&p);
        assert_eq!((c.location.id, c.location.type_, c.maxSize), (3, 1, 12345));
        assert_eq!(mempool_hal::PoolProps::from(&c), p);
        assert!(FUNCTION_NAMES.contains(&"aclrtMemPoolTrimTo"));
        assert_eq!(FUNCTION_NAMES.len(), 72);
    }
}
