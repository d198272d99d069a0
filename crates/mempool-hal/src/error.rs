//! One error type for every backend: a portable [`ErrorKind`], the vendor code and the
//! [`Vendor`] whose numbering it is (an ACL number, or a CUDA `CUresult`), the operation
//! that failed and a message.
//!
//! Callers match [`Error::kind`]; logs show [`Error::code`]. Each vendor's numbering has
//! one home: ACL's numbers are [`code`] (re-exported by `mempool_ascend::sys`, with the
//! rest of CANN's), the `CUresult`s are `mempool_cuda::sys`, with the one kind → code
//! table of that numbering (`mempool_cuda::result::code_of`). A backend stamps its
//! vendor's code at its boundary ([`Error::code_in`]).

use crate::stats::PoolStats;
use std::fmt;

/// The ACL error codes of the pool API (the error table of the
/// [C ABI contract](crate::contract::c_abi)).
///
/// Whose numbering this is:
///
/// - **the emulator's** own Rust errors, on every profile (the `cuda` profile included:
///   its C library, the CPU libcuda, stamps `CUresult`s at its boundary), and the checks
///   of this crate that the contract gives a code (properties, attribute writes, the
///   helpers on [`Error`]), since CANN answers one kind of mistake with several codes;
/// - **the Ascend backend's** errors, which keep the runtime's own codes;
/// - **not the CUDA backend's**: it reports the driver's `CUresult` ([`Vendor::Cuda`]),
///   stamped at its boundary from its one table, whatever a portable check stamped.
pub mod code {
    /// Success.
    pub const ACL_SUCCESS: i32 = 0;
    /// Null pointers, bad pool properties, bad memcpy kind.
    pub const ACL_ERROR_INVALID_PARAM: i32 = 100_000;
    /// The library is a link stub, not a runtime.
    pub const ACL_ERROR_COMPILING_STUB_MODE: i32 = 100_039;
    /// Read-only attribute written, unknown attribute, bad free pointer, size overflow,
    /// pool larger than the device.
    pub const ACL_ERROR_RT_PARAM_INVALID: i32 = 107_000;
    /// Device id out of range.
    pub const ACL_ERROR_RT_INVALID_DEVICEID: i32 = 107_001;
    /// No current context/device.
    pub const ACL_ERROR_RT_CONTEXT_NULL: i32 = 107_002;
    /// Stream used outside its context.
    pub const ACL_ERROR_RT_STREAM_CONTEXT: i32 = 107_003;
    /// Destroyed or foreign stream/event handle.
    pub const ACL_ERROR_RT_INVALID_HANDLE: i32 = 107_017;
    /// The runtime lacks the pool API.
    pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT: i32 = 207_000;
    /// Host or driver memory could not be allocated.
    pub const ACL_ERROR_RT_MEMORY_ALLOCATION: i32 = 207_001;
    /// Pool exhausted, non-zero HIGH write, threshold above the pool size, trim misuse,
    /// unknown pool handle in destroy/malloc/trim, null stream in free.
    pub const ACL_ERROR_RT_INTERNAL_ERROR: i32 = 507_000;
    /// An argument the driver's kernel module refused (`EINVAL`, `EADDRINUSE`): a virtual
    /// memory mapping outside its reservation, over a mapping, misaligned, an unmapping of
    /// nothing, a physical chunk whose size is not a multiple of the granularity.
    pub const ACL_ERROR_RT_DRV_INTERNAL_ERROR: i32 = 507_899;
    /// A stream synchronization with a time limit ran out of time.
    pub const ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: i32 = 507_046;
    /// An event synchronization with a time limit ran out of time.
    pub const ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: i32 = 507_047;

    // Host registration (contract §15).
    /// A host range that overlaps one registered already (`aclrtHostRegister*`).
    pub const ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED: i32 = 507_910;
    /// An unregister of an address that is not the start of a registered host range.
    pub const ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED: i32 = 507_911;
}

/// `""` for ACL codes (as messages have always read), `"CUDA "` for a `CUresult`.
fn vendor_prefix(v: Vendor) -> &'static str {
    match v {
        Vendor::Acl => "",
        Vendor::Cuda => "CUDA ",
    }
}

/// The portable classification of an [`Error`]. Match on this; log the vendor code.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A parameter is out of its documented range (bad properties, size 0 or overflowing,
    /// an attribute value that is not allowed, trim below USED, ...).
    InvalidParam,
    /// A read-only attribute was written through the raw path.
    ReadOnly,
    /// The attribute id is not one of the documented ids.
    UnknownAttribute,
    /// The pool cannot satisfy the allocation. See [`Error::oom`] and rule g of the
    /// [allocation contract](crate::contract::allocation).
    OutOfMemory,
    /// A pointer that is not the start of a live allocation (interior, double free,
    /// unknown address), or a copy range outside live memory.
    InvalidPointer,
    /// A destroyed, stale or foreign stream, event or pool handle.
    InvalidHandle,
    /// A device id that does not exist.
    InvalidDevice,
    /// A stream used with a pool or context of another device.
    WrongContext,
    /// No device or context is current on the calling thread.
    NoContext,
    /// The runtime was found but lacks the feature (for example an old runtime without
    /// the pool calls).
    NotSupported,
    /// No runtime could be loaded (or only a link stub was found); see
    /// [loading](crate::contract::loading).
    Unavailable,
    /// An operation would break stream order (use after free, unordered access); see the
    /// [checker](crate::contract::checker).
    StreamOrderViolation,
    /// Host memory could not be obtained.
    HostAllocation,
    /// Work enqueued on a stream failed when it ran; reported by the next synchronization.
    AsyncFailure,
    /// The work a query depends on has not completed yet (for example an event's).
    NotReady,
    /// Anything else the runtime reports.
    Internal,
}

impl ErrorKind {
    /// A short lower-case name of the kind, as printed in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidParam => "invalid parameter",
            ErrorKind::ReadOnly => "read-only attribute",
            ErrorKind::UnknownAttribute => "unknown attribute",
            ErrorKind::OutOfMemory => "out of memory",
            ErrorKind::InvalidPointer => "invalid pointer",
            ErrorKind::InvalidHandle => "invalid handle",
            ErrorKind::InvalidDevice => "invalid device",
            ErrorKind::WrongContext => "wrong context",
            ErrorKind::NoContext => "no current context",
            ErrorKind::NotSupported => "not supported",
            ErrorKind::Unavailable => "runtime unavailable",
            ErrorKind::StreamOrderViolation => "stream-order violation",
            ErrorKind::HostAllocation => "host allocation failed",
            ErrorKind::AsyncFailure => "asynchronous failure",
            ErrorKind::NotReady => "not ready",
            ErrorKind::Internal => "internal error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an out-of-memory error knows about the pool at the failing call, so a user can
/// tell fragmentation (much free space, no range large enough) from exhaustion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OomInfo {
    /// The rounded size that was requested, in bytes.
    pub requested: u64,
    /// The pool's statistics at the failing call.
    pub stats: PoolStats,
    /// The pool's size (`max_size` after rounding), in bytes.
    pub pool_size: u64,
    /// The largest contiguous range of unreserved address space, in bytes.
    pub largest_free_range: u64,
    /// The largest cached block (freed, still reserved), in bytes.
    pub largest_cached_block: u64,
    /// `Some` when the *device*, not the pool, is full: the bytes the device could still
    /// reserve across all its pools and synchronous allocations (less than `requested`;
    /// contract §2). `None` when the pool itself cannot serve the request, or the backend
    /// does not know.
    pub device_free: Option<u64>,
}

/// Whose numbering an [`Error`]'s code is in.
///
/// The emulator and the Ascend backend report ACL numbers (see [`code`]), so a log line
/// reads the same whichever of them produced it; the CUDA backend and the CPU libcuda
/// report the driver's `CUresult`, since those are the numbers their users look up. Match
/// on [`Error::kind`] for portable handling.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Vendor {
    /// Ascend CANN's ACL numbering ([`code`]): the emulator's and the Ascend backend's.
    #[default]
    Acl,
    /// A CUDA driver `CUresult` (`CUDA_ERROR_INVALID_VALUE` is 1, `CUDA_ERROR_OUT_OF_MEMORY`
    /// 2, ...).
    Cuda,
}

impl Vendor {
    /// A short name, as printed in messages: `"ACL"` or `"CUDA"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Acl => "ACL",
            Vendor::Cuda => "CUDA",
        }
    }
}

/// The one error type of every backend.
///
/// It carries a portable [`ErrorKind`], the vendor code with its [`Vendor`] (ACL
/// numbering, see [`code`], unless the error comes from the CUDA driver), the operation
/// that failed (`"malloc_async"`, `"aclrtMemPoolCreate"`, ...) and a message.
/// Out-of-memory errors carry an [`OomInfo`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op}: {message} ({kind}, {}code {code})", vendor_prefix(*.vendor))]
pub struct Error {
    kind: ErrorKind,
    code: i32,
    vendor: Vendor,
    op: &'static str,
    message: String,
    oom: Option<Box<OomInfo>>,
}

impl Error {
    /// Makes an error. Backends use this; users usually only read errors.
    pub fn new(kind: ErrorKind, code: i32, op: &'static str, message: impl Into<String>) -> Self {
        Error { kind, code, vendor: Vendor::Acl, op, message: message.into(), oom: None }
    }

    /// Makes an error whose code is a CUDA driver `CUresult`.
    pub fn cuda(kind: ErrorKind, code: i32, op: &'static str, message: impl Into<String>) -> Self {
        Error { vendor: Vendor::Cuda, ..Error::new(kind, code, op, message) }
    }

    /// The code of this error in `vendor`'s numbering: its own code when it is in that
    /// numbering already, otherwise the code `table` gives its kind. A backend or a C
    /// library stamps its vendor's code at its boundary with it, from its vendor's one
    /// table (`mempool_cuda::result::code_of`, `mempool_ascend::result::code_of`).
    pub fn code_in(&self, vendor: Vendor, table: impl FnOnce(ErrorKind) -> i32) -> i32 {
        if self.vendor == vendor { self.code } else { table(self.kind) }
    }

    /// Returns the same error with its code renumbered as `vendor`'s `code` (a backend
    /// translating the emulator's ACL numbers into its own vendor's, say).
    pub fn with_vendor_code(mut self, vendor: Vendor, code: i32) -> Self {
        self.vendor = vendor;
        self.code = code;
        self
    }

    /// Makes an out-of-memory error (code 507000) carrying `info`.
    pub fn out_of_memory(op: &'static str, info: OomInfo) -> Self {
        let pool = format!(
            "used {}, reserved {}, pool size {}, largest free range {}, largest cached block {}",
            info.stats.used_current,
            info.stats.reserved_current,
            info.pool_size,
            info.largest_free_range,
            info.largest_cached_block,
        );
        let message = match info.device_free {
            Some(free) => format!(
                "the device, not the pool, is full: {} bytes requested, {free} bytes of device memory left to reserve \
                 (the pool: {pool})",
                info.requested
            ),
            None => format!("pool cannot satisfy {} bytes: {pool}", info.requested),
        };
        Error {
            kind: ErrorKind::OutOfMemory,
            code: code::ACL_ERROR_RT_INTERNAL_ERROR,
            vendor: Vendor::Acl,
            op,
            message,
            oom: Some(Box::new(info)),
        }
    }

    /// A parameter outside its documented range: `InvalidParam`, code 107000.
    #[cold]
    pub fn invalid_param(op: &'static str, message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID, op, message)
    }

    /// A pointer that is not the start of a live allocation (interior, freed already,
    /// unknown), or a range outside live memory: `InvalidPointer`, code 107000.
    #[cold]
    pub fn invalid_pointer(op: &'static str, message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID, op, message)
    }

    /// A call that would break stream order (see the [checker](crate::contract::checker)):
    /// `StreamOrderViolation`, code 107000.
    #[cold]
    pub fn stream_order_violation(op: &'static str, message: impl Into<String>) -> Self {
        Error::new(ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID, op, message)
    }

    /// A destroyed, stale or foreign stream or event handle: `InvalidHandle`, code 107017,
    /// with the message "`what` is destroyed or foreign".
    #[cold]
    pub fn stale_handle(op: &'static str, what: impl fmt::Display) -> Self {
        Error::new(
            ErrorKind::InvalidHandle,
            code::ACL_ERROR_RT_INVALID_HANDLE,
            op,
            format!("{what} is destroyed or foreign"),
        )
    }

    /// A destroyed, foreign or unknown pool handle: `InvalidHandle`, with the code CANN
    /// gives for that call (see [`PoolCall`]), and the message "`what` is destroyed or
    /// foreign".
    #[cold]
    pub fn destroyed_pool(op: &'static str, call: PoolCall, what: impl fmt::Display) -> Self {
        let code = match call {
            PoolCall::Attribute => code::ACL_ERROR_RT_PARAM_INVALID,
            PoolCall::Lifetime => code::ACL_ERROR_RT_INTERNAL_ERROR,
        };
        Error::new(ErrorKind::InvalidHandle, code, op, format!("{what} is destroyed or foreign"))
    }

    /// The portable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The vendor code, in the numbering of [`Error::vendor`]: an ACL number (see
    /// [`code`]) or a CUDA `CUresult`.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// Whose numbering [`Error::code`] is in.
    pub fn vendor(&self) -> Vendor {
        self.vendor
    }

    /// The operation that failed.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The message, without kind, code or operation.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For [`ErrorKind::OutOfMemory`]: the pool's state at the failing call.
    pub fn oom(&self) -> Option<&OomInfo> {
        self.oom.as_deref()
    }

    /// Returns the same error (kind, code, out-of-memory details) with another message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// Returns the same error reported for another operation name.
    pub fn with_op(mut self, op: &'static str) -> Self {
        self.op = op;
        self
    }
}

/// The kind of pool call that met a destroyed or unknown pool, which decides its code
/// (the [lifetime contract](crate::contract::statistics)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolCall {
    /// Reading or writing an attribute: code 107000.
    Attribute,
    /// Destroy, allocate, trim: code 507000.
    Lifetime,
}

/// The result type of every fallible call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cuda_error_says_whose_code_it_is() {
        let e = Error::cuda(ErrorKind::InvalidParam, 1, "cuMemPoolCreate", "bad props");
        assert_eq!((e.vendor(), e.code(), e.kind()), (Vendor::Cuda, 1, ErrorKind::InvalidParam));
        assert_eq!(e.to_string(), "cuMemPoolCreate: bad props (invalid parameter, CUDA code 1)");
        let a = Error::invalid_param("set_attr", "no");
        assert_eq!(a.vendor(), Vendor::Acl);
        assert_eq!(a.to_string(), "set_attr: no (invalid parameter, code 107000)");
        let r = a.with_vendor_code(Vendor::Cuda, 1);
        assert_eq!((r.vendor(), r.code(), r.kind()), (Vendor::Cuda, 1, ErrorKind::InvalidParam));
    }

    #[test]
    fn display_names_op_kind_and_code() {
        let e = Error::new(ErrorKind::ReadOnly, code::ACL_ERROR_RT_PARAM_INVALID, "set_attr", "no");
        assert_eq!(e.to_string(), "set_attr: no (read-only attribute, code 107000)");
        assert_eq!(e.kind(), ErrorKind::ReadOnly);
        assert_eq!(e.code(), 107_000);
        assert!(e.oom().is_none());
    }

    #[test]
    fn oom_carries_snapshot() {
        let info = OomInfo {
            requested: 8,
            stats: PoolStats { reserved_current: 4, reserved_high: 4, used_current: 4, used_high: 4 },
            pool_size: 6,
            largest_free_range: 2,
            largest_cached_block: 0,
            device_free: None,
        };
        let e = Error::out_of_memory("malloc_async", info);
        assert_eq!(e.kind(), ErrorKind::OutOfMemory);
        assert_eq!(e.code(), code::ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(e.oom().unwrap().largest_free_range, 2);
        assert!(e.message().contains("largest free range 2"));
        assert!(e.message().starts_with("pool cannot satisfy 8 bytes"));
        let e = Error::out_of_memory("malloc_async", OomInfo { device_free: Some(6), ..info });
        assert_eq!((e.kind(), e.code()), (ErrorKind::OutOfMemory, code::ACL_ERROR_RT_INTERNAL_ERROR));
        assert!(e.message().contains("the device, not the pool, is full"), "{}", e.message());
        assert!(e.message().contains("6 bytes of device memory left"), "{}", e.message());
    }
}
