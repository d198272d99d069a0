//! ACL return codes to [`Error`]s, keeping the raw code and the runtime's message.

use crate::loader::Runtime;
use mempool_hal::{Error, ErrorKind, Result, code};

/// The portable kind of an ACL code when the call gives no better context.
pub fn kind_of(rc: i32) -> ErrorKind {
    match rc {
        code::ACL_ERROR_INVALID_PARAM | code::ACL_ERROR_RT_PARAM_INVALID => ErrorKind::InvalidParam,
        code::ACL_ERROR_RT_INVALID_DEVICEID => ErrorKind::InvalidDevice,
        code::ACL_ERROR_RT_CONTEXT_NULL => ErrorKind::NoContext,
        code::ACL_ERROR_RT_STREAM_CONTEXT => ErrorKind::WrongContext,
        code::ACL_ERROR_RT_INVALID_HANDLE => ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT => ErrorKind::NotSupported,
        code::ACL_ERROR_RT_MEMORY_ALLOCATION => ErrorKind::HostAllocation,
        code::ACL_ERROR_COMPILING_STUB_MODE => ErrorKind::Unavailable,
        _ => ErrorKind::Internal,
    }
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
        Error::new(kind, rc, op, msg)
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
    }
}
