//! The CANN-compatible headers in `include/acl/` against the library they describe.
//!
//! One C11 and one C++17 program include `acl/acl.h` and `acl/acl_rt_memory_soma.h` with
//! every warning an error. Both hold static assertions generated from the Rust side: the
//! size, alignment and field offsets of every struct (`mempool_ascend::sys`), every enum
//! value and constant (`sys`, `mempool_hal::code`, the attribute table), and a pointer of
//! the exact expected type to every exported function. The C program is linked against the
//! built `libacl_rt.so` and run. The names the headers declare are compared, both ways, with
//! the `#[unsafe(no_mangle)]` functions of `src/exports/`, whose Rust signatures must
//! translate to the prototypes expected here.
//!
//! A missing C or C++ compiler fails the test: it is not skipped.
//!
//! The rules it checks: contract §8 (`mempool_hal::contract::c_abi`).

use mempool_ascend::sys::{
    ACL_CALLBACK_BLOCK, ACL_CALLBACK_NO_BLOCK, ACL_CONTINUE_ON_FAILURE, ACL_DEVICE, ACL_ERROR_INVALID_FILE,
    ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_MEMORY_TYPE, ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE, ACL_ERROR_RT_THREAD_SUBSCRIBE, ACL_EVENT_CAPTURE_STREAM_PROGRESS,
    ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE,
    ACL_HBM_MEM, ACL_HOST, ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST, ACL_RT_THREAD_LEVEL,
    ACL_STOP_ON_FAILURE, ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT,
    ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY, aclrtMemLocation, aclrtMemPoolProps,
};
use mempool_ascend::sys::{
    ACL_ERROR_RT_DRV_INTERNAL_ERROR, ACL_HOST_REG_IOMEMORY, ACL_HOST_REG_MAPPED, ACL_HOST_REG_PINNED,
    ACL_HOST_REG_READONLY, ACL_HOST_REGISTER_IOMEMORY, ACL_HOST_REGISTER_MAPPED, ACL_HOST_REGISTER_READONLY,
    ACL_RT_MEM_ACCESS_FLAGS_NONE, ACL_RT_MEM_ACCESS_FLAGS_READ, ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF,
    aclrtMemAccessDesc, aclrtPhysicalMemProp,
};
use mempool_hal::{AllocationType, HandleType, LocationType, attr::ATTRIBUTES, code};
use std::collections::BTreeSet;
use std::ffi::c_int;
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

const CRATE: &str = env!("CARGO_MANIFEST_DIR");
const HEADERS: [&str; 6] =
    ["acl.h", "acl_base.h", "acl_base_rt.h", "acl_rt.h", "acl_rt_allocator.h", "acl_rt_memory_soma.h"];

/// Every exported function as CANN declares it: name, return type, parameter types.
const PROTOTYPES: &[(&str, &str, &str)] = &[
    ("aclInit", "aclError", "const char *"),
    ("aclFinalize", "aclError", "void"),
    ("aclFinalizeReference", "aclError", "uint64_t *"),
    ("aclGetRecentErrMsg", "const char *", "void"),
    ("aclrtSetDevice", "aclError", "int32_t"),
    ("aclrtResetDevice", "aclError", "int32_t"),
    ("aclrtGetDeviceCount", "aclError", "uint32_t *"),
    ("aclrtCreateContext", "aclError", "aclrtContext *, int32_t"),
    ("aclrtDestroyContext", "aclError", "aclrtContext"),
    ("aclrtSetCurrentContext", "aclError", "aclrtContext"),
    ("aclrtGetCurrentContext", "aclError", "aclrtContext *"),
    ("aclrtCreateStream", "aclError", "aclrtStream *"),
    ("aclrtDestroyStream", "aclError", "aclrtStream"),
    ("aclrtSynchronizeStream", "aclError", "aclrtStream"),
    ("aclrtSynchronizeDevice", "aclError", "void"),
    ("aclrtCreateEvent", "aclError", "aclrtEvent *"),
    ("aclrtDestroyEvent", "aclError", "aclrtEvent"),
    ("aclrtRecordEvent", "aclError", "aclrtEvent, aclrtStream"),
    ("aclrtStreamWaitEvent", "aclError", "aclrtStream, aclrtEvent"),
    ("aclrtSynchronizeEvent", "aclError", "aclrtEvent"),
    ("aclrtQueryEventStatus", "aclError", "aclrtEvent, aclrtEventRecordedStatus *"),
    ("aclrtEventElapsedTime", "aclError", "float *, aclrtEvent, aclrtEvent"),
    ("aclrtMalloc", "aclError", "void **, size_t, aclrtMemMallocPolicy"),
    ("aclrtFree", "aclError", "void *"),
    ("aclrtMallocHost", "aclError", "void **, size_t"),
    ("aclrtFreeHost", "aclError", "void *"),
    ("aclrtMemcpy", "aclError", "void *, size_t, const void *, size_t, aclrtMemcpyKind"),
    ("aclrtMemcpyAsync", "aclError", "void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream"),
    ("aclrtMemset", "aclError", "void *, size_t, int32_t, size_t"),
    ("aclrtMemsetAsync", "aclError", "void *, size_t, int32_t, size_t, aclrtStream"),
    ("aclrtLaunchHostFunc", "aclError", "aclrtStream, aclrtHostFunc, void *"),
    ("aclrtGetMemInfo", "aclError", "aclrtMemAttr, size_t *, size_t *"),
    ("aclrtMemPoolCreate", "aclError", "aclrtMemPool *, const aclrtMemPoolProps *"),
    ("aclrtMemPoolDestroy", "aclError", "aclrtMemPool"),
    ("aclrtMemPoolSetAttr", "aclError", "aclrtMemPool, aclrtMemPoolAttr, void *"),
    ("aclrtMemPoolGetAttr", "aclError", "aclrtMemPool, aclrtMemPoolAttr, void *"),
    ("aclrtMemPoolMallocAsync", "aclError", "void **, size_t, aclrtMemPool, aclrtStream"),
    ("aclrtMemPoolFreeAsync", "aclError", "void *, aclrtStream"),
    ("aclrtMemPoolTrimTo", "aclError", "aclrtMemPool, size_t"),
    ("aclrtGetRunMode", "aclError", "aclrtRunMode *"),
    ("aclrtGetDevice", "aclError", "int32_t *"),
    ("aclrtGetVersion", "aclError", "int32_t *, int32_t *, int32_t *"),
    ("aclrtGetSocName", "const char *", "void"),
    ("aclrtStreamQuery", "aclError", "aclrtStream, aclrtStreamStatus *"),
    ("aclrtSetStreamFailureMode", "aclError", "aclrtStream, uint64_t"),
    ("aclrtDestroyStreamForce", "aclError", "aclrtStream"),
    ("aclrtResetDeviceForce", "aclError", "int32_t"),
    ("aclrtCreateStreamWithConfig", "aclError", "aclrtStream *, uint32_t, uint32_t"),
    ("aclrtCreateEventWithFlag", "aclError", "aclrtEvent *, uint32_t"),
    ("aclrtResetEvent", "aclError", "aclrtEvent, aclrtStream"),
    ("aclrtSynchronizeStreamWithTimeout", "aclError", "aclrtStream, int32_t"),
    ("aclrtSynchronizeEventWithTimeout", "aclError", "aclrtEvent, int32_t"),
    ("aclrtEventGetTimestamp", "aclError", "aclrtEvent, uint64_t *"),
    ("aclrtMallocAlign32", "aclError", "void **, size_t, aclrtMemMallocPolicy"),
    ("aclrtLaunchCallback", "aclError", "aclrtCallback, void *, aclrtCallbackBlockType, aclrtStream"),
    ("aclrtSubscribeReport", "aclError", "uint64_t, aclrtStream"),
    ("aclrtProcessReport", "aclError", "int32_t"),
    ("aclrtUnSubscribeReport", "aclError", "uint64_t, aclrtStream"),
    ("aclrtGetLastError", "aclError", "aclrtLastErrLevel"),
    ("aclrtPeekAtLastError", "aclError", "aclrtLastErrLevel"),
    // The external-allocator registry (acl/acl_rt_allocator.h).
    ("aclrtAllocatorCreateDesc", "aclrtAllocatorDesc", "void"),
    ("aclrtAllocatorDestroyDesc", "aclError", "aclrtAllocatorDesc"),
    ("aclrtAllocatorSetObjToDesc", "aclError", "aclrtAllocatorDesc, aclrtAllocator"),
    ("aclrtAllocatorSetAllocFuncToDesc", "aclError", "aclrtAllocatorDesc, aclrtAllocatorAllocFunc"),
    ("aclrtAllocatorSetFreeFuncToDesc", "aclError", "aclrtAllocatorDesc, aclrtAllocatorFreeFunc"),
    ("aclrtAllocatorSetAllocAdviseFuncToDesc", "aclError", "aclrtAllocatorDesc, aclrtAllocatorAllocAdviseFunc"),
    (
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        "aclError",
        "aclrtAllocatorDesc, aclrtAllocatorGetAddrFromBlockFunc",
    ),
    ("aclrtAllocatorRegister", "aclError", "aclrtStream, aclrtAllocatorDesc"),
    ("aclrtAllocatorUnregister", "aclError", "aclrtStream"),
    (
        "aclrtAllocatorGetByStream",
        "aclError",
        "aclrtStream, aclrtAllocatorDesc *, aclrtAllocator *, aclrtAllocatorAllocFunc *, aclrtAllocatorFreeFunc *, \
         aclrtAllocatorAllocAdviseFunc *, aclrtAllocatorGetAddrFromBlockFunc *",
    ),
    // Virtual memory.
    ("aclrtReserveMemAddress", "aclError", "void **, size_t, size_t, void *, uint64_t"),
    ("aclrtReleaseMemAddress", "aclError", "void *"),
    ("aclrtMallocPhysical", "aclError", "aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t"),
    ("aclrtFreePhysical", "aclError", "aclrtDrvMemHandle"),
    ("aclrtMapMem", "aclError", "void *, size_t, size_t, aclrtDrvMemHandle, uint64_t"),
    ("aclrtUnmapMem", "aclError", "void *"),
    ("aclrtMemSetAccess", "aclError", "void *, size_t, aclrtMemAccessDesc *, size_t"),
    ("aclrtMemGetAllocationGranularity", "aclError", "aclrtPhysicalMemProp *, aclrtMemGranularityOptions, size_t *"),
    // Host registration (contract §15).
    ("aclrtHostRegister", "aclError", "void *, uint64_t, aclrtHostRegisterType, void **"),
    ("aclrtHostRegisterV2", "aclError", "void *, uint64_t, uint32_t"),
    ("aclrtHostUnregister", "aclError", "void *"),
];

/// The enum types of the ABI: all int-sized, as the Rust side's `c_int` aliases.
const ENUMS: [&str; 15] = [
    "aclrtMemcpyKind",
    "aclrtMemMallocPolicy",
    "aclrtMemAttr",
    "aclrtEventRecordedStatus",
    "aclrtMemLocationType",
    "aclrtMemAllocationType",
    "aclrtMemHandleType",
    "aclrtMemPoolAttr",
    "aclrtRunMode",
    "aclrtStreamStatus",
    "aclrtCallbackBlockType",
    "aclrtLastErrLevel",
    "aclrtMemGranularityOptions",
    "aclrtMemAccessFlags",
    "aclrtHostRegisterType",
];

/// The size of a field, named by a projection.
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// One struct field: struct, field, offset, size, C type.
struct Field(&'static str, &'static str, usize, usize, &'static str);

#[path = "headers_parts/vmm.rs"]
mod vmm;

#[path = "headers_parts/failures.rs"]
mod failures;

#[path = "headers_parts/queries.rs"]
mod queries;

fn fields() -> Vec<Field> {
    type L = aclrtMemLocation;
    type P = aclrtMemPoolProps;
    let mut out = vec![
        Field("aclrtMemLocation", "id", offset_of!(L, id), field_size(|l: &L| &l.id), "uint32_t"),
        Field("aclrtMemLocation", "type", offset_of!(L, type_), field_size(|l: &L| &l.type_), "aclrtMemLocationType"),
        Field(
            "aclrtMemPoolProps",
            "allocType",
            offset_of!(P, allocType),
            field_size(|p: &P| &p.allocType),
            "aclrtMemAllocationType",
        ),
        Field(
            "aclrtMemPoolProps",
            "handleType",
            offset_of!(P, handleType),
            field_size(|p: &P| &p.handleType),
            "aclrtMemHandleType",
        ),
        Field(
            "aclrtMemPoolProps",
            "location",
            offset_of!(P, location),
            field_size(|p: &P| &p.location),
            "aclrtMemLocation",
        ),
        Field("aclrtMemPoolProps", "maxSize", offset_of!(P, maxSize), field_size(|p: &P| &p.maxSize), "size_t"),
        Field(
            "aclrtMemPoolProps",
            "reserved",
            offset_of!(P, reserved),
            field_size(|p: &P| &p.reserved),
            "unsigned char[32]",
        ),
    ];
    out.extend(vmm::fields());
    out.extend(failures::fields());
    out.extend(queries::fields());
    out
}

/// Every struct: name, size, alignment.
fn structs() -> Vec<(&'static str, usize, usize)> {
    let mut out = vec![
        ("aclrtMemLocation", size_of::<aclrtMemLocation>(), align_of::<aclrtMemLocation>()),
        ("aclrtMemPoolProps", size_of::<aclrtMemPoolProps>(), align_of::<aclrtMemPoolProps>()),
        ("aclrtPhysicalMemProp", size_of::<aclrtPhysicalMemProp>(), align_of::<aclrtPhysicalMemProp>()),
        ("aclrtMemAccessDesc", size_of::<aclrtMemAccessDesc>(), align_of::<aclrtMemAccessDesc>()),
    ];
    out.extend(failures::structs());
    out.extend(queries::structs());
    out
}

/// Every enum value and constant the headers define, with its value: from the Rust side
/// where it has one, else CANN's.
fn constants() -> Vec<(String, i64)> {
    let mut c: Vec<(String, i64)> = [
        ("ACL_SUCCESS", code::ACL_SUCCESS),
        ("ACL_ERROR_NONE", code::ACL_SUCCESS),
        ("ACL_ERROR_INVALID_PARAM", code::ACL_ERROR_INVALID_PARAM),
        ("ACL_ERROR_REPEAT_INITIALIZE", ACL_ERROR_REPEAT_INITIALIZE),
        ("ACL_ERROR_INVALID_FILE", ACL_ERROR_INVALID_FILE),
        ("ACL_ERROR_REPEAT_FINALIZE", ACL_ERROR_REPEAT_FINALIZE),
        ("ACL_ERROR_COMPILING_STUB_MODE", code::ACL_ERROR_COMPILING_STUB_MODE),
        ("ACL_ERROR_RT_PARAM_INVALID", code::ACL_ERROR_RT_PARAM_INVALID),
        ("ACL_ERROR_RT_INVALID_DEVICEID", code::ACL_ERROR_RT_INVALID_DEVICEID),
        ("ACL_ERROR_RT_CONTEXT_NULL", code::ACL_ERROR_RT_CONTEXT_NULL),
        ("ACL_ERROR_RT_STREAM_CONTEXT", code::ACL_ERROR_RT_STREAM_CONTEXT),
        ("ACL_ERROR_RT_STREAM_SUBSCRIBE", ACL_ERROR_RT_STREAM_SUBSCRIBE),
        ("ACL_ERROR_RT_THREAD_SUBSCRIBE", ACL_ERROR_RT_THREAD_SUBSCRIBE),
        ("ACL_ERROR_RT_STREAM_NO_CB_REG", ACL_ERROR_RT_STREAM_NO_CB_REG),
        ("ACL_ERROR_RT_INVALID_HANDLE", code::ACL_ERROR_RT_INVALID_HANDLE),
        ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT", code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        ("ACL_ERROR_RT_MEMORY_ALLOCATION", code::ACL_ERROR_RT_MEMORY_ALLOCATION),
        ("ACL_ERROR_RT_INTERNAL_ERROR", code::ACL_ERROR_RT_INTERNAL_ERROR),
        ("ACL_ERROR_RT_CONTEXT_RELEASE_ERROR", ACL_ERROR_RT_CONTEXT_RELEASE_ERROR),
        ("ACL_ERROR_RT_REPORT_TIMEOUT", ACL_ERROR_RT_REPORT_TIMEOUT),
        ("ACL_ERROR_RT_INVALID_MEMORY_TYPE", ACL_ERROR_RT_INVALID_MEMORY_TYPE),
        ("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT),
        ("ACL_ERROR_RT_EVENT_SYNC_TIMEOUT", code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
        ("ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED", code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED),
        ("ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED", code::ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED),
        ("ACL_HOST_REGISTER_MAPPED", ACL_HOST_REGISTER_MAPPED),
        ("ACL_HOST_REGISTER_IOMEMORY", ACL_HOST_REGISTER_IOMEMORY),
        ("ACL_HOST_REGISTER_READONLY", ACL_HOST_REGISTER_READONLY),
        ("ACL_MEMCPY_HOST_TO_HOST", ACL_MEMCPY_HOST_TO_HOST),
        ("ACL_MEMCPY_HOST_TO_DEVICE", ACL_MEMCPY_HOST_TO_DEVICE),
        ("ACL_MEMCPY_DEVICE_TO_HOST", ACL_MEMCPY_DEVICE_TO_HOST),
        ("ACL_MEMCPY_DEVICE_TO_DEVICE", ACL_MEMCPY_DEVICE_TO_DEVICE),
        ("ACL_MEMCPY_DEFAULT", ACL_MEMCPY_DEFAULT),
        ("ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE", 5),
        ("ACL_MEMCPY_INNER_DEVICE_TO_DEVICE", 6),
        ("ACL_MEMCPY_INTER_DEVICE_TO_DEVICE", 7),
        ("ACL_MEM_MALLOC_HUGE_FIRST", ACL_MEM_MALLOC_HUGE_FIRST),
        ("ACL_MEM_MALLOC_HUGE_ONLY", 1),
        ("ACL_MEM_MALLOC_NORMAL_ONLY", 2),
        ("ACL_MEM_MALLOC_HUGE_FIRST_P2P", 3),
        ("ACL_MEM_MALLOC_HUGE_ONLY_P2P", 4),
        ("ACL_MEM_MALLOC_NORMAL_ONLY_P2P", 5),
        ("ACL_MEM_MALLOC_HUGE1G_ONLY", 6),
        ("ACL_MEM_MALLOC_HUGE1G_ONLY_P2P", 7),
        ("ACL_MEM_TYPE_LOW_BAND_WIDTH", 0x100),
        ("ACL_MEM_TYPE_HIGH_BAND_WIDTH", 0x1000),
        ("ACL_MEM_ACCESS_USER_SPACE_READONLY", 0x10_0000),
        ("ACL_DDR_MEM", 0),
        ("ACL_HBM_MEM", ACL_HBM_MEM),
        ("ACL_DDR_MEM_HUGE", 2),
        ("ACL_DDR_MEM_NORMAL", 3),
        ("ACL_HBM_MEM_HUGE", 4),
        ("ACL_HBM_MEM_NORMAL", 5),
        ("ACL_DDR_MEM_P2P_HUGE", 6),
        ("ACL_DDR_MEM_P2P_NORMAL", 7),
        ("ACL_HBM_MEM_P2P_HUGE", 8),
        ("ACL_HBM_MEM_P2P_NORMAL", 9),
        ("ACL_HBM_MEM_HUGE1G", 10),
        ("ACL_HBM_MEM_P2P_HUGE1G", 11),
        ("ACL_MEM_NORMAL", 12),
        ("ACL_MEM_HUGE", 13),
        ("ACL_MEM_HUGE1G", 14),
        ("ACL_MEM_P2P_NORMAL", 15),
        ("ACL_MEM_P2P_HUGE", 16),
        ("ACL_MEM_P2P_HUGE1G", 17),
        ("ACL_EVENT_RECORDED_STATUS_NOT_READY", ACL_EVENT_RECORDED_STATUS_NOT_READY),
        ("ACL_EVENT_RECORDED_STATUS_COMPLETE", ACL_EVENT_RECORDED_STATUS_COMPLETE),
        ("ACL_MEM_LOCATION_TYPE_HOST", LocationType::HOST.0),
        ("ACL_MEM_LOCATION_TYPE_DEVICE", LocationType::DEVICE.0),
        ("ACL_MEM_LOCATION_TYPE_UNREGISTERED", 2),
        ("ACL_MEM_LOCATION_TYPE_MANAGED", 3),
        ("ACL_MEM_LOCATION_TYPE_HOST_NUMA", 4),
        ("ACL_MEM_ALLOCATION_TYPE_PINNED", AllocationType::PINNED.0),
        ("ACL_MEM_HANDLE_TYPE_NONE", HandleType::NONE.0),
        ("ACL_MEM_HANDLE_TYPE_POSIX", HandleType::POSIX.0),
        ("ACL_DEVICE", ACL_DEVICE),
        ("ACL_HOST", ACL_HOST),
        ("ACL_STREAM_STATUS_COMPLETE", ACL_STREAM_STATUS_COMPLETE),
        ("ACL_STREAM_STATUS_NOT_READY", ACL_STREAM_STATUS_NOT_READY),
        ("ACL_STREAM_STATUS_RESERVED", 0xFFFF),
        ("ACL_CALLBACK_NO_BLOCK", ACL_CALLBACK_NO_BLOCK),
        ("ACL_CALLBACK_BLOCK", ACL_CALLBACK_BLOCK),
        ("ACL_RT_THREAD_LEVEL", ACL_RT_THREAD_LEVEL),
        // Virtual memory.
        ("ACL_ERROR_RT_DRV_INTERNAL_ERROR", ACL_ERROR_RT_DRV_INTERNAL_ERROR),
        ("ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM", ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM),
        ("ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED", ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED),
        ("ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF", ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF),
        ("ACL_RT_MEM_ACCESS_FLAGS_NONE", ACL_RT_MEM_ACCESS_FLAGS_NONE),
        ("ACL_RT_MEM_ACCESS_FLAGS_READ", ACL_RT_MEM_ACCESS_FLAGS_READ),
        ("ACL_RT_MEM_ACCESS_FLAGS_READWRITE", ACL_RT_MEM_ACCESS_FLAGS_READWRITE),
        // The version of CANN's API the headers follow.
        ("ACL_MAJOR_VERSION", 1),
        ("ACL_MINOR_VERSION", 17),
        ("ACL_PATCH_VERSION", 0),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), i64::from(v)))
    .collect();
    // The unsigned flag and mode macros.
    for (n, v) in [
        ("ACL_EVENT_SYNC", ACL_EVENT_SYNC),
        ("ACL_EVENT_CAPTURE_STREAM_PROGRESS", ACL_EVENT_CAPTURE_STREAM_PROGRESS),
        ("ACL_EVENT_TIME_LINE", ACL_EVENT_TIME_LINE),
        ("ACL_STREAM_FAST_LAUNCH", ACL_STREAM_FAST_LAUNCH),
        ("ACL_STREAM_FAST_SYNC", ACL_STREAM_FAST_SYNC),
        ("ACL_STREAM_PERSISTENT", ACL_STREAM_PERSISTENT),
        ("ACL_STREAM_HUGE", ACL_STREAM_HUGE),
        ("ACL_HOST_REG_MAPPED", ACL_HOST_REG_MAPPED),
        ("ACL_HOST_REG_IOMEMORY", ACL_HOST_REG_IOMEMORY),
        ("ACL_HOST_REG_READONLY", ACL_HOST_REG_READONLY),
        ("ACL_HOST_REG_PINNED", ACL_HOST_REG_PINNED),
        // Flags the library accepts and ignores, with CANN's values.
        ("ACL_EVENT_DEVICE_USE_ONLY", 0x10),
        ("ACL_EVENT_EXTERNAL", 0x20),
        ("ACL_EVENT_IPC", 0x40),
        ("ACL_STREAM_CPU_SCHEDULE", 0x10),
        ("ACL_STREAM_DEVICE_USE_ONLY", 0x20),
    ] {
        c.push((n.to_string(), i64::from(v)));
    }
    for (n, v) in [("ACL_CONTINUE_ON_FAILURE", ACL_CONTINUE_ON_FAILURE), ("ACL_STOP_ON_FAILURE", ACL_STOP_ON_FAILURE)] {
        c.push((n.to_string(), i64::try_from(v).expect("a small mode value")));
    }
    // The pool attributes, from the attribute table: the reuse flags keep CANN's shorter prefix.
    for a in ATTRIBUTES {
        let prefix = if a.name.starts_with("REUSE_") { "ACL_RT_MEM_POOL_" } else { "ACL_RT_MEM_POOL_ATTR_" };
        c.push((format!("{prefix}{}", a.name), i64::from(a.id.0)));
    }
    c.extend(failures::constants());
    c.extend(queries::constants());
    c
}

/// Every prototype: the core's and each part's.
fn prototypes() -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
    PROTOTYPES.iter().chain(failures::PROTOTYPES).chain(queries::PROTOTYPES)
}

/// Every enum type: the core's and each part's.
fn enums() -> impl Iterator<Item = &'static str> {
    ENUMS.iter().chain(failures::ENUMS.iter()).chain(queries::ENUMS.iter()).copied()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn headers() -> Vec<(&'static str, String)> {
    HEADERS.iter().map(|h| (*h, read(&Path::new(CRATE).join("include/acl").join(h)))).collect()
}

fn identifiers(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices().chain([(line.len(), ' ')]) {
        let word = ch.is_ascii_alphanumeric() || ch == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Names of the functions a header declares: on a line that starts a declaration (a letter
/// first), an `acl...` identifier followed by `(`.
fn declared_functions(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic())) {
        for (at, id) in identifiers(line) {
            if id.starts_with("acl") && line[at + id.len()..].trim_start().starts_with('(') {
                names.push(id.to_string());
            }
        }
    }
    names
}

/// The enumerators and `#define` constants a header defines.
fn defined_constants(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("#define ") {
            let name = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
            if name.starts_with("ACL_") {
                names.push(name.to_string());
            }
        } else if t.starts_with("ACL_") && t.contains(" = ") {
            names.push(t.split(' ').next().unwrap_or("").to_string());
        }
    }
    names
}

/// The `typedef enum` and `typedef struct` blocks of a header: (kind, name, field names).
fn typedef_blocks(text: &str) -> Vec<(&'static str, String, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(&'static str, Vec<String>)> = None;
    for line in text.lines() {
        if line.starts_with("typedef enum") && line.ends_with('{') {
            open = Some(("enum", Vec::new()));
        } else if line.starts_with("typedef struct") && line.ends_with('{') {
            open = Some(("struct", Vec::new()));
        } else if let Some(rest) = line.strip_prefix('}').filter(|_| open.is_some()) {
            let (kind, fields) = open.take().expect("checked just above");
            out.push((kind, rest.trim().trim_end_matches(';').to_string(), fields));
        } else if let Some((kind, fields)) = open.as_mut() {
            let code = line.split("/*").next().unwrap_or("").trim();
            if *kind == "struct" && code.ends_with(';') {
                let decl = code.trim_end_matches(';').split('[').next().unwrap_or("");
                let (_, name) = *identifiers(decl).last().expect("a field has a name");
                fields.push(name.to_string());
            }
        }
    }
    assert!(open.is_none(), "an unclosed typedef block");
    out
}

/// The `#[unsafe(no_mangle)]` functions of the files of `src/exports/`: name, return type,
/// Rust parameter types.
fn exported_functions() -> Vec<(String, String, Vec<String>)> {
    let dir = Path::new(CRATE).join("src/exports");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let src: String = files.iter().map(|f| read(f) + "\n").collect();
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "#[unsafe(no_mangle)]" {
            continue;
        }
        // The signature runs from the next line to the opening brace of the body.
        let end = i + 1 + lines[i + 1..].iter().position(|l| l.ends_with('{')).expect("a function body");
        let sig = lines[i + 1..=end].iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        let rest = sig
            .strip_prefix("pub unsafe extern \"C\" fn ")
            .unwrap_or_else(|| panic!("a no_mangle item is not a `pub unsafe extern \"C\" fn`: {sig}"));
        let (name, rest) = rest.split_once('(').expect("a parameter list");
        let (params, ret) = rest.rsplit_once(')').expect("a closed parameter list");
        let ret = ret.trim().strip_prefix("->").expect("a return type").trim_end_matches('{').trim().to_string();
        let params = params
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once(':').expect("name: type").1.trim().to_string())
            .collect();
        out.push((name.trim().to_string(), ret, params));
    }
    let extern_fns = src.matches("extern \"C\" fn ").count();
    assert_eq!(out.len(), extern_fns, "every extern \"C\" fn of src/exports/ is #[unsafe(no_mangle)]");
    out
}

/// A Rust FFI type of an export as a C type, in the spelling of [`PROTOTYPES`].
fn c_type(rust: &str) -> String {
    let mut t = rust.trim();
    let mut stars = 0;
    let mut innermost_const = false;
    loop {
        if let Some(r) = t.strip_prefix("*mut ") {
            innermost_const = false;
            t = r;
        } else if let Some(r) = t.strip_prefix("*const ") {
            innermost_const = true;
            t = r;
        } else {
            break;
        }
        stars += 1;
    }
    let base = match t {
        "c_char" => "char",
        "c_void" => "void",
        "i32" => "int32_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i64" => "int64_t",
        "u16" => "uint16_t",
        "usize" => "size_t",
        "f32" => "float",
        acl if acl.starts_with("acl") => acl,
        other => panic!("no C spelling for the Rust type `{other}`"),
    };
    let base = if innermost_const { format!("const {base}") } else { base.to_string() };
    if stars == 0 { base } else { format!("{base} {}", "*".repeat(stars)) }
}

/// The checks shared by the C and the C++ program, as static assertions and pointer
/// initializations; returns the text and the number of static assertions.
fn checks() -> (String, usize) {
    let mut s = String::new();
    let mut n = 0;
    let mut sa = |s: &mut String, cond: String| {
        writeln!(s, "SA({cond});").unwrap();
        n += 1;
    };
    for (name, size, align) in structs() {
        sa(&mut s, format!("sizeof({name}) == {size}"));
        sa(&mut s, format!("ALIGNOF({name}) == {align}"));
    }
    for Field(st, f, off, size, _) in fields() {
        sa(&mut s, format!("offsetof({st}, {f}) == {off}"));
        sa(&mut s, format!("sizeof((({st} *)0)->{f}) == {size}"));
    }
    for e in enums() {
        sa(&mut s, format!("sizeof({e}) == {}", size_of::<c_int>()));
    }
    for (name, value) in constants() {
        sa(&mut s, format!("{name} == {value}"));
    }
    (s, n)
}

/// Pointers of the exact expected type to every exported function, inside a function body.
fn prototype_checks() -> String {
    let mut s = String::new();
    for (name, ret, params) in prototypes() {
        writeln!(s, "    {ret} (*const p_{name})({params}) = {name};\n    (void)p_{name};").unwrap();
    }
    s
}

const PRELUDE: &str = "#include <acl/acl.h>\n#include <acl/acl_rt_memory_soma.h>\n";

fn c_program(checks: &str) -> String {
    format!(
        r#"{PRELUDE}#include <stdio.h>
#include <string.h>

#define SA(c) _Static_assert(c, #c)
#define ALIGNOF(t) _Alignof(t)
{checks}
static void check_prototypes(void) {{
{protos}}}

#define CHECK(call)                                                                        \
    do {{                                                                                   \
        aclError e_ = (call);                                                              \
        if (e_ != ACL_SUCCESS) {{                                                           \
            const char *m_ = aclGetRecentErrMsg(); /* NULL when nothing to report */      \
            printf("%s returned %d: %s\n", #call, e_, m_ != NULL ? m_ : "(none)");         \
            return 1;                                                                      \
        }}                                                                                  \
    }} while (0)

int main(void) {{
    check_prototypes();
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 4u << 20;
    aclrtMemPool pool = NULL;
    CHECK(aclrtMemPoolCreate(&pool, &props));
    void *dev = NULL;
    unsigned char host[256];
    CHECK(aclrtMemPoolMallocAsync(&dev, 1u << 20, pool, stream));
    CHECK(aclrtMemsetAsync(dev, 1u << 20, 0x5a, sizeof host, stream));
    CHECK(aclrtMemcpyAsync(host, sizeof host, dev, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtMemPoolFreeAsync(dev, stream));
    CHECK(aclrtSynchronizeStream(stream));
    uint64_t used = 1;
    CHECK(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &used));
    size_t same = 0;
    for (size_t i = 0; i < sizeof host; i++) {{
        same += host[i] == 0x5a;
    }}
    CHECK(aclrtMemPoolDestroy(pool));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("headers: pool ok, %zu of %zu bytes set, %llu bytes used after free\n", same, sizeof host,
           (unsigned long long)used);
    return 0;
}}
"#,
        protos = prototype_checks(),
    )
}

fn cpp_program(checks: &str) -> String {
    let mut types = String::new();
    let same = |t: &mut String, a: &str, b: &str| {
        writeln!(t, "static_assert(std::is_same<{a}, {b}>::value, \"{a} is {b}\");").unwrap();
    };
    same(&mut types, "aclError", "int");
    for h in [
        "aclrtStream",
        "aclrtEvent",
        "aclrtContext",
        "aclrtMemPool",
        "aclrtAllocatorDesc",
        "aclrtAllocator",
        "aclrtAllocatorBlock",
        "aclrtAllocatorAddr",
        "aclrtDrvMemHandle",
    ] {
        same(&mut types, h, "void *");
    }
    same(&mut types, "aclrtAllocatorAllocFunc", "void *(*)(void *, size_t)");
    same(&mut types, "aclrtAllocatorFreeFunc", "void (*)(void *, void *)");
    same(&mut types, "aclrtAllocatorAllocAdviseFunc", "void *(*)(void *, size_t, void *)");
    same(&mut types, "aclrtAllocatorGetAddrFromBlockFunc", "void *(*)(void *)");
    same(&mut types, "aclrtHostFunc", "void (*)(void *)");
    same(&mut types, "aclrtCallback", "void (*)(void *)");
    for Field(st, f, _, _, ty) in fields() {
        same(&mut types, &format!("decltype({st}::{f})"), ty);
    }
    format!(
        "{PRELUDE}#include <type_traits>\n\n#define SA(c) static_assert(c, #c)\n#define ALIGNOF(t) alignof(t)\n\
         {checks}\n{types}\nint main() {{\n{protos}    return 0;\n}}\n",
        protos = prototype_checks(),
    )
}

fn compiler(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

fn compile(compiler: &str, args: &[&str], src: &Path, out: &Path, extra: &[String]) {
    let output = Command::new(compiler)
        .args(args)
        .args(["-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I", &format!("{CRATE}/include")])
        .arg(src)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("the compiler `{compiler}` could not run (it is required, not optional): {e}"));
    assert!(
        output.status.success(),
        "{compiler} {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `target/<profile>/deps/libacl_rt.so`, next to this test binary.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libacl_rt.so");
    assert!(lib.exists(), "{} is missing: the crate's cdylib was not built", lib.display());
    lib
}

#[test]
fn the_headers_declare_exactly_what_the_library_exports() {
    let exported = exported_functions();
    let exported_names: BTreeSet<String> = exported.iter().map(|(n, _, _)| n.clone()).collect();
    let mut declared = Vec::new();
    for (_, text) in headers() {
        declared.extend(declared_functions(&text));
    }
    let declared_names: BTreeSet<String> = declared.iter().cloned().collect();
    assert_eq!(declared.len(), declared_names.len(), "a function is declared twice: {declared:?}");
    let missing: Vec<_> = exported_names.difference(&declared_names).collect();
    let extra: Vec<_> = declared_names.difference(&exported_names).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "exported but not declared: {missing:?}; declared but not exported: {extra:?}"
    );
    assert_eq!(exported_names.len(), 130);

    // The expected prototypes are the exported Rust signatures, spelled in C.
    let expected: BTreeSet<_> = prototypes().map(|(n, r, p)| (n.to_string(), r.to_string(), p.to_string())).collect();
    let from_rust: BTreeSet<_> = exported
        .iter()
        .map(|(n, r, p)| {
            let params = if p.is_empty() {
                "void".to_string()
            } else {
                p.iter().map(|t| c_type(t)).collect::<Vec<_>>().join(", ")
            };
            (n.clone(), c_type(r), params)
        })
        .collect();
    let diff: Vec<_> = expected.symmetric_difference(&from_rust).collect();
    assert!(diff.is_empty(), "prototypes and export signatures differ: {diff:?}");
}

#[test]
fn every_type_and_constant_the_headers_define_is_checked() {
    let texts = headers();
    let mut consts = BTreeSet::new();
    let mut enums = BTreeSet::new();
    let mut struct_fields = BTreeSet::new();
    for (_, text) in &texts {
        consts.extend(defined_constants(text));
        for (kind, name, fields) in typedef_blocks(text) {
            if kind == "enum" {
                enums.insert(name);
            } else {
                struct_fields.extend(fields.into_iter().map(|f| (name.clone(), f)));
            }
        }
    }
    let expected: BTreeSet<String> = constants().into_iter().map(|(n, _)| n).collect();
    assert_eq!(consts, expected, "the constants the headers define and the ones checked");
    assert_eq!(enums, self::enums().map(str::to_string).collect(), "the enum types");
    let checked: BTreeSet<_> = fields().into_iter().map(|Field(s, f, ..)| (s.to_string(), f.to_string())).collect();
    assert_eq!(struct_fields, checked, "the struct fields");
}

#[test]
fn c_and_cpp_programs_compile_against_the_headers_and_the_c_one_runs_on_the_library() {
    let lib = library();
    let lib_dir = lib.parent().expect("the library has a folder");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acl-headers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let (checks, asserts) = checks();

    let cpp = dir.join("headers.cpp");
    std::fs::write(&cpp, cpp_program(&checks)).expect("write the C++ program");
    compile(&compiler("CXX", "c++"), &["-std=c++17", "-c"], &cpp, &dir.join("headers_cpp.o"), &[]);

    let c = dir.join("headers.c");
    std::fs::write(&c, c_program(&checks)).expect("write the C program");
    let exe = dir.join("headers");
    compile(
        &compiler("CC", "cc"),
        &["-std=c11", "-Wstrict-prototypes"],
        &c,
        &exe,
        &[format!("-L{}", lib_dir.display()), "-lacl_rt".to_string(), format!("-Wl,-rpath,{}", lib_dir.display())],
    );

    let mut run = Command::new(&exe);
    for var in acl_rt::ENV_ALL {
        run.env_remove(var);
    }
    let out = run.env(acl_rt::ENV_DEVICE_MEMORY, "64M").output().expect("the C program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the C program failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim_end(), "headers: pool ok, 256 of 256 bytes set, 0 bytes used after free");
    let _ = std::fs::remove_dir_all(&dir);
    println!("{asserts} static assertions and {} prototypes checked in C11 and C++17", prototypes().count());
}

/// A program that includes only `acl/acl_rt.h` reaches the process calls, as with CANN's
/// headers, where `aclInit`, `aclFinalize`, `aclFinalizeReference` and
/// `aclGetRecentErrMsg` are declared in that header, and `acl/acl.h` includes it.
#[test]
fn a_program_including_only_acl_rt_h_calls_the_process_functions() {
    let lib = library();
    let lib_dir = lib.parent().expect("the library has a folder");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acl-rt-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let body = "#include <acl/acl_rt.h>\n\
                #include <stdio.h>\n\
                int main(void) {\n\
                    uint64_t refs = 9;\n\
                    int32_t major = 0, minor = 0, patch = 0;\n\
                    if (aclInit(NULL) != ACL_SUCCESS) return 1;\n\
                    if (aclrtGetVersion(&major, &minor, &patch) != ACL_SUCCESS) return 2;\n\
                    if (major != ACL_MAJOR_VERSION || minor != ACL_MINOR_VERSION || patch != ACL_PATCH_VERSION) return 3;\n\
                    if (aclFinalizeReference(&refs) != ACL_SUCCESS || refs != 0) return 4;\n\
                    if (aclFinalize() != ACL_ERROR_REPEAT_FINALIZE) return 5;\n\
                    if (aclGetRecentErrMsg() == NULL) return 6;\n\
                    printf(\"acl_rt.h alone: %d.%d.%d\\n\", (int)major, (int)minor, (int)patch);\n\
                    return 0;\n\
                }\n";
    let c = dir.join("rt_only.c");
    std::fs::write(&c, body).expect("write the C program");
    let exe = dir.join("rt_only");
    compile(
        &compiler("CC", "cc"),
        &["-std=c11"],
        &c,
        &exe,
        &[format!("-L{}", lib_dir.display()), "-lacl_rt".to_string(), format!("-Wl,-rpath,{}", lib_dir.display())],
    );
    let cpp = dir.join("rt_only.cpp");
    std::fs::write(&cpp, body.replace("(void)", "()")).expect("write the C++ program");
    compile(&compiler("CXX", "c++"), &["-std=c++11", "-c"], &cpp, &dir.join("rt_only_cpp.o"), &[]);
    let mut run = Command::new(&exe);
    for var in acl_rt::ENV_ALL {
        run.env_remove(var);
    }
    let out = run.output().expect("the C program runs");
    assert!(out.status.success(), "the program failed: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "acl_rt.h alone: 1.17.0");
    let _ = std::fs::remove_dir_all(&dir);
}
