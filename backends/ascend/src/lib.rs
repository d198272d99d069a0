//! The real Ascend CANN runtime behind the `mempool-hal` traits, loaded at run time with
//! libloading: no CANN SDK, header or library is needed to build it.
//!
//! # Layers
//!
//! - [`sys`]: hand-written `#[repr(C)]` types and function signatures of every call of
//!   SPEC.md section 8, with compile-time size and offset checks.
//! - [`loader`]: the library search of SPEC.md section 9, link-stub detection, and lazy,
//!   one-by-one symbol resolution: a runtime without the pool calls yields `NotSupported`
//!   naming the missing symbol, never a panic.
//! - [`result`]: one thin typed wrapper per C call, grouped by object (`stream::create`,
//!   `pool::malloc_async`, ...), and every rule from ACL codes to [`mempool_hal::Error`],
//!   keeping the raw code and the text of `aclGetRecentErrMsg` taken at the failing call.
//!   All calls into the runtime are made here.
//! - [`Ascend`]: the [`mempool_hal::Device`] implementation, the safe layer: owned handles
//!   checked live before each call, no `unsafe` code but the declaration of
//!   [`free_async`](mempool_hal::MemPool::free_async). The device's context is made
//!   current on whichever thread calls, so the backend is `Send + Sync`.
//!
//! `aclInit` runs once per library per process, whoever loads it first, safely when
//! several threads or backends start together; [`finalize`] calls `aclFinalize` once per
//! loaded runtime at the end of a program (or leave it to process exit). The library is
//! never unloaded, since runtime threads may still be running its code.
//!
//! # Finding the runtime
//!
//! ```
//! use mempool_ascend::Ascend;
//! // Searches MEMPOOL_ASCEND_LIBRARY, $ASCEND_HOME_PATH/lib64, $ASCEND_TOOLKIT_HOME/lib64,
//! // the standard install folders, then the system loader.
//! match Ascend::open(0) {
//!     Ok(dev) => println!("using {}", dev.runtime().path().display()),
//!     Err(e) => eprintln!("{e}"), // `Unavailable`, listing every path tried
//! }
//! ```

#![deny(missing_docs)]

mod backend;
pub mod loader;
pub mod result;
pub mod sys;

pub use backend::{Ascend, AscendEvent, AscendPool, AscendStream, FALLBACK_GRANULARITY, StagingStats};
pub use loader::{ENV_LIBRARY, LoadOptions, Runtime, finalize, load};
