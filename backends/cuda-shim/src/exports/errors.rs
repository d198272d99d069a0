//! The names and descriptions of the result codes (`cuGetErrorName`,
//! `cuGetErrorString`), with one body for both, and the calling thread's message of its
//! last failed call, which the driver API has no call for: the library's own
//! `mempool_cuda_shim_last_error` for C callers and the CUDA backend,
//! [`last_error_message`](crate::last_error_message) for Rust callers.

use super::prelude::*;
use std::ffi::CStr;

/// Every `CUresult` of the driver table's CUDA version: its value, its name, and a
/// description of our own (for the codes the library does not return itself, the name's
/// words).
const CODES: [(CUresult, &CStr, &CStr); 106] = [
    (0, c"CUDA_SUCCESS", c"no error"),
    (1, c"CUDA_ERROR_INVALID_VALUE", c"an argument is out of its range or a pointer is null"),
    (2, c"CUDA_ERROR_OUT_OF_MEMORY", c"the memory asked for could not be allocated"),
    (3, c"CUDA_ERROR_NOT_INITIALIZED", c"the driver is not initialized (call cuInit first)"),
    (4, c"CUDA_ERROR_DEINITIALIZED", c"deinitialized"),
    (5, c"CUDA_ERROR_PROFILER_DISABLED", c"profiler disabled"),
    (6, c"CUDA_ERROR_PROFILER_NOT_INITIALIZED", c"profiler not initialized"),
    (7, c"CUDA_ERROR_PROFILER_ALREADY_STARTED", c"profiler already started"),
    (8, c"CUDA_ERROR_PROFILER_ALREADY_STOPPED", c"profiler already stopped"),
    (34, c"CUDA_ERROR_STUB_LIBRARY", c"stub library"),
    (36, c"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", c"call requires newer driver"),
    (46, c"CUDA_ERROR_DEVICE_UNAVAILABLE", c"device unavailable"),
    (47, c"CUDA_ERROR_MULTICAST_RESOURCE_FULL", c"multicast resource full"),
    (100, c"CUDA_ERROR_NO_DEVICE", c"no device"),
    (101, c"CUDA_ERROR_INVALID_DEVICE", c"the device ordinal does not name a device"),
    (102, c"CUDA_ERROR_DEVICE_NOT_LICENSED", c"device not licensed"),
    (200, c"CUDA_ERROR_INVALID_IMAGE", c"invalid image"),
    (201, c"CUDA_ERROR_INVALID_CONTEXT", c"no valid context is current, or the context handle is not a context"),
    (202, c"CUDA_ERROR_CONTEXT_ALREADY_CURRENT", c"context already current"),
    (205, c"CUDA_ERROR_MAP_FAILED", c"map failed"),
    (206, c"CUDA_ERROR_UNMAP_FAILED", c"unmap failed"),
    (207, c"CUDA_ERROR_ARRAY_IS_MAPPED", c"array is mapped"),
    (208, c"CUDA_ERROR_ALREADY_MAPPED", c"already mapped"),
    (209, c"CUDA_ERROR_NO_BINARY_FOR_GPU", c"no binary for GPU"),
    (210, c"CUDA_ERROR_ALREADY_ACQUIRED", c"already acquired"),
    (211, c"CUDA_ERROR_NOT_MAPPED", c"not mapped"),
    (212, c"CUDA_ERROR_NOT_MAPPED_AS_ARRAY", c"not mapped as array"),
    (213, c"CUDA_ERROR_NOT_MAPPED_AS_POINTER", c"not mapped as pointer"),
    (214, c"CUDA_ERROR_ECC_UNCORRECTABLE", c"ECC uncorrectable"),
    (215, c"CUDA_ERROR_UNSUPPORTED_LIMIT", c"unsupported limit"),
    (216, c"CUDA_ERROR_CONTEXT_ALREADY_IN_USE", c"context already in use"),
    (217, c"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", c"peer access unsupported"),
    (218, c"CUDA_ERROR_INVALID_PTX", c"invalid PTX"),
    (219, c"CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", c"invalid graphics context"),
    (220, c"CUDA_ERROR_NVLINK_UNCORRECTABLE", c"NVLink uncorrectable"),
    (221, c"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", c"JIT compiler not found"),
    (222, c"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", c"unsupported PTX version"),
    (223, c"CUDA_ERROR_JIT_COMPILATION_DISABLED", c"JIT compilation disabled"),
    (224, c"CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", c"unsupported exec affinity"),
    (225, c"CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", c"unsupported devside sync"),
    (226, c"CUDA_ERROR_CONTAINED", c"contained"),
    (227, c"CUDA_ERROR_INSUFFICIENT_LOADER_VERSION", c"insufficient loader version"),
    (300, c"CUDA_ERROR_INVALID_SOURCE", c"invalid source"),
    (301, c"CUDA_ERROR_FILE_NOT_FOUND", c"file not found"),
    (302, c"CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", c"shared object symbol not found"),
    (303, c"CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", c"shared object init failed"),
    (304, c"CUDA_ERROR_OPERATING_SYSTEM", c"operating system"),
    (400, c"CUDA_ERROR_INVALID_HANDLE", c"the handle is not a live stream, event or pool of the right kind"),
    (401, c"CUDA_ERROR_ILLEGAL_STATE", c"illegal state"),
    (402, c"CUDA_ERROR_LOSSY_QUERY", c"lossy query"),
    (500, c"CUDA_ERROR_NOT_FOUND", c"not found"),
    (600, c"CUDA_ERROR_NOT_READY", c"the work asked about has not completed yet"),
    (700, c"CUDA_ERROR_ILLEGAL_ADDRESS", c"illegal address"),
    (701, c"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", c"launch out of resources"),
    (702, c"CUDA_ERROR_LAUNCH_TIMEOUT", c"launch timeout"),
    (703, c"CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", c"launch incompatible texturing"),
    (704, c"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", c"peer access already enabled"),
    (705, c"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", c"peer access not enabled"),
    (708, c"CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", c"primary context active"),
    (709, c"CUDA_ERROR_CONTEXT_IS_DESTROYED", c"context is destroyed"),
    (710, c"CUDA_ERROR_ASSERT", c"assert"),
    (711, c"CUDA_ERROR_TOO_MANY_PEERS", c"too many peers"),
    (
        712,
        c"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        c"the host range overlaps a registered range or page-locked memory",
    ),
    (713, c"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", c"the pointer does not start a registered host range"),
    (714, c"CUDA_ERROR_HARDWARE_STACK_ERROR", c"hardware stack error"),
    (715, c"CUDA_ERROR_ILLEGAL_INSTRUCTION", c"illegal instruction"),
    (716, c"CUDA_ERROR_MISALIGNED_ADDRESS", c"misaligned address"),
    (717, c"CUDA_ERROR_INVALID_ADDRESS_SPACE", c"invalid address space"),
    (718, c"CUDA_ERROR_INVALID_PC", c"invalid pc"),
    (719, c"CUDA_ERROR_LAUNCH_FAILED", c"launch failed"),
    (720, c"CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", c"cooperative launch too large"),
    (721, c"CUDA_ERROR_TENSOR_MEMORY_LEAK", c"tensor memory leak"),
    (800, c"CUDA_ERROR_NOT_PERMITTED", c"not permitted"),
    (801, c"CUDA_ERROR_NOT_SUPPORTED", c"the operation is not supported"),
    (802, c"CUDA_ERROR_SYSTEM_NOT_READY", c"system not ready"),
    (803, c"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", c"system driver mismatch"),
    (804, c"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", c"compat not supported on device"),
    (805, c"CUDA_ERROR_MPS_CONNECTION_FAILED", c"MPS connection failed"),
    (806, c"CUDA_ERROR_MPS_RPC_FAILURE", c"MPS rpc failure"),
    (807, c"CUDA_ERROR_MPS_SERVER_NOT_READY", c"MPS server not ready"),
    (808, c"CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", c"MPS max clients reached"),
    (809, c"CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", c"MPS max connections reached"),
    (810, c"CUDA_ERROR_MPS_CLIENT_TERMINATED", c"MPS client terminated"),
    (811, c"CUDA_ERROR_CDP_NOT_SUPPORTED", c"CDP not supported"),
    (812, c"CUDA_ERROR_CDP_VERSION_MISMATCH", c"CDP version mismatch"),
    (900, c"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", c"stream capture unsupported"),
    (901, c"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", c"stream capture invalidated"),
    (902, c"CUDA_ERROR_STREAM_CAPTURE_MERGE", c"stream capture merge"),
    (903, c"CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", c"stream capture unmatched"),
    (904, c"CUDA_ERROR_STREAM_CAPTURE_UNJOINED", c"stream capture unjoined"),
    (905, c"CUDA_ERROR_STREAM_CAPTURE_ISOLATION", c"stream capture isolation"),
    (906, c"CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", c"stream capture implicit"),
    (907, c"CUDA_ERROR_CAPTURED_EVENT", c"captured event"),
    (908, c"CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", c"stream capture wrong thread"),
    (909, c"CUDA_ERROR_TIMEOUT", c"timeout"),
    (910, c"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", c"graph exec update failure"),
    (911, c"CUDA_ERROR_EXTERNAL_DEVICE", c"external device"),
    (912, c"CUDA_ERROR_INVALID_CLUSTER_SIZE", c"invalid cluster size"),
    (913, c"CUDA_ERROR_FUNCTION_NOT_LOADED", c"function not loaded"),
    (914, c"CUDA_ERROR_INVALID_RESOURCE_TYPE", c"invalid resource type"),
    (915, c"CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", c"invalid resource configuration"),
    (916, c"CUDA_ERROR_KEY_ROTATION", c"key rotation"),
    (917, c"CUDA_ERROR_STREAM_DETACHED", c"stream detached"),
    (918, c"CUDA_ERROR_GRAPH_RECAPTURE_FAILURE", c"graph recapture failure"),
    (919, c"CUDA_ERROR_FABRIC_NOT_READY", c"fabric not ready"),
    (999, c"CUDA_ERROR_UNKNOWN", c"an internal error occurred"),
];

/// Which text of a code [`describe`] gives.
#[derive(Clone, Copy)]
enum Text {
    Name,
    Description,
}

/// `cuGetErrorName` and `cuGetErrorString`: a static string for a known code; an unknown
/// code writes NULL and answers `CUDA_ERROR_INVALID_VALUE`.
fn describe(code: CUresult, out: *mut *const c_char, text: Text, op: &'static str) -> mempool_hal::Result<()> {
    non_null(out, op, "pStr")?;
    let found = CODES.iter().find(|(c, _, _)| *c == code).map(|(_, name, desc)| match text {
        Text::Name => *name,
        Text::Description => *desc,
    });
    // SAFETY: non-null, and the caller passes a writable `const char *`.
    unsafe { out.write(found.map_or(std::ptr::null(), CStr::as_ptr)) };
    found
        .map(|_| ())
        .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, op, format!("{code} is not a code this library knows")))
}

/// `CUresult cuGetErrorName(CUresult error, const char **pStr)`: the code's name
/// (`"CUDA_ERROR_INVALID_VALUE"`), a static string; before `cuInit` too.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    const OP: &str = "cuGetErrorName";
    ffi(OP, || describe(error, p_str, Text::Name, OP))
}

/// `CUresult cuGetErrorString(CUresult error, const char **pStr)`: a description of the
/// code, a static string; before `cuInit` too.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    const OP: &str = "cuGetErrorString";
    ffi(OP, || describe(error, p_str, Text::Description, OP))
}

/// `const char *mempool_cuda_shim_last_error(void)`: the message of the calling thread's
/// last failed call (`"cuMemFreeAsync: ... (stream-order violation)"`: the call's name, what
/// was wrong, the portable kind), or NULL when no call has failed on this thread; before
/// `cuInit` too. The string belongs to the library and stays valid until the thread's next
/// failed call (at least until its next call into the library), or the thread's end. The
/// driver has no such symbol: its API gives only a code (`cuGetErrorString`). The CUDA
/// backend adds the message to its errors.
///
/// # Safety
///
/// Takes nothing; the answer must not be used after the thread's next call into the
/// library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_cuda_shim_last_error() -> *const c_char {
    last_error_ptr()
}
