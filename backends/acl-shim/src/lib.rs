//! A drop-in `libacl_rt.so`: the ACL C ABI of the pool API (contract §8) on top of the
//! `mempool-hal` CPU emulator.
//!
//! It lets the Ascend backend's real loading and FFI code run in every test, and lets C
//! and C++ programs written for CANN run on a CPU: point `ASCEND_HOME_PATH` at the folder
//! laid out by `cargo xtask shim` (it holds `lib64/libacl_rt.so` and
//! `lib64/libascendcl.so`), or link against the library directly.
//!
//! Handles are registry ids checked on every call: garbage, destroyed or wrong-kind
//! handles get an error code, never a crash. No panic crosses the C boundary (it becomes
//! 507000 with a message). `aclGetRecentErrMsg` is per thread and, as on CANN, takes the
//! message: it returns NULL when there is nothing to report (no failure yet, or already
//! read), so a C caller that prints it checks for NULL first. Device pointers are host
//! addresses, so a host function launched with `aclrtLaunchHostFunc` can work on device
//! memory directly, standing in for a kernel.
//!
//! Host memory and copies behave as on CANN (contract §8):
//!
//! - `aclrtMallocHost` memory is host memory the runtime knows: memsets and copies (of any
//!   kind whose host side it is, and DEFAULT) accept it, synchronous and async, and async
//!   work on it runs in stream order. It stays allocated until that work has run, even if
//!   `aclrtFreeHost` comes first.
//! - A range registered with `aclrtHostRegister` / `aclrtHostRegisterV2` is page-locked
//!   memory too until `aclrtHostUnregister` (contract §15): copies on it are queued in
//!   stream order, and its device address (the host address) reaches it.
//! - An async copy whose host side is pageable memory (plain `malloc`, the stack)
//!   synchronizes its stream (the host observes it) and is done before the call returns,
//!   so the program may reuse its buffer at once.
//! - `count == 0` in a copy or memset succeeds before any other check; `count > destMax`
//!   (`maxCount`) is 107000; memcpy kind 5 is done as HOST_TO_DEVICE.
//! - Host functions (`aclrtLaunchHostFunc`) of all streams of a device run one at a time
//!   on one thread, as a CANN context's do on its callback thread: one that blocks holds
//!   back the host functions of the device's other streams, while their copies and
//!   memsets still run. All contexts of a device share that thread here (CANN has one per
//!   context). A host function that synchronizes a stream whose own host function waits
//!   behind it answers 507000 at once.
//!
//! Virtual memory (contract §14), as torch_npu's expandable segments use it:
//! `aclrtReserveMemAddress`, `aclrtMallocPhysical`, `aclrtMapMem`, `aclrtMemSetAccess`,
//! `aclrtUnmapMem`, `aclrtFreePhysical`, `aclrtReleaseMemAddress` and
//! `aclrtMemGetAllocationGranularity` (2 MiB), with CANN's checks and codes layer by layer
//! (`exports::vmm`). A mapping is read-write for its device at once, as CANN grants its
//! owner; work queued before an unmapping still reaches the chunk.
//!
//! The emulated platform is configured from the environment at the first call:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `MEMPOOL_EMU_DEVICES` | number of devices (1 to 1024) | 1 |
//! | `MEMPOOL_EMU_DEVICE_MEMORY` | bytes per device (`4096`, `64M`, `8G`; at most 64 TiB) | 16 GiB |
//! | `MEMPOOL_EMU_GRANULARITY` | pool granularity in bytes (a power of two from a page to 1 GiB) | 2 MiB |
//! | `MEMPOOL_EMU_MODE` | `threaded` or `deferred` | threaded |
//! | `MEMPOOL_EMU_CHECKER` | the stream-order checker: `on`/`1`/`true`/`yes` or `off`/`0`/`false`/`no` | on |
//! | `MEMPOOL_EMU_RACES` | the checker's race mode (unordered overlapping accesses, one a write), same values | off |
//! | `MEMPOOL_EMU_WAIT_TIMEOUT` | the longest any wait may take, in milliseconds (`250`, `250ms`, `2s`; 1 ms to 1 hour): a synchronization that waits longer for a host function that does not return answers 507000 with a message naming the stream, and the stream catches up when the function returns | 60 s |
//! | `MEMPOOL_EMU_WORKER_DELAY` | random delays of the stream workers before each operation, for tests that show a result does not depend on timing: a maximum (`500us`, `2ms`, `1s`; a number alone is microseconds) and an optional seed (`2ms,7`) | none |
//! | `MEMPOOL_EMU_PROFILE` | the pools' behaviour (contract §12): `documented` (reuse, release at synchronization, destroy waits for queued work), `cann-open` (the open CANN runtime: no reuse, no release at synchronization, destroy does not wait) or `cuda` (CUDA's rules: reuse flags on at creation, trim below USED releases what it can, HIGH reset to CURRENT) | documented |
//!
//! A value that does not parse or is out of range makes every call fail with 507000 and a
//! message naming the variable (`aclGetRecentErrMsg`), instead of running with a default.
//!
//! With the checker on, a copy or memset that uses freed memory, memory the stream is not
//! ordered after, or a destroyed pool's memory, and a free not ordered after the
//! allocation and every earlier access, answer 107000 with `aclGetRecentErrMsg` naming the
//! streams, positions and operations; nothing is enqueued. A host synchronization orders
//! everything enqueued afterwards, and `aclrtMalloc` memory is ordered before everything
//! enqueued after the call returns (contract §1).
//!
//! # The runtime around the pool
//!
//! Besides the pool calls, the library implements the runtime calls CANN programs use
//! around them (contract §8), with CANN's codes:
//!
//! - **Lifecycle.** `aclInit` again before `aclFinalize`: 100002; a configuration path that
//!   is not a readable file: 100003 (NULL, `""` or a readable file is fine; it is not
//!   parsed); `aclFinalize` again without `aclInit`: 100037. Every `aclInit`, a repeat
//!   too, counts one reference: `aclFinalizeReference` takes one away and finalizes at
//!   the last (100037 when none is left), `aclFinalize` clears them. Every other call works before
//!   `aclInit` and after `aclFinalize`. `aclrtSetDevice` is counted per device,
//!   process-wide; `aclrtResetDevice` undoes one count and `aclrtResetDeviceForce` all of
//!   them (507007 when none is left).
//! - **Queries.** `aclrtGetRunMode` answers `ACL_HOST` (before `aclInit` too),
//!   `aclrtGetSocName` `"mempool-emu-"` and this crate's version (how a program tells
//!   this library from CANN), `aclrtGetVersion` CANN's ACL API version 1.17.0,
//!   `aclrtGetDevice` the current device; `aclrtGetMemInfo` refuses an attribute outside
//!   0-17 (107016). `aclrtStreamQuery` answering complete counts as
//!   the host observing the stream, as a synchronization does (the stream-order checker
//!   takes it so).
//! - **Timed waits.** `aclrtSynchronizeStreamWithTimeout` and
//!   `aclrtSynchronizeEventWithTimeout` take milliseconds (-1: no limit; 0 or below -1:
//!   107000) and answer 507046 / 507047 when the time runs out.
//! - **Callbacks.** `aclrtSubscribeReport(threadId, stream)` names the thread (its
//!   `pthread_t`) that runs the callbacks `aclrtLaunchCallback` puts on the stream, one per
//!   `aclrtProcessReport` call on that thread (507012 when none arrives in time, 107012 on
//!   a thread that subscribed nothing); with `ACL_CALLBACK_BLOCK` the stream waits for the
//!   callback. A stream nobody subscribed: 107015; subscribed twice, or a stream that ran
//!   `aclrtLaunchHostFunc` (CANN subscribes it to its own callback thread for good): 107011.
//! - **Events.** `aclrtCreateEventWithFlag` keeps its flags and checks them as CANN does
//!   (0, above 0x3F, or `ACL_EVENT_DEVICE_USE_ONLY` / `ACL_EVENT_EXTERNAL` with another
//!   flag: 107000); an event created without `ACL_EVENT_SYNC` cannot be waited on or reset
//!   (207000).
//! - **Destroys and resets.** As CANN's stream teardown: `aclrtDestroyStream` waits for
//!   the stream's queued work; `aclrtDestroyStreamForce` drops the work not yet started
//!   (it never runs) and waits for what is running; a device reset synchronizes the
//!   device. So every task queued on a stream before a destroy or a reset has completed
//!   when the call returns, or never runs (past the wait time-out the call answers 507000
//!   and drops what has not started). `aclrtResetDevice` leaves the thread's current
//!   context as CANN does: it stops being current only when the device's count reaches 0
//!   and its default context was current.
//! - **Copies.** An async copy's kind is corrected from the addresses (CANN's rules): a
//!   side lying in device memory is device memory whatever the kind says; pageable memory
//!   named as device (other than by DEFAULT) is 107000; two host sides are 207000 (no async
//!   host-to-host copy on a host). A sync copy takes the kind as given, but refuses (107000)
//!   a side named host that lies in device memory. Nothing is copied raw through a device
//!   range: freed ranges are refused, never read or written.
//! - **Ordering and failure** (`exports::notify`, `exports::exception`, contract §8's
//!   "Ordering and failure"). Notifications and value waits block their stream until a
//!   record or a write to the word satisfies them, even one enqueued later or from another
//!   thread; the checker takes the order they give when they end. A task fails when the
//!   emulator refuses its work as it runs (memory gone, an access refused then, a wait
//!   past its limit): the next synchronization reports it, the exception callback
//!   (`aclrtSetExceptionInfoCallback`) hears of it first, and with `ACL_STOP_ON_FAILURE`
//!   the stream drops its work until then. `aclrtStreamAbort` / `aclrtStreamStop` drop the
//!   queued work; `aclrtSubscribeHostFunc` runs a stream's host functions on a thread of
//!   the program; stream state callbacks hear of every create and destroy.
//! - **External allocators.** `aclrtAllocatorCreateDesc` … `aclrtAllocatorGetByStream`
//!   (contract §16): descriptors are checked registry handles, one registration per
//!   stream (the last wins, copied at registration), fetched by stream as CANN's operator
//!   layer does; every check answers 100000, a registration on a stream handle that is not
//!   a live stream 107017, and destroying a stream drops its registration.
//! - **Last error.** `aclrtGetLastError` / `aclrtPeekAtLastError` answer the code of the
//!   calling thread's last failed call; Get then forgets it.
//!
//! - **Missing context and argument order.** Which calls need a current context, and the
//!   order of a call's checks, follow CANN call by call: event destroy, synchronize, query
//!   and elapsed time, `aclrtFree` and pool attributes 1-3 need none, `aclrtMallocHost`,
//!   every copy, pool attributes 4-8 and `aclrtMemPoolTrimTo` do (107002); a stream of
//!   another device is synchronized (CANN switches to its context); pool malloc and free answer 107003 without one, and check the stream handle
//!   (107017) before the context and the pool; an event never recorded has no elapsed time
//!   (507000); `aclrtLaunchHostFunc` on a stream subscribed with `aclrtSubscribeReport` is
//!   107011.
//! - **Synchronous memory.** `aclrtMalloc` pads a size to a multiple of 32 bytes plus 32,
//!   `aclrtMallocAlign32` to a multiple of 32 only; the pieces are 32-byte aligned and
//!   share the granule blocks of a hidden whole-device pool, and a block goes back to it
//!   when its last piece is freed with `aclrtFree`. A copy or memset must stay inside one
//!   live piece (its padded size). `aclrtGetMemInfo` counts the blocks, so its USED
//!   (total - free) grows by a granule for the first small allocation and not for the
//!   next ones that fit. Out of device memory: 207001. `aclrtFree` does not wait for
//!   queued work (as on CANN) and is not a synchronization, so it releases nothing of the
//!   program's own pools (their release comes at the program's next synchronization,
//!   contract §6). The freed block is free at once (statistics, reuse, the checker), but
//!   its memory goes back to the device only when every stream has run the work queued
//!   before the call, so a host function queued earlier that reads it never faults.
//!   `aclrtFreeHost` of device memory: 107000.
//! - **Lazy setup.** A device's default stream (the null stream) and the hidden pool and
//!   stream of `aclrtMalloc` are made at their first use, once, under a per-device lock:
//!   threads racing on that first use share one set, and none is left behind.
//! - **Faults.** A synchronization that waits for a host function that does not return
//!   gives up after the wait time-out (`MEMPOOL_EMU_WAIT_TIMEOUT`) with 507000 and a
//!   message naming the stream; the work stays queued and the stream catches up when the
//!   function returns, while the pools and the device's other streams keep working (a
//!   blocked host function still holds back the device's other host functions, on their
//!   one thread). A process may exit with work queued: nothing waits for it at exit. The
//!   library may be loaded twice under two names (two copies of the file, as
//!   `libacl_rt.so` and `libascendcl.so`): each copy is an instance of its own, with its
//!   own devices, handles and current device.
//!
//! The contract's status notes list where these still differ from CANN.
//!
//! # C and C++ headers
//!
//! `backends/acl-shim/include/acl/` holds the project's own CANN-compatible headers:
//! `acl/acl.h` (which includes `acl/acl_base.h` and `acl/acl_rt.h`, which includes
//! `acl/acl_rt_allocator.h`, the external-allocator registry) and
//! `acl/acl_rt_memory_soma.h` for the pool API. They declare exactly the functions this
//! library exports, with CANN's names, types, values and struct layouts, so a program
//! written for CANN builds unchanged (C99 or later, C++11 or later; 64-bit targets):
//!
//! ```text
//! cargo build -p mempool-acl-shim
//! cc -I backends/acl-shim/include prog.c -L target/debug -lacl_rt -Wl,-rpath,target/debug
//! ```
//!
//! (`-Wl,-rpath` lets the program find the library without `LD_LIBRARY_PATH`.) The
//! `headers` test checks every declaration against the library.

#![deny(missing_docs)]

mod allocators;
mod exception_info;
pub mod exports;
mod ffi;
mod heap;
mod report;
mod signatures;
mod state;
#[cfg(test)]
mod tests;

/// Tests only: how many streams the library's emulator holds in its registry (every
/// stream alive, and destroyed ones whose worker still runs): the library's own streams
/// and the program's. `None` when the library could not start.
#[doc(hidden)]
pub fn registered_streams_for_tests() -> Option<usize> {
    let shim = state::shim("registered_streams_for_tests").ok()?;
    // The devices are handles of one platform: its registry counts every stream.
    shim.devices.first().map(mempool_emu::Emulator::registered_streams_for_tests)
}

pub use mempool_emu::{
    ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, ENV_PROFILE, ENV_RACES,
    ENV_WAIT_TIMEOUT, ENV_WORKER_DELAY,
};
