//! Before `cuInit`: every call but `cuInit`, `cuDriverGetVersion`, `cuGetErrorName`,
//! `cuGetErrorString` (and the library's own calls, the version marker and the last
//! message) answers `CUDA_ERROR_NOT_INITIALIZED`, before
//! looking at its arguments; `cuInit` with flags refuses and leaves the library
//! uninitialized. A test binary of its own: `cuInit` is process-wide.
//!
//! The second test runs in a child process of this binary with a setting that does not
//! parse: `cuInit` answers `CUDA_ERROR_UNKNOWN` naming it, and every other call stays
//! `CUDA_ERROR_NOT_INITIALIZED`.

mod common;

use common::{exported_functions, message};
use cuda::exports::*;
use cuda::types::*;
use std::collections::BTreeSet;
use std::ffi::CStr;
use std::ptr::null_mut;

type Call = fn() -> CUresult;

/// One call of every export that needs `cuInit`, with null or zero arguments.
fn calls() -> Vec<(&'static str, Call)> {
    vec![
        // SAFETY: refused before any argument is looked at.
        ("cuCtxCreate", || unsafe { cuCtxCreate(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxDestroy", || unsafe { cuCtxDestroy(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxPushCurrent", || unsafe { cuCtxPushCurrent(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxPopCurrent", || unsafe { cuCtxPopCurrent(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxRelease", || unsafe { cuDevicePrimaryCtxRelease(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxReset", || unsafe { cuDevicePrimaryCtxReset(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxSetFlags", || unsafe { cuDevicePrimaryCtxSetFlags(0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamDestroy", || unsafe { cuStreamDestroy(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventDestroy", || unsafe { cuEventDestroy(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetPCIBusId", || unsafe { cuDeviceGetPCIBusId(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetByPCIBusId", || unsafe { cuDeviceGetByPCIBusId(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxSynchronize_v2", || unsafe { cuCtxSynchronize_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxCreate_v2", || unsafe { cuCtxCreate_v2(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxCreate_v3", || unsafe { cuCtxCreate_v3(null_mut(), null_mut(), 0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxCreate_v4", || unsafe { cuCtxCreate_v4(null_mut(), null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxDestroy_v2", || unsafe { cuCtxDestroy_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxPushCurrent_v2", || unsafe { cuCtxPushCurrent_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxPopCurrent_v2", || unsafe { cuCtxPopCurrent_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetDevice", || unsafe { cuCtxGetDevice(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetDevice_v2", || unsafe { cuCtxGetDevice_v2(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceCanAccessPeer", || unsafe { cuDeviceCanAccessPeer(null_mut(), 0, 1) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxEnablePeerAccess", || unsafe { cuCtxEnablePeerAccess(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxDisablePeerAccess", || unsafe { cuCtxDisablePeerAccess(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetApiVersion", || unsafe { cuCtxGetApiVersion(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetFlags", || unsafe { cuCtxGetFlags(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxSetFlags", || unsafe { cuCtxSetFlags(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetId", || unsafe { cuCtxGetId(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxGetState", || unsafe { cuDevicePrimaryCtxGetState(0, null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxSetFlags_v2", || unsafe { cuDevicePrimaryCtxSetFlags_v2(0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxReset_v2", || unsafe { cuDevicePrimaryCtxReset_v2(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetPriority", || unsafe { cuStreamGetPriority(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetFlags", || unsafe { cuStreamGetFlags(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetId", || unsafe { cuStreamGetId(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetDevice", || unsafe { cuStreamGetDevice(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetCtx", || unsafe { cuStreamGetCtx(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetCtx_v2", || unsafe { cuStreamGetCtx_v2(null_mut(), null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamIsCapturing", || unsafe { cuStreamIsCapturing(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamAddCallback", || unsafe { cuStreamAddCallback(null_mut(), None, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamSynchronize_ptsz", || unsafe { cuStreamSynchronize_ptsz(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamQuery_ptsz", || unsafe { cuStreamQuery_ptsz(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamWaitEvent_ptsz", || unsafe { cuStreamWaitEvent_ptsz(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetPriority_ptsz", || unsafe { cuStreamGetPriority_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetFlags_ptsz", || unsafe { cuStreamGetFlags_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetId_ptsz", || unsafe { cuStreamGetId_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetDevice_ptsz", || unsafe { cuStreamGetDevice_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetCtx_ptsz", || unsafe { cuStreamGetCtx_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamGetCtx_v2_ptsz", || unsafe { cuStreamGetCtx_v2_ptsz(null_mut(), null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamIsCapturing_ptsz", || unsafe { cuStreamIsCapturing_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamAddCallback_ptsz", || unsafe { cuStreamAddCallback_ptsz(null_mut(), None, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventRecordWithFlags", || unsafe { cuEventRecordWithFlags(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventRecord_ptsz", || unsafe { cuEventRecord_ptsz(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventRecordWithFlags_ptsz", || unsafe { cuEventRecordWithFlags_ptsz(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuLaunchHostFunc_v2", || unsafe { cuLaunchHostFunc_v2(null_mut(), None, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuLaunchHostFunc_ptsz", || unsafe { cuLaunchHostFunc_ptsz(null_mut(), None, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuLaunchHostFunc_v2_ptsz", || unsafe { cuLaunchHostFunc_v2_ptsz(null_mut(), None, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD16Async", || unsafe { cuMemsetD16Async(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD32Async", || unsafe { cuMemsetD32Async(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyAsync", || unsafe { cuMemcpyAsync(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyHtoDAsync_v2_ptsz", || unsafe { cuMemcpyHtoDAsync_v2_ptsz(0, null_mut(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoHAsync_v2_ptsz", || unsafe { cuMemcpyDtoHAsync_v2_ptsz(null_mut(), 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoDAsync_v2_ptsz", || unsafe { cuMemcpyDtoDAsync_v2_ptsz(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyAsync_ptsz", || unsafe { cuMemcpyAsync_ptsz(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD8Async_ptsz", || unsafe { cuMemsetD8Async_ptsz(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD16Async_ptsz", || unsafe { cuMemsetD16Async_ptsz(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD32Async_ptsz", || unsafe { cuMemsetD32Async_ptsz(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpy", || unsafe { cuMemcpy(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyHtoD_v2", || unsafe { cuMemcpyHtoD_v2(0, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoH_v2", || unsafe { cuMemcpyDtoH_v2(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoD_v2", || unsafe { cuMemcpyDtoD_v2(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD8_v2", || unsafe { cuMemsetD8_v2(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD16_v2", || unsafe { cuMemsetD16_v2(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD32_v2", || unsafe { cuMemsetD32_v2(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpy_ptds", || unsafe { cuMemcpy_ptds(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyHtoD_v2_ptds", || unsafe { cuMemcpyHtoD_v2_ptds(0, null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoH_v2_ptds", || unsafe { cuMemcpyDtoH_v2_ptds(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoD_v2_ptds", || unsafe { cuMemcpyDtoD_v2_ptds(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD8_v2_ptds", || unsafe { cuMemsetD8_v2_ptds(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD16_v2_ptds", || unsafe { cuMemsetD16_v2_ptds(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD32_v2_ptds", || unsafe { cuMemsetD32_v2_ptds(0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAlloc_v2", || unsafe { cuMemAlloc_v2(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemFree_v2", || unsafe { cuMemFree_v2(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemGetAddressRange_v2", || unsafe { cuMemGetAddressRange_v2(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuPointerGetAttribute", || unsafe { cuPointerGetAttribute(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuPointerGetAttributes", || unsafe { cuPointerGetAttributes(0, null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemHostAlloc", || unsafe { cuMemHostAlloc(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolSetAccess", || unsafe { cuMemPoolSetAccess(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolGetAccess", || unsafe { cuMemPoolGetAccess(null_mut(), null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAllocAsync_ptsz", || unsafe { cuMemAllocAsync_ptsz(null_mut(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAllocFromPoolAsync_ptsz", || unsafe {
            cuMemAllocFromPoolAsync_ptsz(null_mut(), 0, null_mut(), null_mut())
        }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemFreeAsync_ptsz", || unsafe { cuMemFreeAsync_ptsz(0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetCount", || unsafe { cuDeviceGetCount(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGet", || unsafe { cuDeviceGet(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetAttribute", || unsafe { cuDeviceGetAttribute(null_mut(), 115, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetName", || unsafe { cuDeviceGetName(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceTotalMem_v2", || unsafe { cuDeviceTotalMem_v2(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetUuid", || unsafe { cuDeviceGetUuid(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetUuid_v2", || unsafe { cuDeviceGetUuid_v2(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxRetain", || unsafe { cuDevicePrimaryCtxRetain(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDevicePrimaryCtxRelease_v2", || unsafe { cuDevicePrimaryCtxRelease_v2(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxSetCurrent", || unsafe { cuCtxSetCurrent(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetCurrent", || unsafe { cuCtxGetCurrent(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxSynchronize", || unsafe { cuCtxSynchronize() }),
        // SAFETY: refused before any argument is looked at.
        ("cuCtxGetStreamPriorityRange", || unsafe { cuCtxGetStreamPriorityRange(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamCreate", || unsafe { cuStreamCreate(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamCreateWithPriority", || unsafe { cuStreamCreateWithPriority(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamDestroy_v2", || unsafe { cuStreamDestroy_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamSynchronize", || unsafe { cuStreamSynchronize(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamQuery", || unsafe { cuStreamQuery(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuStreamWaitEvent", || unsafe { cuStreamWaitEvent(null_mut(), null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventCreate", || unsafe { cuEventCreate(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventRecord", || unsafe { cuEventRecord(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventSynchronize", || unsafe { cuEventSynchronize(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventQuery", || unsafe { cuEventQuery(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventDestroy_v2", || unsafe { cuEventDestroy_v2(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventElapsedTime", || unsafe { cuEventElapsedTime(null_mut(), null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuEventElapsedTime_v2", || unsafe { cuEventElapsedTime_v2(null_mut(), null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuLaunchHostFunc", || unsafe { cuLaunchHostFunc(null_mut(), None, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyHtoDAsync_v2", || unsafe { cuMemcpyHtoDAsync_v2(0, std::ptr::null(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoHAsync_v2", || unsafe { cuMemcpyDtoHAsync_v2(null_mut(), 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemcpyDtoDAsync_v2", || unsafe { cuMemcpyDtoDAsync_v2(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemsetD8Async", || unsafe { cuMemsetD8Async(0, 0, 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAllocHost_v2", || unsafe { cuMemAllocHost_v2(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemFreeHost", || unsafe { cuMemFreeHost(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemGetInfo_v2", || unsafe { cuMemGetInfo_v2(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolCreate", || unsafe { cuMemPoolCreate(null_mut(), std::ptr::null()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolDestroy", || unsafe { cuMemPoolDestroy(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolSetAttribute", || unsafe { cuMemPoolSetAttribute(null_mut(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolGetAttribute", || unsafe { cuMemPoolGetAttribute(null_mut(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemPoolTrimTo", || unsafe { cuMemPoolTrimTo(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAllocFromPoolAsync", || unsafe { cuMemAllocFromPoolAsync(null_mut(), 0, null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAllocAsync", || unsafe { cuMemAllocAsync(null_mut(), 0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemFreeAsync", || unsafe { cuMemFreeAsync(0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetDefaultMemPool", || unsafe { cuDeviceGetDefaultMemPool(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceGetMemPool", || unsafe { cuDeviceGetMemPool(null_mut(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuDeviceSetMemPool", || unsafe { cuDeviceSetMemPool(0, null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAddressReserve", || unsafe { cuMemAddressReserve(null_mut(), 0, 0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemAddressFree", || unsafe { cuMemAddressFree(0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemCreate", || unsafe { cuMemCreate(null_mut(), 0, std::ptr::null(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemRelease", || unsafe { cuMemRelease(0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemMap", || unsafe { cuMemMap(0, 0, 0, 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemUnmap", || unsafe { cuMemUnmap(0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemSetAccess", || unsafe { cuMemSetAccess(0, 0, std::ptr::null(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemGetAccess", || unsafe { cuMemGetAccess(null_mut(), std::ptr::null(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemGetAllocationGranularity", || unsafe { cuMemGetAllocationGranularity(null_mut(), std::ptr::null(), 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemRetainAllocationHandle", || unsafe { cuMemRetainAllocationHandle(null_mut(), null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemGetAllocationPropertiesFromHandle", || unsafe { cuMemGetAllocationPropertiesFromHandle(null_mut(), 0) }),
        // Host registration (contract §15).
        // SAFETY: refused before any argument is looked at.
        ("cuMemHostRegister_v2", || unsafe { cuMemHostRegister_v2(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemHostRegister", || unsafe { cuMemHostRegister(null_mut(), 0, 0) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemHostUnregister", || unsafe { cuMemHostUnregister(null_mut()) }),
        // SAFETY: refused before any argument is looked at.
        ("cuMemHostGetDevicePointer_v2", || unsafe { cuMemHostGetDevicePointer_v2(null_mut(), null_mut(), 0) }),
    ]
}

/// The exports that work before `cuInit`.
const BEFORE_INIT: [&str; 9] = [
    "cuInit",
    "cuGetProcAddress",
    "cuGetProcAddress_v2",
    "cuGetExportTable",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "mempool_cuda_shim_version",
    "mempool_cuda_shim_last_error",
];

fn every_call_is_uninitialized(failures: &mut Vec<String>) {
    for (name, call) in calls() {
        let rc = call();
        if rc != CUDA_ERROR_NOT_INITIALIZED {
            failures.push(format!("{name} answered {rc} before cuInit: {}", message()));
        } else if !message().starts_with(&format!("{name}: ")) {
            failures.push(format!("{name}: the message does not name it: {}", message()));
        }
    }
}

#[test]
fn before_cu_init_only_the_process_calls_work() {
    let names: BTreeSet<String> =
        calls().iter().map(|(n, _)| n.to_string()).chain(BEFORE_INIT.iter().map(|n| n.to_string())).collect();
    assert_eq!(names, exported_functions().into_iter().collect(), "every export is called here");

    let mut failures = Vec::new();
    every_call_is_uninitialized(&mut failures);
    // SAFETY: takes nothing; the answer is read before the next call into the library.
    let last = unsafe { mempool_cuda_shim_last_error() };
    assert!(!last.is_null(), "a call failed on this thread");
    // SAFETY: non-null, NUL-terminated, valid until this thread's next call.
    let last = unsafe { CStr::from_ptr(last) }.to_string_lossy().into_owned();
    assert_eq!(last, message(), "the C call gives the thread's last message");
    let last_call = calls().last().map(|c| c.0).expect("calls");
    assert!(last.starts_with(&format!("{last_call}: ")), "the last call refused: {last}");
    let mut version = 0;
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: valid out-pointers; the strings are static.
    unsafe {
        assert_eq!(cuDriverGetVersion(&mut version), CUDA_SUCCESS);
        assert_eq!(version, 13050);
        assert_eq!(cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &mut name), CUDA_SUCCESS);
        assert_eq!(CStr::from_ptr(name).to_str(), Ok("CUDA_ERROR_NOT_INITIALIZED"));
        assert_eq!(cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &mut text), CUDA_SUCCESS);
        assert!(!CStr::from_ptr(text).to_bytes().is_empty());
        assert!(CStr::from_ptr(mempool_cuda_shim_version()).to_bytes().starts_with(b"mempool-emu-"));
        assert_eq!(cuInit(1), CUDA_ERROR_INVALID_VALUE, "flags other than 0");
    }
    every_call_is_uninitialized(&mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let mut count = 0;
    // SAFETY: flags 0 and a valid out-pointer.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS, "{}", message());
        assert_eq!(cuDeviceGetCount(&mut count), CUDA_SUCCESS);
        assert_eq!(cuInit(0), CUDA_SUCCESS, "again");
    }
    assert!(count >= 1);
}

const CHILD: &str = "MEMPOOL_CUDA_SHIM_CHILD";

#[test]
fn a_setting_that_does_not_parse_fails_cu_init_and_leaves_the_library_uninitialized() {
    const NAME: &str = "a_setting_that_does_not_parse_fails_cu_init_and_leaves_the_library_uninitialized";
    if std::env::var(CHILD).is_ok() {
        // SAFETY: takes an integer only.
        let rc = unsafe { cuInit(0) };
        assert_eq!(rc, CUDA_ERROR_UNKNOWN);
        assert!(message().contains(cuda::ENV_DEVICES), "the message names the variable: {}", message());
        // SAFETY: as above.
        assert_eq!(unsafe { cuInit(0) }, CUDA_ERROR_UNKNOWN, "the failure is kept");
        let mut failures = Vec::new();
        every_call_is_uninitialized(&mut failures);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        return;
    }
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut cmd = std::process::Command::new(exe);
    cmd.args([NAME, "--exact", "--test-threads=1", "--nocapture"]).env(CHILD, "1");
    for var in cuda::ENV_ALL {
        cmd.env_remove(var);
    }
    let out = cmd.env(cuda::ENV_DEVICES, "banana").output().expect("the child runs");
    assert!(
        out.status.success(),
        "the child failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the child ran the test");
}
