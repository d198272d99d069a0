//! The exported C functions of contract §8: the pool calls, the runtime calls around
//! them, and the wider runtime surface CANN's samples use.
//!
//! # Safety
//!
//! Every function is `unsafe extern "C"`: pointer arguments must be null or valid for
//! what the ACL API documents (an out-pointer writable for one value, a props struct
//! readable, host buffers valid for their length during the call: an async copy whose
//! host side is pageable memory is done before the call returns, and `aclrtMallocHost`
//! memory stays allocated until the queued work using it has run).
//! Handles are never dereferenced: they are registry ids checked on every call, so a
//! garbage, destroyed or wrong-kind handle gets an error code. A null handle is a null
//! pointer (100000), except a null stream, which means the current device's default
//! stream where the ACL API allows it. Device pointers are checked by the emulator. No
//! panic crosses the boundary.

//!
//! One file per object: [`lifecycle`], [`device`], [`device_info`] (device queries,
//! resource limits, peer access), [`context`], [`stream`], [`event`], [`memory`], [`copy`]
//! (copies and memsets), [`pool`], [`host_func`] (host functions and callbacks), [`notify`]
//! (notifications and value waits), [`exception`] (task failures as a program sees them),
//! [`vmm`] (virtual memory), [`host_register`] (registered host memory), [`allocator`] (the
//! external-allocator registry), [`base`] (package versions, element sizes, halves) and
//! [`errors`]. Every function is
//! re-exported here, so `exports::NAME` names each C function whatever its file. What
//! every entry point uses (the unwind guard, errors, pointer checks) is in the crate's
//! bottom layer, `ffi`.

#![allow(non_snake_case)]

pub mod allocator;
pub mod base;
pub mod context;
pub mod copy;
pub mod device;
pub mod device_info;
pub mod errors;
pub mod event;
pub mod exception;
pub mod host_func;
pub mod host_register;
pub mod lifecycle;
pub mod memory;
pub mod notify;
pub mod pool;
pub mod stream;
pub mod vmm;

pub use allocator::*;
pub use base::*;
pub use context::*;
pub use copy::*;
pub use device::*;
pub use device_info::*;
pub use errors::*;
pub use event::*;
pub use exception::*;
pub use host_func::*;
pub use host_register::*;
pub use lifecycle::*;
pub use memory::*;
pub use notify::*;
pub use pool::*;
pub use stream::*;
pub use vmm::*;

/// What the files of this folder share: the bottom layer, the state, and the ACL types.
mod prelude {
    pub(super) use crate::ffi::{code, dptr, err, ffi, last_code, non_null, take_last_error_ptr, timeout_ms};
    pub(super) use crate::report::Callback;
    pub(super) use crate::state::{Lifecycle, Shim, current, current_context, lifecycle, set_current, shim};
    pub(super) use mempool_ascend::sys;
    pub(super) use mempool_ascend::sys::{
        ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_MEMCPY_DEFAULT,
        ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
        aclError, aclrtCallback, aclrtCallbackBlockType, aclrtContext, aclrtEvent, aclrtEventRecordedStatus,
        aclrtHostFunc, aclrtLastErrLevel, aclrtMemAttr, aclrtMemMallocPolicy, aclrtMemPool, aclrtMemPoolAttr,
        aclrtMemPoolProps, aclrtMemcpyKind, aclrtRunMode, aclrtStream, aclrtStreamStatus,
    };
    pub(super) use mempool_emu::CopySide;
    pub(super) use mempool_emu::cabi::{HostAllocError, HostBlock};
    pub(super) use mempool_hal::attr::{AttrId, AttrWidth};
    pub(super) use mempool_hal::{Device, EventStatus, MemPool, PoolCall, PoolProps, RawAttrValue};
    pub(super) use std::ffi::{CStr, c_char, c_void};
    pub(super) use std::os::unix::ffi::OsStrExt;
    pub(super) use std::sync::{Arc, PoisonError};
}
