//! The library's settings, read once from the environment at the first call.

use crate::error::AllocError;
use mempool_hal::ReuseFlags;
use std::ffi::OsString;

/// Which backend to run on: `auto` (default), `cuda`, `ascend` or `emulator` (`emu`).
pub const ENV_BACKEND: &str = "MEMPOOL_ALLOC_BACKEND";
/// Each device's pool size in bytes (`64M`, `8G`); default: the device's memory.
pub const ENV_POOL_SIZE: &str = "MEMPOOL_ALLOC_POOL_SIZE";
/// The pools' release threshold in bytes; default: the pool size (freed memory stays cached
/// until `mempool_empty_cache`, as in PyTorch's caching allocator).
pub const ENV_RELEASE_THRESHOLD: &str = "MEMPOOL_ALLOC_RELEASE_THRESHOLD";
/// The small-block layer's threshold in bytes: requests up to it are carved from pool blocks,
/// larger ones go to the pool; `0` sends every request to the pool. Default: the pool size
/// (every request through the layer).
pub const ENV_SMALL_THRESHOLD: &str = "MEMPOOL_ALLOC_SMALL_THRESHOLD";
/// The pools' cross-stream reuse flags: a comma-separated list of `follow`,
/// `opportunistic`, `internal`, or `none`; default: the backend's own defaults.
pub const ENV_REUSE: &str = "MEMPOOL_ALLOC_REUSE";
/// A memory fraction every device starts with, in (0, 1]; default: none (no cap).
pub const ENV_MEMORY_FRACTION: &str = "MEMPOOL_ALLOC_MEMORY_FRACTION";

/// Records the allocation history from the start, keeping this many events per device
/// (as `mempool_record_history`); default: off.
pub const ENV_HISTORY: &str = "MEMPOOL_ALLOC_HISTORY";

/// Every variable of the library, for tools that list or clear them.
pub const ENV_ALL: [&str; 7] = [
    ENV_BACKEND,
    ENV_POOL_SIZE,
    ENV_RELEASE_THRESHOLD,
    ENV_SMALL_THRESHOLD,
    ENV_REUSE,
    ENV_MEMORY_FRACTION,
    ENV_HISTORY,
];

/// The backend the library runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// A runtime the process already loaded, else the CUDA driver, else the Ascend runtime,
    /// else the emulator.
    Auto,
    /// The CUDA driver (`libcuda.so.1`).
    Cuda,
    /// The Ascend runtime (`libascendcl.so`, `libacl_rt.so`).
    Ascend,
    /// The CPU emulator (`MEMPOOL_EMU_*` configure it).
    Emulator,
}

/// The settings of the library.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The backend.
    pub backend: Choice,
    /// The pool size; `None`: the device's memory.
    pub pool_size: Option<u64>,
    /// The release threshold; `None`: the pool size.
    pub release_threshold: Option<u64>,
    /// The small-block threshold; `None`: the pool size.
    pub small_threshold: Option<u64>,
    /// The reuse flags; `None`: the backend's defaults.
    pub reuse: Option<ReuseFlags>,
    /// The starting memory fraction; `None`: no cap.
    pub memory_fraction: Option<f64>,
    /// Events kept per device from the start; `None`: no recording.
    pub history: Option<usize>,
}

impl Settings {
    /// The settings from the process environment.
    ///
    /// # Errors
    ///
    /// A variable that is set but does not parse, naming it.
    pub fn from_env() -> Result<Settings, AllocError> {
        Settings::read(|name| std::env::var_os(name))
    }

    /// The settings from the variables `var` gives (unset or empty: the default).
    ///
    /// # Errors
    ///
    /// A variable that is set but does not parse, naming it.
    pub fn read(var: impl Fn(&str) -> Option<OsString>) -> Result<Settings, AllocError> {
        let get = |name: &'static str| -> Result<Option<String>, AllocError> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.into_string() {
                    Ok(v) if v.trim().is_empty() => Ok(None),
                    Ok(v) => Ok(Some(v.trim().to_string())),
                    Err(v) => Err(AllocError::setting(name, &v.to_string_lossy(), "not UTF-8")),
                },
            }
        };
        let bytes = |name: &'static str| -> Result<Option<u64>, AllocError> {
            get(name)?
                .map(|v| mempool_emu::parse_bytes(&v).map_err(|why| AllocError::setting(name, &v, &why)))
                .transpose()
        };
        let backend = match get(ENV_BACKEND)?.map(|v| v.to_ascii_lowercase()) {
            None => Choice::Auto,
            Some(v) => match v.as_str() {
                "auto" => Choice::Auto,
                "cuda" => Choice::Cuda,
                "ascend" => Choice::Ascend,
                "emulator" | "emu" => Choice::Emulator,
                _ => return Err(AllocError::setting(ENV_BACKEND, &v, "not auto, cuda, ascend or emulator")),
            },
        };
        let pool_size = bytes(ENV_POOL_SIZE)?;
        if pool_size == Some(0) {
            return Err(AllocError::setting(ENV_POOL_SIZE, "0", "a pool needs at least one byte"));
        }
        let reuse = get(ENV_REUSE)?
            .map(|v| v.parse::<ReuseFlags>().map_err(|why| AllocError::setting(ENV_REUSE, &v, &why)))
            .transpose()?;
        let memory_fraction = get(ENV_MEMORY_FRACTION)?
            .map(|v| {
                let f = v.parse::<f64>().map_err(|_| AllocError::setting(ENV_MEMORY_FRACTION, &v, "not a number"))?;
                crate::error::check_fraction(f)
                    .map_err(|e| AllocError::setting(ENV_MEMORY_FRACTION, &v, &e.to_string()))
            })
            .transpose()?;
        let history = get(ENV_HISTORY)?
            .map(|v| v.parse::<usize>().map_err(|_| AllocError::setting(ENV_HISTORY, &v, "not a count of events")))
            .transpose()?;
        Ok(Settings {
            history,
            backend,
            pool_size,
            release_threshold: bytes(ENV_RELEASE_THRESHOLD)?,
            small_threshold: bytes(ENV_SMALL_THRESHOLD)?,
            reuse,
            memory_fraction,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, AllocError> {
        Settings::read(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v)))
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let s = with(&[]).unwrap();
        assert_eq!(s.backend, Choice::Auto);
        assert_eq!((s.pool_size, s.release_threshold, s.small_threshold), (None, None, None));
        assert_eq!((s.reuse, s.memory_fraction, s.history), (None, None, None));
    }

    #[test]
    fn values_parse() {
        let s = with(&[
            (ENV_BACKEND, "EMU"),
            (ENV_POOL_SIZE, "8G"),
            (ENV_RELEASE_THRESHOLD, "64M"),
            (ENV_SMALL_THRESHOLD, "0"),
            (ENV_REUSE, "follow,internal"),
            (ENV_MEMORY_FRACTION, "0.5"),
            (ENV_HISTORY, "1000"),
        ])
        .unwrap();
        assert_eq!(s.backend, Choice::Emulator);
        assert_eq!(s.pool_size, Some(8 << 30));
        assert_eq!(s.release_threshold, Some(64 << 20));
        assert_eq!(s.small_threshold, Some(0));
        assert_eq!(s.reuse, Some("follow,internal".parse().unwrap()));
        assert_eq!(s.memory_fraction, Some(0.5));
        assert_eq!(s.history, Some(1000));
    }

    #[rstest]
    #[case(ENV_BACKEND, "gpu")]
    #[case(ENV_POOL_SIZE, "lots")]
    #[case(ENV_POOL_SIZE, "0")]
    #[case(ENV_SMALL_THRESHOLD, "2.5G")]
    #[case(ENV_REUSE, "sometimes")]
    #[case(ENV_MEMORY_FRACTION, "1.5")]
    #[case(ENV_MEMORY_FRACTION, "NaN")]
    #[case(ENV_MEMORY_FRACTION, "half")]
    #[case(ENV_HISTORY, "-1")]
    fn a_bad_value_is_refused_naming_the_variable(#[case] name: &str, #[case] value: &str) {
        let e = with(&[(name, value)]).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(value), "{e}");
    }
}
