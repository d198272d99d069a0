//! A thin wrapper around [`sys`]: one typed function per C call, grouped by
//! the object it works on (`aclrtCreateStream` is `stream::create`, `aclrtMemPoolMallocAsync`
//! is `pool::malloc_async`), and the rules that turn ACL codes into [`Error`]s, keeping the
//! raw code and the runtime's message.
//!
//! Each wrapper resolves its symbol through the [`Runtime`], makes the call, and maps the
//! code; every code-to-kind rule of the backend lives in this module ([`kind_of`] and the
//! per-call refinements beside it). The wrappers are `#[inline]`: on success a call costs
//! the C call and one compare, and failures go through `#[cold]` paths.
//!
//! The wrappers are crate-private and take raw handles: the safe layer passes only handles
//! it has checked to be live and of this runtime (on hardware a destroyed handle is
//! undefined behaviour), and host buffers that outlive the work using them. That is the
//! promise every `// SAFETY:` comment in the submodules relies on.

use crate::loader::Runtime;
use crate::sys;
use mempool_hal::attr::{AttrAccess, AttrId};
use mempool_hal::{Error, ErrorKind, Result, code};

pub(crate) mod allocator;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod event;
pub(crate) mod host_register;
pub(crate) mod memory;
pub(crate) mod pool;
pub(crate) mod stream;
pub(crate) mod vmm;

/// The portable kind of an ACL code when the call gives no better context.
///
/// - 207001 (`ACL_ERROR_RT_MEMORY_ALLOCATION`) and 207018 (`ACL_ERROR_RT_DEVICE_OOM`) are
///   `OutOfMemory`: on hardware 207001 is mostly the driver or the device running out of
///   memory. Only `aclrtMallocHost` refines 207001 to `HostAllocation`.
/// - 107011 (`ACL_ERROR_RT_STREAM_SUBSCRIBE`: host functions and report callbacks mixed on
///   one stream) is `InvalidParam`; 507007 (`ACL_ERROR_RT_CONTEXT_RELEASE_ERROR`: a device
///   reset with no `aclrtSetDevice` left to undo) is `NoContext`. Both are named in the
///   error's message ([`code_name`]).
pub fn kind_of(rc: i32) -> ErrorKind {
    match rc {
        code::ACL_ERROR_INVALID_PARAM | code::ACL_ERROR_RT_PARAM_INVALID => ErrorKind::InvalidParam,
        code::ACL_ERROR_RT_INVALID_DEVICEID => ErrorKind::InvalidDevice,
        code::ACL_ERROR_RT_CONTEXT_NULL => ErrorKind::NoContext,
        code::ACL_ERROR_RT_STREAM_CONTEXT => ErrorKind::WrongContext,
        code::ACL_ERROR_RT_INVALID_HANDLE => ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT => ErrorKind::NotSupported,
        code::ACL_ERROR_RT_MEMORY_ALLOCATION | sys::ACL_ERROR_RT_DEVICE_OOM => ErrorKind::OutOfMemory,
        sys::ACL_ERROR_RT_STREAM_SUBSCRIBE => ErrorKind::InvalidParam,
        sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR => ErrorKind::NoContext,
        code::ACL_ERROR_COMPILING_STUB_MODE => ErrorKind::Unavailable,
        code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT | code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT => ErrorKind::NotReady,
        code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED => ErrorKind::InvalidParam,
        code::ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED => ErrorKind::InvalidPointer,
        _ => ErrorKind::Internal,
    }
}

/// The ACL code this library's numbering gives an error of `kind` that carries no ACL
/// number of its own (every error of the emulator and of this backend carries one; the
/// drop-in `libacl_rt.so` stamps the rest with this at its boundary): the code CANN
/// answers most often for that kind of mistake.
pub fn code_of(kind: ErrorKind) -> sys::aclError {
    match kind {
        ErrorKind::InvalidParam
        | ErrorKind::ReadOnly
        | ErrorKind::UnknownAttribute
        | ErrorKind::InvalidPointer
        | ErrorKind::StreamOrderViolation => sys::ACL_ERROR_RT_PARAM_INVALID,
        ErrorKind::InvalidHandle => sys::ACL_ERROR_RT_INVALID_HANDLE,
        ErrorKind::InvalidDevice => sys::ACL_ERROR_RT_INVALID_DEVICEID,
        ErrorKind::WrongContext => sys::ACL_ERROR_RT_STREAM_CONTEXT,
        ErrorKind::NoContext => sys::ACL_ERROR_RT_CONTEXT_NULL,
        ErrorKind::NotSupported => sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        ErrorKind::HostAllocation => sys::ACL_ERROR_RT_MEMORY_ALLOCATION,
        ErrorKind::Unavailable => sys::ACL_ERROR_COMPILING_STUB_MODE,
        ErrorKind::OutOfMemory | ErrorKind::AsyncFailure | ErrorKind::NotReady | ErrorKind::Internal => {
            sys::ACL_ERROR_RT_INTERNAL_ERROR
        }
        // A kind added later: the catch-all code until it has a row.
        _ => sys::ACL_ERROR_RT_INTERNAL_ERROR,
    }
}

/// The CANN name and meaning of the codes whose kind alone would not say what happened;
/// a failure with one of them has it at the start of its message.
pub fn code_name(rc: i32) -> Option<&'static str> {
    Some(match rc {
        code::ACL_ERROR_RT_MEMORY_ALLOCATION => "ACL_ERROR_RT_MEMORY_ALLOCATION (driver or device memory exhausted)",
        sys::ACL_ERROR_RT_DEVICE_OOM => "ACL_ERROR_RT_DEVICE_OOM (device memory exhausted)",
        sys::ACL_ERROR_RT_STREAM_SUBSCRIBE => {
            "ACL_ERROR_RT_STREAM_SUBSCRIBE (the stream is subscribed for report callbacks: host functions and callbacks do not mix on one stream)"
        }
        sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR => {
            "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (a device reset or context release with nothing left to release)"
        }
        sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR => {
            "ACL_ERROR_RT_DRV_INTERNAL_ERROR (the driver refused the request: an address not reserved or already mapped, a size not a multiple of the granularity)"
        }
        code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED => {
            "ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED (the host range overlaps one registered already)"
        }
        code::ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED => {
            "ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED (no registered host range starts there)"
        }
        _ => return None,
    })
}

/// The kind of a failed `aclrtMallocHost`: there 207001 is host memory.
pub(crate) fn host_kind(rc: i32) -> ErrorKind {
    if rc == code::ACL_ERROR_RT_MEMORY_ALLOCATION { ErrorKind::HostAllocation } else { kind_of(rc) }
}

/// The kind of a failed call that takes a device address (copies, memsets, frees):
/// 107000 means the address is not live memory.
pub(crate) fn pointer_kind(rc: i32) -> ErrorKind {
    if rc == code::ACL_ERROR_RT_PARAM_INVALID { ErrorKind::InvalidPointer } else { kind_of(rc) }
}

/// The kind of a failed `aclrtMemPoolTrimTo`: 507000 is the runtime's answer to a bad
/// argument there.
pub(crate) fn trim_kind(rc: i32) -> ErrorKind {
    if rc == code::ACL_ERROR_RT_INTERNAL_ERROR { ErrorKind::InvalidParam } else { kind_of(rc) }
}

/// The portable kind of an attribute call's failure.
pub(crate) fn attr_kind(attr: AttrId, rc: i32) -> ErrorKind {
    match (attr.info().map(|i| i.access), rc) {
        (None, code::ACL_ERROR_RT_PARAM_INVALID) => ErrorKind::UnknownAttribute,
        (Some(AttrAccess::ReadOnly), code::ACL_ERROR_RT_PARAM_INVALID) => ErrorKind::ReadOnly,
        (_, code::ACL_ERROR_RT_INTERNAL_ERROR) => ErrorKind::InvalidParam,
        _ => kind_of(rc),
    }
}

/// The kind of a failed virtual-memory call: CANN answers the driver's refusals of an
/// address or size (not reserved, already mapped, not the start of a mapping, not a
/// multiple of 2 MiB) with 507899, which is `InvalidParam` there.
pub(crate) fn vmm_kind(rc: i32) -> ErrorKind {
    if rc == sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR { ErrorKind::InvalidParam } else { kind_of(rc) }
}

/// Whether a failed `aclrtMemPoolMallocAsync` is the pool's out-of-memory answer (507000),
/// reported with the pool's statistics rather than as an internal error.
pub(crate) fn malloc_out_of_memory(rc: i32) -> bool {
    rc == code::ACL_ERROR_RT_INTERNAL_ERROR
}

impl Runtime {
    /// `Ok(())` for 0; otherwise an error of kind `kind(rc)` for operation `op`, with the
    /// runtime's recent error message taken now (it is per thread and the next call
    /// would overwrite it). Success costs one compare: the message is only read on failure.
    #[inline]
    pub(crate) fn check_with(&self, rc: i32, op: &'static str, kind: impl FnOnce(i32) -> ErrorKind) -> Result<()> {
        if rc == code::ACL_SUCCESS { Ok(()) } else { Err(self.failure(rc, op, kind(rc))) }
    }

    /// The error of a failed call: `kind`, the raw code `rc`, and the runtime's recent error
    /// message, taken now.
    #[cold]
    #[inline(never)]
    pub(crate) fn failure(&self, rc: i32, op: &'static str, kind: ErrorKind) -> Error {
        let msg = self.recent_error_message().unwrap_or_else(|| "the runtime gave no message".to_string());
        match code_name(rc) {
            Some(name) => Error::new(kind, rc, op, format!("{name}: {msg}")),
            None => Error::new(kind, rc, op, msg),
        }
    }

    /// [`Runtime::check_with`] with [`kind_of`].
    #[inline]
    pub(crate) fn check(&self, rc: i32, op: &'static str) -> Result<()> {
        self.check_with(rc, op, kind_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds() {
        assert_eq!(kind_of(100_000), ErrorKind::InvalidParam);
        assert_eq!(kind_of(107_017), ErrorKind::InvalidHandle);
        assert_eq!(kind_of(107_002), ErrorKind::NoContext);
        assert_eq!(kind_of(207_000), ErrorKind::NotSupported);
        assert_eq!(kind_of(507_000), ErrorKind::Internal);
        assert_eq!(kind_of(207_001), ErrorKind::OutOfMemory);
        assert_eq!(kind_of(207_018), ErrorKind::OutOfMemory);
        assert_eq!(kind_of(107_011), ErrorKind::InvalidParam);
        assert_eq!(kind_of(507_007), ErrorKind::NoContext);
        assert_eq!(host_kind(207_001), ErrorKind::HostAllocation);
        assert_eq!(kind_of(507_910), ErrorKind::InvalidParam);
        assert_eq!(kind_of(507_911), ErrorKind::InvalidPointer);
        for rc in [207_001, 207_018, 107_011, 507_007, 507_899, 507_910, 507_911] {
            assert!(code_name(rc).is_some_and(|n| n.starts_with("ACL_ERROR_RT_")), "{rc}");
        }
        assert_eq!(code_name(507_000), None);
    }

    #[test]
    fn per_call_refinements() {
        assert_eq!(pointer_kind(107_000), ErrorKind::InvalidPointer);
        assert_eq!(pointer_kind(107_017), ErrorKind::InvalidHandle);
        assert_eq!(trim_kind(507_000), ErrorKind::InvalidParam);
        assert_eq!(attr_kind(AttrId(99), 107_000), ErrorKind::UnknownAttribute);
        assert_eq!(attr_kind(AttrId::USED_MEM_CURRENT, 107_000), ErrorKind::ReadOnly);
        assert!(malloc_out_of_memory(507_000));
        assert_eq!(vmm_kind(507_899), ErrorKind::InvalidParam);
        assert_eq!(vmm_kind(207_001), ErrorKind::OutOfMemory);
        assert_eq!(kind_of(507_899), ErrorKind::Internal);
    }
}
