//! The exported C functions: the driver calls of stream-ordered pools and the calls
//! around them that programs and the CUDA backend use.
//!
//! # Safety
//!
//! Every function is `unsafe extern "C"`: pointer arguments must be null or valid for
//! what the driver API documents (an out-pointer writable for one value, a props struct
//! readable, host buffers valid for their length: during the call for pageable memory,
//! until the work has run for `cuMemAllocHost` memory, which the library keeps allocated
//! that long). Handles are never dereferenced: they are registry ids checked on every
//! call, so a null, garbage, destroyed or wrong-kind handle gets an error code (a null
//! stream, and `CU_STREAM_LEGACY`, mean the current context's legacy default stream;
//! `CU_STREAM_PER_THREAD` the calling thread's per-thread default stream). Device pointers
//! are checked by the emulator. No panic crosses the boundary.
//!
//! Every call that enqueues work on a stream (copies, memsets, host functions, event
//! records, event waits, pool allocations and frees) enqueues it through one function of
//! the state, which first adds the implicit order of the legacy default stream (see
//! [`stream`]).
//!
//! One file per object: [`init`], [`device`], [`context`], [`stream`], [`event`],
//! [`memory`] (page-locked host memory and memory information), [`copy`] (copies and
//! memsets), [`pool`], [`pointer`](mod@pointer) (pointer attributes), [`proc_address`] (`cuGetProcAddress` over the driver table), [`host_func`], [`vmm`] (virtual memory), [`host_register`]
//! (registered host memory) and [`errors`]. Every function is re-exported here, so
//! `exports::NAME` names each C function whatever its file. What every entry point uses
//! (the unwind guard, errors, pointer checks) is in the crate's bottom layer, `ffi`.
//!
//! # The order of the checks
//!
//! Every call checks, in this order: that `cuInit` has succeeded
//! (`CUDA_ERROR_NOT_INITIALIZED`; `cuInit`, `cuDriverGetVersion`, `cuGetErrorName` and
//! `cuGetErrorString` work before it), its pointer and value arguments
//! (`CUDA_ERROR_INVALID_VALUE`), its handles (`CUDA_ERROR_INVALID_HANDLE`;
//! `CUDA_ERROR_INVALID_DEVICE` for a device ordinal), then the current context where the
//! call needs one (`CUDA_ERROR_INVALID_CONTEXT`).

#![allow(non_snake_case)]

pub mod context;
pub mod copy;
pub mod device;
pub mod errors;
pub mod event;
pub mod host_func;
pub mod host_register;
pub mod init;
pub mod memory;
pub mod peer;
pub mod pointer;
pub mod pool;
pub mod proc_address;
pub mod stream;
pub mod vmm;

pub use context::*;
pub use copy::*;
pub use device::*;
pub use errors::*;
pub use event::*;
pub use host_func::*;
pub use host_register::*;
pub use init::*;
pub use memory::*;
pub use peer::*;
pub use pointer::*;
pub use pool::*;
pub use proc_address::*;
pub use stream::*;
pub use vmm::*;

/// Defines `$twin`, the `_ptsz` variant of the exported `$base`: the same call, with a NULL
/// `$stream` read as the calling thread's per-thread default stream (`CU_STREAM_PER_THREAD`);
/// `CU_STREAM_LEGACY` still names the legacy default stream.
macro_rules! per_thread_twin {
    ($twin:ident = $base:ident ( $($arg:ident : $ty:ty),* ) stream $stream:ident) => {
        #[doc = concat!("`", stringify!($twin), "`: [`", stringify!($base), "`] with a NULL stream read as the ",
            "calling thread's per-thread default stream.")]
        ///
        /// # Safety
        ///
        /// As for the plain call.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $twin($($arg: $ty),*) -> CUresult {
            let $stream = crate::exports::stream::per_thread($stream);
            // SAFETY: the same arguments, under the same contract.
            let rc = unsafe { $base($($arg),*) };
            crate::ffi::as_twin(rc, stringify!($base), stringify!($twin))
        }
    };
}
pub(crate) use per_thread_twin;

/// What the files of this folder share: the bottom layer, the state, and the C types.
mod prelude {
    pub(super) use super::per_thread_twin;
    pub(super) use crate::ffi::{err, ffi, last_error_ptr, non_null, non_zero};
    pub(super) use crate::state::{
        ContextEntry, EventEntry, PoolEntry, Shim, StreamEntry, StreamKind, current_context, init, pop_current,
        push_current, set_current, shim,
    };
    pub(super) use crate::types::*;
    pub(super) use mempool_emu::CopySide;
    pub(super) use mempool_emu::cabi::HostBlock;
    pub(super) use mempool_hal::attr::AttrWidth;
    pub(super) use mempool_hal::{Device, DevicePtr, EventStatus, MemPool, RawAttrValue, StreamStatus};
    pub(super) use std::ffi::{c_char, c_int, c_uint, c_void};
    pub(super) use std::sync::Arc;
}
