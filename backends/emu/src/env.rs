//! Settings from the environment (`MEMPOOL_EMU_*`, read by the drop-in ACL library at its
//! first call, and by [`crate::EmulatorBuilder::with_env`]) and the byte counts they accept.
//!
//! A variable that is set but does not parse is an error naming it, never a silent default:
//! `MEMPOOL_EMU_DEVICE_MEMORY=8GB` means 8 GiB, and `MEMPOOL_EMU_MODE=defered` is refused.

use crate::config::{Config, ExecutionMode, Profile, Setting};
use mempool_hal::{Error, ErrorKind, Result, code};
use std::ffi::OsString;

/// Number of devices (1 to [`crate::MAX_DEVICES`]).
pub const ENV_DEVICES: &str = "MEMPOOL_EMU_DEVICES";
/// Memory per device: a byte count ([`parse_bytes`]).
pub const ENV_DEVICE_MEMORY: &str = "MEMPOOL_EMU_DEVICE_MEMORY";
/// Pool granularity: a byte count ([`parse_bytes`]).
pub const ENV_GRANULARITY: &str = "MEMPOOL_EMU_GRANULARITY";
/// `threaded` (default) or `deferred`.
pub const ENV_MODE: &str = "MEMPOOL_EMU_MODE";
/// The stream-order checker: `1`, `on`, `true`, `yes` (default) or `0`, `off`, `false`, `no`.
pub const ENV_CHECKER: &str = "MEMPOOL_EMU_CHECKER";
/// The checker's race mode: `1`, `on`, `true`, `yes` or `0`, `off`, `false`, `no` (default).
pub const ENV_RACES: &str = "MEMPOOL_EMU_RACES";
/// The pools' behaviour (contract §12): `documented` (default), `cann-open` or `cuda`.
pub const ENV_PROFILE: &str = "MEMPOOL_EMU_PROFILE";
/// The longest any wait inside the emulator may take ([`Config::wait_timeout`]), in
/// milliseconds: `250`, `250ms` or `2s`, from 1 ms to one hour (default 60 s).
///
/// [`Config::wait_timeout`]: crate::Config::wait_timeout
pub const ENV_WAIT_TIMEOUT: &str = "MEMPOOL_EMU_WAIT_TIMEOUT";
/// Random delays of the stream workers, for tests that show a program's result does not
/// depend on timing: before each operation a stream's worker sleeps a pseudo-random time
/// below the given maximum, `500us`, `2ms` or `1s` (a number alone is microseconds; 1 µs
/// to 1 s), from a sequence fixed by an optional seed after a comma (`2ms,7`; default 1).
/// Unset: no delay.
pub const ENV_WORKER_DELAY: &str = "MEMPOOL_EMU_WORKER_DELAY";
/// Every variable above, for tools that clear or forward them all.
pub const ENV_ALL: [&str; 9] = [
    ENV_DEVICES,
    ENV_DEVICE_MEMORY,
    ENV_GRANULARITY,
    ENV_MODE,
    ENV_CHECKER,
    ENV_RACES,
    ENV_PROFILE,
    ENV_WAIT_TIMEOUT,
    ENV_WORKER_DELAY,
];

/// Parses a byte count: a number, optionally followed by a binary unit `K`, `M`, `G` or `T`
/// (either case, with or without `B` or `iB`): `4096`, `64K`, `2M`, `8GiB`.
///
/// # Errors
///
/// A message naming the text when it is not such a count or does not fit in 64 bits.
///
/// ```
/// assert_eq!(mempool_emu::parse_bytes("2M"), Ok(2 << 20));
/// assert_eq!(mempool_emu::parse_bytes("8GiB"), Ok(8 << 30));
/// assert!(mempool_emu::parse_bytes("2.5G").is_err());
/// ```
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let not_a_count = || format!("{s:?} is not a byte count (e.g. 4096, 64M, 2G)");
    let t = s.trim();
    let t = t.strip_suffix('B').unwrap_or(t);
    // `i` only after a unit: `8GiB`, not `8iB`.
    let (t, binary) = t.strip_suffix('i').map_or((t, false), |t| (t, true));
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        Some('T' | 't') => (&t[..t.len() - 1], 40),
        _ if binary => return Err(not_a_count()),
        _ => (t, 0),
    };
    let n: u64 = num.trim().parse().map_err(|_| not_a_count())?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("{s:?} is too large"))
}

/// `config` with the `MEMPOOL_EMU_*` variables that `var` has set (see the `ENV_*`
/// constants); unset or empty ones keep `config`'s value. `EmulatorBuilder::with_env`
/// reads the process environment through it.
///
/// A value that does not parse, or is out of the range [`Config::check`] enforces, is an
/// `InvalidParam` (100000) naming the variable and its value.
pub(crate) fn read_vars(mut config: Config, var: impl Fn(&str) -> Option<OsString>) -> Result<Config> {
    let get = |name: &'static str| -> Result<Option<String>> {
        match var(name) {
            None => Ok(None),
            Some(v) => match v.into_string() {
                Ok(v) if v.trim().is_empty() => Ok(None),
                Ok(v) => Ok(Some(v.trim().to_string())),
                Err(v) => Err(bad(name, &v.to_string_lossy(), "not UTF-8")),
            },
        }
    };
    if let Some(v) = get(ENV_DEVICES)? {
        let n = v.parse::<u32>().map_err(|_| bad(ENV_DEVICES, &v, "not a device count"))?;
        config.devices = n;
    }
    if let Some(v) = get(ENV_DEVICE_MEMORY)? {
        config.device_memory = parse_bytes(&v).map_err(|why| bad(ENV_DEVICE_MEMORY, &v, &why))?;
    }
    if let Some(v) = get(ENV_GRANULARITY)? {
        config.granularity = parse_bytes(&v).map_err(|why| bad(ENV_GRANULARITY, &v, &why))?;
    }
    if let Some(v) = get(ENV_MODE)? {
        config.mode = match v.to_ascii_lowercase().as_str() {
            "threaded" => ExecutionMode::Threaded,
            "deferred" => ExecutionMode::Deferred,
            _ => return Err(bad(ENV_MODE, &v, "not `threaded` or `deferred`")),
        };
    }
    let switch = |name: &'static str, v: &str| match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Ok(true),
        "0" | "off" | "false" | "no" => Ok(false),
        _ => Err(bad(name, v, "not on (1, on, true, yes) or off (0, off, false, no)")),
    };
    if let Some(v) = get(ENV_CHECKER)? {
        config.checker = switch(ENV_CHECKER, &v)?;
    }
    if let Some(v) = get(ENV_RACES)? {
        config.races = switch(ENV_RACES, &v)?;
    }
    if let Some(v) = get(ENV_PROFILE)? {
        config.profile = v.parse::<Profile>().map_err(|why| bad(ENV_PROFILE, &v, &why))?;
    }
    if let Some(v) = get(ENV_WAIT_TIMEOUT)? {
        config.wait_timeout = parse_wait(&v).ok_or_else(|| {
            bad(ENV_WAIT_TIMEOUT, &v, "not a wait time-out (milliseconds, e.g. 250, 250ms or 2s; 1 ms to 1 hour)")
        })?;
    }
    // Out of range: name the variable that set it (a default is `build`'s to report).
    if let Err((settings, why)) = config.check() {
        for setting in settings {
            let name = match setting {
                Setting::Devices => ENV_DEVICES,
                Setting::DeviceMemory => ENV_DEVICE_MEMORY,
                Setting::Granularity => ENV_GRANULARITY,
            };
            if let Some(v) = get(name)? {
                return Err(bad(name, &v, &why));
            }
        }
    }
    Ok(config)
}

/// The worker delay of [`ENV_WORKER_DELAY`] that `var` has set: `(max, seed)`, or `None`
/// when unset or empty.
///
/// # Errors
///
/// `InvalidParam` (100000) naming the variable when the value does not parse or is out of
/// range.
pub(crate) fn read_worker_delay(var: impl Fn(&str) -> Option<OsString>) -> Result<Option<(std::time::Duration, u64)>> {
    let Some(raw) = var(ENV_WORKER_DELAY) else { return Ok(None) };
    let v = raw.to_string_lossy().trim().to_string();
    if v.is_empty() {
        return Ok(None);
    }
    let why = "not a worker delay (a maximum from 1us to 1s: 500us, 2ms, 1s or microseconds alone; optionally \
               a comma and a seed: 2ms,7)";
    let (max, seed) = match v.split_once(',') {
        Some((m, seed)) => (m.trim(), seed.trim().parse::<u64>().map_err(|_| bad(ENV_WORKER_DELAY, &v, why))?),
        None => (v.as_str(), 1),
    };
    let (num, scale) = if let Some(n) = max.strip_suffix("us") {
        (n, 1)
    } else if let Some(n) = max.strip_suffix("ms") {
        (n, 1_000)
    } else if let Some(n) = max.strip_suffix('s') {
        (n, 1_000_000)
    } else {
        (max, 1)
    };
    let us =
        num.trim().parse::<u64>().ok().and_then(|n| n.checked_mul(scale)).filter(|us| (1..=1_000_000).contains(us));
    let us = us.ok_or_else(|| bad(ENV_WORKER_DELAY, &v, why))?;
    Ok(Some((std::time::Duration::from_micros(us), seed)))
}

/// A wait time-out: a whole number of milliseconds, optionally with the unit `ms` or `s`,
/// from 1 ms to one hour.
fn parse_wait(text: &str) -> Option<std::time::Duration> {
    let (num, scale) = match (text.strip_suffix("ms"), text.strip_suffix('s')) {
        (Some(n), _) => (n, 1),
        (None, Some(n)) => (n, 1000),
        (None, None) => (text, 1),
    };
    let ms = num.trim().parse::<u64>().ok()?.checked_mul(scale)?;
    (1..=3_600_000).contains(&ms).then(|| std::time::Duration::from_millis(ms))
}

fn bad(name: &str, value: &str, why: &str) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, "with_env", format!("{name}={value:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Config> {
        let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        read_vars(Config::default(), |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn byte_counts_take_binary_units() {
        for (text, want) in [("4096", 4096), ("64K", 64 << 10), ("2m", 2 << 20), ("8GiB", 8 << 30), (" 1T ", 1 << 40)] {
            assert_eq!(parse_bytes(text), Ok(want), "{text}");
        }
        assert_eq!(parse_bytes("8B"), Ok(8));
        for text in ["", "2.5G", "-1", "8X", "G", "8iB", "iB", "18446744073709551615K"] {
            assert!(parse_bytes(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn set_variables_configure_the_platform() -> Result<()> {
        let c = with(&[
            (ENV_DEVICES, "2"),
            (ENV_DEVICE_MEMORY, "8G"),
            (ENV_GRANULARITY, "64K"),
            (ENV_MODE, "Deferred"),
            (ENV_CHECKER, "off"),
            (ENV_RACES, "On"),
            (ENV_PROFILE, "CANN-open"),
            (ENV_WAIT_TIMEOUT, "2s"),
        ])?;
        assert_eq!((c.devices, c.device_memory, c.granularity), (2, 8 << 30, 64 << 10));
        assert_eq!((c.mode, c.checker, c.races), (ExecutionMode::Deferred, false, true));
        assert_eq!(c.profile, Profile::CannOpen);
        assert_eq!(c.wait_timeout, std::time::Duration::from_secs(2));
        assert_eq!(with(&[(ENV_WAIT_TIMEOUT, "250ms")])?.wait_timeout, std::time::Duration::from_millis(250));
        assert_eq!(with(&[(ENV_WAIT_TIMEOUT, "40")])?.wait_timeout, std::time::Duration::from_millis(40));
        // Unset and empty variables keep the defaults.
        let c = with(&[(ENV_MODE, " ")])?;
        assert_eq!((c.devices, c.mode, c.checker, c.races), (1, ExecutionMode::Threaded, true, false));
        assert_eq!(c.profile, Profile::Documented);
        assert_eq!(with(&[(ENV_PROFILE, "documented")])?.profile, Profile::Documented);
        Ok(())
    }

    #[test]
    fn worker_delays_take_a_unit_and_an_optional_seed() -> Result<()> {
        let read = |v: &str| {
            let v = OsString::from(v);
            read_worker_delay(move |n| (n == ENV_WORKER_DELAY).then(|| v.clone()))
        };
        let us = std::time::Duration::from_micros;
        assert_eq!(read("500us")?, Some((us(500), 1)));
        assert_eq!(read("2ms,7")?, Some((us(2_000), 7)));
        assert_eq!(read("1s")?, Some((us(1_000_000), 1)));
        assert_eq!(read("250")?, Some((us(250), 1)));
        assert_eq!(read(" ")?, None);
        assert_eq!(read_worker_delay(|_| None)?, None);
        for bad in ["0", "2s", "fast", "2ms,", "2ms,x", "-1ms"] {
            let e = read(bad).expect_err(bad);
            assert!(e.message().contains(ENV_WORKER_DELAY), "{bad}: {e}");
        }
        Ok(())
    }

    #[test]
    fn values_that_do_not_parse_are_errors_naming_the_variable() {
        for (name, value) in [
            (ENV_DEVICES, "-1"),
            (ENV_DEVICES, "two"),
            (ENV_DEVICE_MEMORY, "lots"),
            (ENV_GRANULARITY, "2.5M"),
            (ENV_MODE, "defered"),
            (ENV_CHECKER, "maybe"),
            (ENV_RACES, "2"),
            (ENV_PROFILE, "cann"),
            (ENV_PROFILE, "cann_open"),
            (ENV_WAIT_TIMEOUT, "0"),
            (ENV_WAIT_TIMEOUT, "2h"),
            (ENV_WAIT_TIMEOUT, "3600001"),
        ] {
            let e = with(&[(name, value)]).unwrap_err();
            assert_eq!(e.code(), 100_000, "{name}={value}");
            assert!(e.message().contains(name) && e.message().contains(value), "{}", e.message());
        }
        // Parsed but out of range: named too.
        for (name, value) in [
            (ENV_DEVICES, "4294967295"),
            (ENV_DEVICES, "0"),
            (ENV_DEVICE_MEMORY, "0"),
            (ENV_DEVICE_MEMORY, "65T"),
            (ENV_GRANULARITY, "2K"),
            (ENV_GRANULARITY, "32T"),
        ] {
            let e = with(&[(name, value)]).unwrap_err();
            assert_eq!(e.code(), 100_000, "{name}={value}");
            assert!(e.message().contains(name) && e.message().contains(value), "{}", e.message());
        }
        // Device memory below the granularity names whichever of the two was set.
        let e = with(&[(ENV_GRANULARITY, "1G"), (ENV_DEVICE_MEMORY, "64M")]).unwrap_err();
        assert!(e.message().contains(ENV_DEVICE_MEMORY), "{}", e.message());
    }
}
