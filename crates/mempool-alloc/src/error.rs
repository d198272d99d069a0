//! The library's errors: what it finds wrong itself (a bad argument, a pointer it did not
//! hand out) and what the backend answered. Each becomes the text of `mempool_last_error`.

use mempool_hal::Error;

/// Why a call of the library failed.
#[derive(Debug, thiserror::Error)]
pub enum AllocError {
    /// An environment variable is set to a value that does not parse.
    #[error("{name}={value:?}: {why}")]
    Setting {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// The library could not start (no backend could be opened).
    #[error("the library could not start: {0}")]
    Start(String),
    /// A device index below 0 or past the devices there are.
    #[error("device {device} does not exist{why}")]
    UnknownDevice {
        /// The index given.
        device: i64,
        /// More, starting with "; " (the backend's answer, the count given to init).
        why: String,
    },
    /// A bad argument (a size, a NULL out-pointer, a stats version).
    #[error("{0}")]
    Invalid(String),
    /// A memory fraction outside (0, 1] or NaN.
    #[error("memory fraction {0} is not in (0, 1]")]
    Fraction(f64),
    /// A pointer that is not a live allocation of the library.
    #[error("{ptr:#x} is not a live allocation of the library on device {device}{why}")]
    NotLive {
        /// The pointer.
        ptr: u64,
        /// The device it was given for.
        device: i64,
        /// More, starting with "; " (freed already, waiting for streams, another device).
        why: String,
    },
    /// A free whose size differs from the allocation's.
    #[error("{ptr:#x} was allocated with {allocated} bytes, not {given}: nothing freed")]
    WrongSize {
        /// The pointer.
        ptr: u64,
        /// The size of the allocation.
        allocated: u64,
        /// The size the free gave.
        given: u64,
    },
    /// A stream the backend does not take.
    #[error("stream {stream:#x}: {why}")]
    Stream {
        /// The raw handle.
        stream: usize,
        /// Why.
        why: String,
    },
    /// An allocation that did not fit, after the retry.
    #[error("out of memory on device {device}: {size} bytes{why}")]
    OutOfMemory {
        /// The device.
        device: i64,
        /// The size asked for.
        size: u64,
        /// The reason: the memory fraction's cap, or the backend's error.
        why: String,
    },
    /// A call the backend cannot serve.
    #[error("{0}")]
    Unsupported(String),
    /// The backend's error.
    #[error(transparent)]
    Backend(#[from] Error),
}

impl AllocError {
    /// A variable with a value that does not parse.
    pub(crate) fn setting(name: &'static str, value: &str, why: &str) -> AllocError {
        AllocError::Setting { name, value: value.to_string(), why: why.to_string() }
    }
}

/// `f` if it is a memory fraction: a number in (0, 1].
pub(crate) fn check_fraction(f: f64) -> Result<f64, AllocError> {
    if f > 0.0 && f <= 1.0 { Ok(f) } else { Err(AllocError::Fraction(f)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_outside_the_interval_are_refused() {
        for bad in [f64::NAN, 0.0, -0.0, -0.5, 1.0000001, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(check_fraction(bad).is_err(), "{bad}");
        }
        for good in [f64::MIN_POSITIVE, 0.25, 1.0] {
            assert_eq!(check_fraction(good).unwrap(), good);
        }
        assert_eq!(AllocError::Fraction(f64::NAN).to_string(), "memory fraction NaN is not in (0, 1]");
    }
}
