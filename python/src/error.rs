//! [`MempoolError`], the exception every failure of the library, the emulator or a replay
//! becomes, and the conversions to it.

use pyo3::PyErr;
use pyo3::exceptions::PyRuntimeError;

pyo3::create_exception!(
    mempool_hal,
    MempoolError,
    PyRuntimeError,
    "A call into mempool-hal failed: the allocator library, the emulator or a trace replay. \
     The message is the library's reason (for the allocator, what `mempool_last_error()` said)."
);

/// A [`MempoolError`] with `message`.
pub(crate) fn error(message: impl Into<String>) -> PyErr {
    MempoolError::new_err(message.into())
}

/// A [`MempoolError`] for a failed `op` of the allocator library: its last error on this
/// thread, or a generic message when it left none.
pub(crate) fn library_error(op: &str) -> PyErr {
    error(mempool_alloc::last_error().unwrap_or_else(|| format!("{op} failed (the library gave no reason)")))
}

/// A [`MempoolError`] for an error of the emulator (or any backend of the hal).
pub(crate) fn hal_error(e: mempool_hal::Error) -> PyErr {
    error(e.to_string())
}
