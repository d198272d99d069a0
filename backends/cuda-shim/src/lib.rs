//! A drop-in `libcuda.so.1` on a CPU: the CUDA driver calls of stream-ordered memory pools
//! (`cuMemPool*`, `cuMemAllocAsync`, `cuMemFreeAsync`) and the calls around them
//! (initialization, devices and their profile, contexts, streams, events, host functions,
//! copies and memsets, plain and page-locked memory, pointer attributes, error names), on
//! top of the `mempool-hal` CPU emulator.
//!
//! It exports every function name of the CUDA 13.5 driver API ([`table`]: 723 symbols,
//! every `_v2` and `_ptsz`/`_ptds` variant), and answers `cuGetProcAddress` from the same
//! table, so programs written elsewhere start on it: cudarc (whose older releases resolve
//! every name at once) and NVIDIA's `cuda-bindings`/`cuda.core` (which resolve every
//! function through `cuGetProcAddress_v2`). A function it does not emulate answers
//! `CUDA_ERROR_NOT_SUPPORTED` naming itself. It reports driver version 13050.
//!
//! It lets the CUDA backend's loading and FFI code run in every test, and C and C++
//! programs written against the driver API run on a machine without a GPU. Cargo builds
//! it as `libcuda.so`; installed as `libcuda.so.1` it is found where the driver would be.
//! A loader tells it from the driver by the symbol `mempool_cuda_shim_version`, which
//! answers `"mempool-emu-"` and this crate's version.
//!
//! Handles are registry ids checked on every call: null, garbage, destroyed or wrong-kind
//! handles get an error code, never a crash, and no panic crosses the C boundary (it
//! becomes `CUDA_ERROR_UNKNOWN`, 999). The calling thread's last failure is kept as a
//! message: the driver API has no C call for it, so the library exports one of its own,
//! `const char *mempool_cuda_shim_last_error(void)` (NULL when no call has failed on the
//! thread), which the CUDA backend adds to its errors; Rust callers read
//! [`last_error_message`]. Device pointers
//! are host addresses, so a host function launched with `cuLaunchHostFunc` can work on
//! device memory directly, standing in for a kernel.
//!
//! # What the calls answer
//!
//! The driver's result codes: `CUDA_ERROR_INVALID_VALUE` (1) for bad arguments,
//! `CUDA_ERROR_OUT_OF_MEMORY` (2), `CUDA_ERROR_NOT_INITIALIZED` (3) for any call before
//! `cuInit` but `cuInit`, `cuDriverGetVersion`, `cuGetErrorName` and `cuGetErrorString`,
//! `CUDA_ERROR_INVALID_DEVICE` (101), `CUDA_ERROR_INVALID_CONTEXT` (201) where a call
//! needs a current context and has none, `CUDA_ERROR_INVALID_HANDLE` (400),
//! `CUDA_ERROR_NOT_READY` (600) from the queries, `CUDA_ERROR_NOT_SUPPORTED` (801) and
//! `CUDA_ERROR_UNKNOWN` (999). The emulator's own errors are translated by their kind
//! (`mempool_hal::ErrorKind`): a stream-order violation the checker finds, for one, is
//! `CUDA_ERROR_INVALID_VALUE` with a message naming the streams and operations. The order
//! of each call's checks is in [`exports`].
//!
//! - **Contexts.** Each device has its primary context (`cuDevicePrimaryCtxRetain`,
//!   counted; `cuDevicePrimaryCtxRelease_v2` undoes one retain and, at the last,
//!   synchronizes the device). Calls that must find a device from the thread need a
//!   current one (`cuCtxSetCurrent`): the default streams (NULL, `CU_STREAM_LEGACY`,
//!   `CU_STREAM_PER_THREAD`), `cuStreamCreate`, `cuEventCreate`, `cuCtxSynchronize`,
//!   `cuMemAllocHost_v2`, `cuMemGetInfo_v2`. A call given a stream, event or pool works on
//!   that object's device whatever is current.
//! - **The default streams** are the driver's. The NULL stream and `CU_STREAM_LEGACY`
//!   (0x1) are the device's *legacy default stream*: its work waits for the work enqueued
//!   before it on every *blocking* stream of the device (created with `CU_STREAM_DEFAULT`),
//!   and work enqueued on a blocking stream waits for the legacy stream's earlier work.
//!   Streams created with `CU_STREAM_NON_BLOCKING` do not synchronize with it in either
//!   direction. `CU_STREAM_PER_THREAD` (0x2) is the calling thread's *per-thread default
//!   stream* (one per thread and device, made at its first use, destroyed when the thread
//!   ends): a blocking stream for the legacy stream, unordered with other threads'. These
//!   implicit waits are the emulator's own stream order, so its checker accepts a program
//!   that relies on them and refuses one that relies on them with a non-blocking stream.
//!   A call that finds nothing new enqueued on the other side since its stream's last
//!   implicit wait adds none (the cost is one lock of the device). Synchronizing or
//!   querying the legacy stream covers its own work (and what that waits for), not
//!   blocking-stream work enqueued after it. The default streams cannot be destroyed
//!   (`CUDA_ERROR_INVALID_HANDLE`).
//! - **Pools** are the driver's: reuse attributes 1-3 on at creation, any release
//!   threshold (above the pool's size keeps everything), a trim below USED releases what it
//!   can, synchronizations (stream, event, context) release memory above the threshold.
//!   Each device has a default pool (the whole device), made at its first use, which is
//!   its current pool until `cuDeviceSetMemPool`; `cuMemAllocAsync` allocates from the
//!   current pool; the default pool cannot be destroyed.
//! - **Copies.** `cuMemAllocHost_v2` memory is copied and set in stream order and stays
//!   allocated until the queued work using it has run, even if `cuMemFreeHost` comes
//!   first. An async copy with pageable host memory waits for the stream's earlier work
//!   and copies before it returns.
//! - **Host registration** (contract §15). `cuMemHostRegister_v2` (and `cuMemHostRegister`)
//!   makes a malloc'd range page-locked memory for the copies until `cuMemHostUnregister`;
//!   `cuMemHostGetDevicePointer_v2` answers the host pointer, usable as a `CUdeviceptr`.
//!   Overlap: 712; a pointer never registered: 713; an interior one: 1.
//! - **Events.** An event never recorded is complete for `cuEventQuery` and
//!   `cuEventSynchronize`; `cuEventElapsedTime` refuses it, and events made with
//!   `CU_EVENT_DISABLE_TIMING` (`CUDA_ERROR_INVALID_HANDLE`).
//! - **Streams.** `cuStreamDestroy_v2` returns at once and the queued work still runs.
//! - **Host functions** of all streams of a device run one at a time on one thread.
//! - **Virtual memory** (contract §14), as PyTorch's expandable segments use it:
//!   `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, `cuMemSetAccess`, `cuMemUnmap`,
//!   `cuMemRelease`, `cuMemAddressFree`, `cuMemGetAccess`, `cuMemGetAllocationGranularity`
//!   (2 MiB), `cuMemRetainAllocationHandle`, `cuMemGetAllocationPropertiesFromHandle`; no
//!   current context needed. On the `cuda` profile a mapping has no access until
//!   `cuMemSetAccess`; work queued before an unmapping still reaches the chunk.
//!
//! # Settings
//!
//! The emulated platform is configured from the environment at `cuInit`, with the
//! emulator's variables ([`ENV_ALL`]): `MEMPOOL_EMU_DEVICES` (how many devices, 1 by
//! default), `MEMPOOL_EMU_DEVICE_MEMORY` (bytes per device, 16 GiB), `MEMPOOL_EMU_GRANULARITY`
//! (2 MiB), `MEMPOOL_EMU_MODE`, `MEMPOOL_EMU_CHECKER`, `MEMPOOL_EMU_RACES`,
//! `MEMPOOL_EMU_PROFILE`, `MEMPOOL_EMU_WAIT_TIMEOUT` and `MEMPOOL_EMU_WORKER_DELAY`
//! (`docs/emulator.md`). A value that does not parse makes `cuInit` fail with
//! `CUDA_ERROR_UNKNOWN` naming the variable.
//!
//! # C and C++ headers
//!
//! `backends/cuda-shim/include/cuda.h` is the project's own header: it declares exactly
//! the functions this library exports, with the driver's names, types, values and struct
//! layouts (64-bit targets), and maps the names programs use (`cuStreamDestroy`,
//! `cuMemcpyHtoDAsync`, ...) onto the exported `_v2` symbols:
//!
//! ```text
//! cargo build -p mempool-cuda-shim
//! cc -std=c11 -I backends/cuda-shim/include prog.c target/debug/libcuda.so -Wl,-rpath,target/debug
//! ```
//!
//! The `headers` test checks every declaration against the library and runs a C program
//! on it.

#![deny(missing_docs)]

pub mod exports;
mod ffi;
mod signatures;
mod state;
pub mod table;
pub mod types;

pub use ffi::last_error_message;
pub use mempool_emu::{
    ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, ENV_PROFILE, ENV_RACES,
    ENV_WAIT_TIMEOUT, ENV_WORKER_DELAY,
};
