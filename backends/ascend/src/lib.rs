//! The real Ascend CANN runtime behind the `mempool-hal` traits, loaded at run time with
//! libloading: no CANN SDK, header or library is needed to build it.
//!
//! # Layers
//!
//! - [`sys`]: hand-written `#[repr(C)]` types and function signatures of every call of
//!   [contract §8](mempool_hal::contract::c_abi), with compile-time size and offset checks.
//! - [`loader`]: the library search of [contract §9](mempool_hal::contract::loading), link-stub detection, and lazy,
//!   one-by-one symbol resolution: a runtime without the pool calls yields `NotSupported`
//!   naming the missing symbol, never a panic.
//! - [`result`]: one thin typed wrapper per C call, grouped by object (`stream::create`,
//!   `pool::malloc_async`, ...), and every rule from ACL codes to [`mempool_hal::Error`],
//!   keeping the raw code and the text of `aclGetRecentErrMsg` taken at the failing call.
//!   All calls into the runtime are made here.
//! - [`Ascend`]: the [`mempool_hal::Device`] implementation, the safe layer: handles
//!   checked live before each call, no `unsafe` code but the declarations of
//!   [`free_async`](mempool_hal::MemPool::free_async) and [`Ascend::borrow_stream`]. The
//!   device's context is made current on whichever thread calls, so the backend is
//!   `Send + Sync`.
//!
//! # Streams of other code
//!
//! A pluggable allocator receives its framework's streams as raw `aclrtStream`s.
//! [`Ascend::borrow_stream`] wraps one: every trait call takes it, and the backend never
//! destroys it (`destroy_stream` of it answers `InvalidHandle`). The loader takes a runtime
//! the process has loaded already before searching ([`LoadOptions::loaded`]), so that the
//! framework's handles and the backend's name objects of the same runtime.
//!
//! What this backend shares with the CUDA backend, written once in `mempool-backend-kit`:
//! the page-locked staging cache and the staged host copies
//! ([`mempool_backend_kit::staging`]), the liveness of stream, event and pool handles
//! ([`mempool_backend_kit::handle`]), a pool's size check and out-of-memory error
//! ([`mempool_backend_kit::pool`]), the library search and its record of every path tried
//! ([`mempool_backend_kit::search`]), and the probe table with its common pool experiments
//! ([`mempool_backend_kit::probe`]).
//!
//! `aclInit` runs once per library per process, whoever loads it first, safely when
//! several threads or backends start together; [`finalize`] gives back the backend's own
//! `aclInit` reference at the end of a program (`aclFinalizeReference`; on an older runtime
//! `aclFinalize`, only if the backend's `aclInit` initialized it), so a host program that
//! initialized ACL keeps its runtime (or leave it to process exit). The library is never
//! unloaded, since runtime threads may still be running its code.
//!
//! # On the runtime as it ships (contract §12)
//!
//! The open CANN runtime does not reuse freed pool blocks, does not release them at
//! synchronization, and does not wait for queued work when a pool is destroyed. The backend
//! is correct there and on runtimes that do all three:
//!
//! - **Out of memory with cached bytes** (RESERVED > USED, and a pool trimmed to USED could
//!   hold the request): it synchronizes the instance's context, trims the pool to USED and
//!   retries once, in the cold failure path. [`AscendPool::oom_retries`] counts the
//!   retries; a final failure's message says what was tried. A trace recorder
//!   (`mempool-trace`) sees only the final answer: read the counter through its wrapped
//!   pool. The synchronization waits for every stream of the instance, so a host function
//!   that waits for the allocating thread would deadlock it, as any synchronization would.
//! - **`destroy_pool`** synchronizes the instance's context first.
//! - **Host copies** are staged in page-locked (`aclrtMallocHost`) buffers reused from a
//!   small per-instance cache ([`Ascend::staging`]): CANN makes a copy from pageable memory
//!   wait for the whole stream. A buffer comes back to the cache from a host function
//!   ordered after its copy; buffers the cache does not keep are freed later on a user
//!   thread (never inside a host function, which CANN forbids).
//! - **The granularity probe** reads USED after synchronizing its stream, accepts only a
//!   non-zero power of two, and otherwise uses [`FALLBACK_GRANULARITY`] (2 MiB), printing
//!   one warning per process to standard error (the crate has no logger). A pool whose
//!   creation fails after `aclrtMemPoolCreate` succeeded is destroyed, not leaked.
//! - **Device setup** calls no `aclrtSetDevice` (`aclrtCreateContext` retains the device);
//!   pool-management calls check the current context with `aclrtGetCurrentContext`, so a
//!   context switched by other CANN code on the thread is noticed there; malloc, free and
//!   copies trust the per-thread cache. Each instance has one context, which
//!   `synchronize_device` covers.
//!
//! # Finding the runtime
//!
//! ```
//! use mempool_ascend::Ascend;
//! // Takes a runtime the process has loaded already (a framework's), else searches
//! // MEMPOOL_ASCEND_LIBRARY, $ASCEND_HOME_PATH/lib64, $ASCEND_TOOLKIT_HOME/lib64, the
//! // standard install folders, then the system loader.
//! match Ascend::open(0) {
//!     Ok(dev) => println!("using {}", dev.runtime().path().display()),
//!     Err(e) => eprintln!("{e}"), // `Unavailable`, listing every path tried
//! }
//! ```

#![deny(missing_docs)]

mod backend;
pub mod loader;
pub mod probe;
pub mod result;
pub mod sys;

pub use backend::{
    Ascend, AscendEvent, AscendPool, AscendStream, FALLBACK_GRANULARITY, RegisteredAllocator, StagingStats,
    StreamAllocator,
};
pub use loader::{ENV_LIBRARY, LoadOptions, Runtime, finalize, load};
