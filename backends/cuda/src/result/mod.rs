//! A thin wrapper around [`sys`]: one typed function per driver call, grouped by the
//! object it works on (`cuStreamCreate` is `stream::create`, `cuMemAllocFromPoolAsync` is
//! `pool::malloc_async`), and the rules that turn a `CUresult` into an [`Error`], keeping
//! the raw code and the driver's name and description of it (and the CPU libcuda's own
//! message of the failure, where the library has one).
//!
//! Each wrapper resolves its symbol through the [`Runtime`], makes the call, and maps the
//! code; every code-to-kind rule of the backend lives in this module ([`kind_of`] and the
//! per-call refinements beside it). The wrappers are `#[inline]`: on success a call costs
//! the C call and one compare, and failures go through `#[cold]` paths.
//!
//! | `CUresult` | kind | refined, per call |
//! |---|---|---|
//! | 1 `CUDA_ERROR_INVALID_VALUE` | `InvalidParam` | `InvalidPointer` in frees, copies and memsets; `UnknownAttribute` / `ReadOnly` in attribute calls |
//! | 2 `CUDA_ERROR_OUT_OF_MEMORY` | `OutOfMemory` | `HostAllocation` in `cuMemAllocHost_v2` |
//! | 3, 4, 34, 100 (not initialized, deinitialized, stub, no device) | `Unavailable` | |
//! | 101 `CUDA_ERROR_INVALID_DEVICE` | `InvalidDevice` | |
//! | 201 `CUDA_ERROR_INVALID_CONTEXT` | `NoContext` | |
//! | 400 `CUDA_ERROR_INVALID_HANDLE` | `InvalidHandle` | `NotReady` in `cuEventElapsedTime` (an event never recorded) |
//! | 600 `CUDA_ERROR_NOT_READY` | `NotReady` | |
//! | 700, 714-719 (work on the device failed) | `Internal` | `AsyncFailure` in synchronizations and queries |
//! | 712 `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED` | `InvalidParam` | |
//! | 713 `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED` | `InvalidPointer` | |
//! | 801 `CUDA_ERROR_NOT_SUPPORTED` | `NotSupported` | |
//! | anything else | `Internal` | |
//!
//! The wrappers are crate-private and take raw handles: the safe layer passes only handles
//! it has checked to be live and of this driver (on hardware a destroyed handle is
//! undefined behaviour), and host buffers that outlive the work using them. That is the
//! promise every `// SAFETY:` comment in the submodules relies on.

use crate::loader::Runtime;
use crate::sys;
use mempool_hal::attr::{AttrAccess, AttrId};
use mempool_hal::{Error, ErrorKind, Result};

pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod event;
pub(crate) mod host_register;
pub(crate) mod memory;
pub(crate) mod pool;
pub(crate) mod stream;
pub(crate) mod vmm;

/// The portable kind of a `CUresult` when the call gives no better context (the table of
/// the [module docs](self)).
pub fn kind_of(rc: sys::CUresult) -> ErrorKind {
    match rc {
        sys::CUDA_ERROR_INVALID_VALUE => ErrorKind::InvalidParam,
        sys::CUDA_ERROR_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
        sys::CUDA_ERROR_NOT_INITIALIZED
        | sys::CUDA_ERROR_DEINITIALIZED
        | sys::CUDA_ERROR_STUB_LIBRARY
        | sys::CUDA_ERROR_NO_DEVICE => ErrorKind::Unavailable,
        sys::CUDA_ERROR_INVALID_DEVICE => ErrorKind::InvalidDevice,
        sys::CUDA_ERROR_INVALID_CONTEXT => ErrorKind::NoContext,
        sys::CUDA_ERROR_INVALID_HANDLE => ErrorKind::InvalidHandle,
        sys::CUDA_ERROR_NOT_READY => ErrorKind::NotReady,
        sys::CUDA_ERROR_NOT_SUPPORTED => ErrorKind::NotSupported,
        sys::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => ErrorKind::InvalidParam,
        sys::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED => ErrorKind::InvalidPointer,
        _ => ErrorKind::Internal,
    }
}

/// The `CUresult` of each [`ErrorKind`]: what the backend reports for an error it finds
/// itself, before any driver call (a stale handle, a size of 0, an attribute rule of the
/// contract), and what the CPU libcuda answers for the emulator's errors. It is the
/// driver's code for the same mistake, so every error of this backend is in the driver's
/// numbering; it is the one kind → code table of the CUDA numbering.
///
/// | kind | `CUresult` |
/// |---|---|
/// | `InvalidParam`, `ReadOnly`, `UnknownAttribute`, `InvalidPointer`, `StreamOrderViolation` | 1 `CUDA_ERROR_INVALID_VALUE` |
/// | `OutOfMemory`, `HostAllocation` | 2 `CUDA_ERROR_OUT_OF_MEMORY` |
/// | `Unavailable` | 100 `CUDA_ERROR_NO_DEVICE` |
/// | `InvalidDevice` | 101 `CUDA_ERROR_INVALID_DEVICE` |
/// | `NoContext`, `WrongContext` | 201 `CUDA_ERROR_INVALID_CONTEXT` |
/// | `InvalidHandle` | 400 `CUDA_ERROR_INVALID_HANDLE` |
/// | `NotReady` | 600 `CUDA_ERROR_NOT_READY` |
/// | `NotSupported` | 801 `CUDA_ERROR_NOT_SUPPORTED` |
/// | `AsyncFailure`, `Internal`, anything else | 999 `CUDA_ERROR_UNKNOWN` |
pub const fn code_of(kind: ErrorKind) -> sys::CUresult {
    match kind {
        ErrorKind::InvalidParam
        | ErrorKind::ReadOnly
        | ErrorKind::UnknownAttribute
        | ErrorKind::InvalidPointer
        | ErrorKind::StreamOrderViolation => sys::CUDA_ERROR_INVALID_VALUE,
        ErrorKind::OutOfMemory | ErrorKind::HostAllocation => sys::CUDA_ERROR_OUT_OF_MEMORY,
        ErrorKind::InvalidHandle => sys::CUDA_ERROR_INVALID_HANDLE,
        ErrorKind::InvalidDevice => sys::CUDA_ERROR_INVALID_DEVICE,
        ErrorKind::NoContext | ErrorKind::WrongContext => sys::CUDA_ERROR_INVALID_CONTEXT,
        ErrorKind::NotSupported => sys::CUDA_ERROR_NOT_SUPPORTED,
        ErrorKind::Unavailable => sys::CUDA_ERROR_NO_DEVICE,
        ErrorKind::NotReady => sys::CUDA_ERROR_NOT_READY,
        _ => sys::CUDA_ERROR_UNKNOWN,
    }
}

/// `e` (made with the portable helpers of `mempool_hal`, in ACL numbering) renumbered
/// as a `CUresult` by its kind ([`code_of`]); kind, operation, message and out-of-memory
/// details are kept.
#[cold]
pub(crate) fn renumbered(e: Error) -> Error {
    let code = e.code_in(mempool_hal::Vendor::Cuda, code_of);
    e.with_vendor_code(mempool_hal::Vendor::Cuda, code)
}

/// Whether `rc` says that work on the device failed (a sticky error: the context is
/// unusable afterwards).
fn device_work_failed(rc: sys::CUresult) -> bool {
    rc == sys::CUDA_ERROR_ILLEGAL_ADDRESS
        || (sys::CUDA_ERROR_HARDWARE_STACK_ERROR..=sys::CUDA_ERROR_LAUNCH_FAILED).contains(&rc)
}

/// The kind of a failed synchronization or query: failed device work is `AsyncFailure`.
pub(crate) fn sync_kind(rc: sys::CUresult) -> ErrorKind {
    if device_work_failed(rc) { ErrorKind::AsyncFailure } else { kind_of(rc) }
}

/// The kind of a failed `cuMemAllocHost_v2`: there 2 is host memory.
pub(crate) fn host_kind(rc: sys::CUresult) -> ErrorKind {
    if rc == sys::CUDA_ERROR_OUT_OF_MEMORY { ErrorKind::HostAllocation } else { kind_of(rc) }
}

/// The kind of a failed call that takes a device address (copies, memsets, frees): 1
/// means the address is not live memory.
pub(crate) fn pointer_kind(rc: sys::CUresult) -> ErrorKind {
    if rc == sys::CUDA_ERROR_INVALID_VALUE { ErrorKind::InvalidPointer } else { kind_of(rc) }
}

/// The kind of a failed `cuEventElapsedTime`: the backend passes only live events created
/// with timing, so 400 there means an event never recorded, which the contract calls
/// `NotReady`.
pub(crate) fn elapsed_kind(rc: sys::CUresult) -> ErrorKind {
    if rc == sys::CUDA_ERROR_INVALID_HANDLE { ErrorKind::NotReady } else { sync_kind(rc) }
}

/// The portable kind of an attribute call's failure.
pub(crate) fn attr_kind(attr: AttrId, rc: sys::CUresult) -> ErrorKind {
    match (attr.info().map(|i| i.access), rc) {
        (None, sys::CUDA_ERROR_INVALID_VALUE) => ErrorKind::UnknownAttribute,
        (Some(AttrAccess::ReadOnly), sys::CUDA_ERROR_INVALID_VALUE) => ErrorKind::ReadOnly,
        _ => kind_of(rc),
    }
}

/// Whether a failed `cuMemAllocFromPoolAsync` is the out-of-memory answer (2), reported
/// with the pool's statistics rather than the bare code.
pub(crate) fn malloc_out_of_memory(rc: sys::CUresult) -> bool {
    rc == sys::CUDA_ERROR_OUT_OF_MEMORY
}

impl Runtime {
    /// `Ok(())` for 0; otherwise an error of kind `kind(rc)` for operation `op`, with the
    /// driver's name and description of the code. Success costs one compare.
    #[inline]
    pub(crate) fn check_with(
        &self,
        rc: sys::CUresult,
        op: &'static str,
        kind: impl FnOnce(sys::CUresult) -> ErrorKind,
    ) -> Result<()> {
        if rc == sys::CUDA_SUCCESS { Ok(()) } else { Err(self.failure(rc, op, kind(rc))) }
    }

    /// The error of a failed call: `kind`, the raw `CUresult`, and the driver's name and
    /// description of it (`cuGetErrorName`, `cuGetErrorString`), followed by the library's
    /// own message of the failure where it has one (the project's CPU libcuda: a
    /// stream-order violation names the streams and positions; see
    /// [`Runtime::recent_error_message`]).
    #[cold]
    #[inline(never)]
    pub(crate) fn failure(&self, rc: sys::CUresult, op: &'static str, kind: ErrorKind) -> Error {
        Error::cuda(kind, rc, op, self.failure_text(rc, op))
    }

    /// [`Runtime::check_with`] with [`kind_of`].
    #[inline]
    pub(crate) fn check(&self, rc: sys::CUresult, op: &'static str) -> Result<()> {
        self.check_with(rc, op, kind_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds() {
        let table = [
            (1, ErrorKind::InvalidParam),
            (2, ErrorKind::OutOfMemory),
            (3, ErrorKind::Unavailable),
            (4, ErrorKind::Unavailable),
            (34, ErrorKind::Unavailable),
            (100, ErrorKind::Unavailable),
            (101, ErrorKind::InvalidDevice),
            (201, ErrorKind::NoContext),
            (400, ErrorKind::InvalidHandle),
            (500, ErrorKind::Internal),
            (600, ErrorKind::NotReady),
            (700, ErrorKind::Internal),
            (801, ErrorKind::NotSupported),
            (999, ErrorKind::Internal),
            (12_345, ErrorKind::Internal),
        ];
        for (rc, kind) in table {
            assert_eq!(kind_of(rc), kind, "{rc}");
        }
    }

    #[test]
    fn per_call_refinements() {
        assert_eq!(pointer_kind(1), ErrorKind::InvalidPointer);
        assert_eq!(pointer_kind(400), ErrorKind::InvalidHandle);
        assert_eq!(host_kind(2), ErrorKind::HostAllocation);
        assert_eq!(host_kind(1), ErrorKind::InvalidParam);
        assert_eq!(elapsed_kind(400), ErrorKind::NotReady);
        assert_eq!(elapsed_kind(600), ErrorKind::NotReady);
        for rc in [700, 714, 715, 716, 717, 718, 719] {
            assert_eq!(sync_kind(rc), ErrorKind::AsyncFailure, "{rc}");
        }
        assert_eq!(sync_kind(713), ErrorKind::InvalidPointer, "713 is not failed device work");
        assert_eq!(sync_kind(720), ErrorKind::Internal);
        assert_eq!(attr_kind(AttrId(99), 1), ErrorKind::UnknownAttribute);
        assert_eq!(attr_kind(AttrId::USED_MEM_CURRENT, 1), ErrorKind::ReadOnly);
        assert_eq!(attr_kind(AttrId::RELEASE_THRESHOLD, 1), ErrorKind::InvalidParam);
        assert!(malloc_out_of_memory(2));
        assert!(!malloc_out_of_memory(1));
    }

    #[test]
    fn the_backends_own_errors_are_renumbered_by_kind() {
        let e = renumbered(Error::invalid_param("op", "size 0"));
        assert_eq!((e.kind(), e.code(), e.vendor()), (ErrorKind::InvalidParam, 1, mempool_hal::Vendor::Cuda));
        let e = renumbered(Error::stale_handle("op", "stream"));
        assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidHandle, 400));
        assert_eq!(e.message(), "stream is destroyed or foreign");
        // Every kind gets a code the kind maps back to (or Internal's).
        for kind in [
            ErrorKind::InvalidParam,
            ErrorKind::OutOfMemory,
            ErrorKind::InvalidHandle,
            ErrorKind::InvalidDevice,
            ErrorKind::NoContext,
            ErrorKind::NotSupported,
            ErrorKind::Unavailable,
            ErrorKind::NotReady,
            ErrorKind::Internal,
        ] {
            assert_eq!(kind_of(code_of(kind)), kind, "{kind:?}");
        }
    }
}
