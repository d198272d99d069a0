//! RMM logs (`rmm::mr::logging_resource_adaptor`).
//!
//! The columns are the project's (`Thread,Time,Action,Pointer,Size,Stream`), but RMM
//! writes `Thread` as the native thread id, `Time` as the wall clock `HH:MM:SS.ffffff`
//! (its logger's `%H:%M:%S.%f`), `Pointer` and `Stream` as hex pointers (`0x2` being
//! CUDA's per-thread default stream, a different stream for every thread), and only
//! `allocate`, `free` and `allocate failure` rows. Logs that write seconds since the epoch
//! and `deallocate` for `free` are read too.

use super::{Format, ImportError, Imported, Place};
use crate::format::{Op, Row, Trace, data_lines};
use std::collections::HashMap;

const DAY_NS: u64 = 24 * 3600 * 1_000_000_000;

/// A stream as the log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StreamKey {
    /// `0x0` or `0x1`: the legacy default stream, one for the whole process.
    Legacy,
    /// `0x2`: the per-thread default stream of the row's thread.
    PerThread(u64),
    /// Any other stream, by its handle.
    Handle(u64),
}

/// `HH:MM:SS[.fraction]` as nanoseconds since midnight.
fn clock(field: &str) -> Result<u64, String> {
    let t = field.trim();
    let bad = || format!("time {t:?} is not a wall-clock time HH:MM:SS.ffffff");
    let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.len() != 3 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let mut v = [0u64; 3];
    for (k, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        v[k] = p.parse().map_err(|_| bad())?;
    }
    if v[0] > 23 || v[1] > 59 || v[2] > 59 {
        return Err(format!("time {t:?} is not a time of day"));
    }
    let nanos: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().map_err(|_| bad())? };
    Ok(((v[0] * 60 + v[1]) * 60 + v[2]) * 1_000_000_000 + nanos)
}

/// A hex (`0x...`) or decimal number.
fn number(field: &str, what: &str) -> Result<u64, String> {
    let t = field.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("{what} {t:?} is not a number"))
}

/// Whether `text` is an RMM log rather than the project's format: its first data row has
/// a wall-clock time, or a stream written as a hex pointer (the project writes small
/// decimal ids).
pub(super) fn is_rmm_log(text: &str) -> bool {
    data_lines(text).map(|(_, l)| l.split(',').map(str::trim).collect::<Vec<_>>()).next().is_some_and(|f| {
        f.get(1).is_some_and(|t| t.contains(':'))
            || f.get(5).is_some_and(|s| s.starts_with("0x") || s.starts_with("0X"))
    })
}

/// Seconds with up to nine decimals (a log that writes seconds since the epoch) as
/// nanoseconds.
fn seconds(field: &str) -> Result<u64, String> {
    let t = field.trim();
    let bad = || format!("time {t:?} is neither a wall-clock time HH:MM:SS.ffffff nor seconds");
    let (s, frac) = t.split_once('.').unwrap_or((t, ""));
    if s.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 9
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let secs: u64 = s.parse().map_err(|_| bad())?;
    let nanos: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().map_err(|_| bad())? };
    secs.checked_mul(1_000_000_000).and_then(|v| v.checked_add(nanos)).ok_or_else(bad)
}

/// Converts an RMM log.
pub(super) fn import(text: &str) -> Result<Imported, ImportError> {
    let mut threads: HashMap<String, u64> = HashMap::new();
    let mut streams: HashMap<StreamKey, u64> = HashMap::new();
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let (mut first, mut last, mut day) = (None::<u64>, 0u64, 0u64);
    let (mut wraps, mut reordered) = (0usize, 0usize);
    let mut clock_form: Option<bool> = None;
    for (line, l) in data_lines(text) {
        let err = |message: String| ImportError { place: Some(Place::Line(line)), message };
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != 6 {
            return Err(err(format!("expected 6 comma-separated fields, found {}", f.len())));
        }
        let thread_key = f[0].trim();
        if thread_key.is_empty() {
            return Err(err("empty thread".into()));
        }
        let next = threads.len() as u64 + 1;
        let thread = *threads.entry(thread_key.to_string()).or_insert(next);
        // Times: the wall clock, which wraps at midnight. A time more than 12 hours
        // before the previous one is the next day; a smaller step back (threads writing
        // out of order) keeps the previous time so that times never decrease. Seconds
        // (since the epoch) are taken as they are; one log uses one form.
        let wall = *clock_form.get_or_insert_with(|| f[1].contains(':'));
        let mut abs = if wall {
            let tod = clock(f[1]).map_err(err)?;
            let on = |day: u64| day.checked_mul(DAY_NS).and_then(|d| d.checked_add(tod));
            let far = || err(format!("time {:?}: too many days after the first row", f[1].trim()));
            let mut abs = on(day).ok_or_else(far)?;
            if abs.saturating_add(DAY_NS / 2) < last {
                day += 1;
                wraps += 1;
                abs = on(day).ok_or_else(far)?;
            }
            abs
        } else {
            seconds(f[1]).map_err(err)?
        };
        if abs < last {
            reordered += 1;
            abs = last;
        }
        last = abs;
        let time_ns = abs - *first.get_or_insert(abs);
        let mut stream = || -> Result<u64, ImportError> {
            let key = match number(f[5], "stream").map_err(err)? {
                0 | 1 => StreamKey::Legacy,
                2 => StreamKey::PerThread(thread),
                h => StreamKey::Handle(h),
            };
            let next = streams.len() as u64 + 1;
            Ok(*streams.entry(key).or_insert(next))
        };
        let size = || number(f[4], "size").map_err(err);
        let ptr = || number(f[3], "pointer").map_err(err);
        let op = match f[2].trim() {
            "allocate" => {
                let (ptr, size) = (ptr()?, size()?);
                if ptr == 0 {
                    return Err(err("allocate at the null pointer".into()));
                }
                if live.insert(ptr, size).is_some() {
                    return Err(err(format!("allocate at {ptr:#x}, which is still allocated")));
                }
                Op::Allocate { ptr, size, stream: stream()? }
            }
            "allocate failure" | "allocate_failure" => Op::AllocateFailure { size: size()?, stream: stream()? },
            "free" | "deallocate" => {
                let (ptr, size) = (ptr()?, size()?);
                match live.remove(&ptr) {
                    None => return Err(err(format!("free of {ptr:#x}, which is not allocated (an unmatched free)"))),
                    Some(s) if s != size => {
                        return Err(err(format!("free of {ptr:#x} with size {size}, allocated with size {s}")));
                    }
                    Some(_) => {}
                }
                Op::Free { ptr, size, stream: stream()? }
            }
            other => {
                return Err(err(format!(
                    "unknown action {other:?} (an RMM log has allocate, free and allocate failure)"
                )));
            }
        };
        rows.push(Row { thread, time_ns, op });
        lines.push(line);
    }
    let mut notes = vec![format!(
        "RMM log: {} rows, {} threads, {} streams ({} per-thread default)",
        rows.len(),
        threads.len(),
        streams.len(),
        streams.keys().filter(|k| matches!(k, StreamKey::PerThread(_))).count()
    )];
    if wraps > 0 {
        notes.push(format!("the clock passed midnight {wraps} time(s)"));
    }
    if reordered > 0 {
        notes.push(format!("{reordered} rows had a time before the previous row's and keep the previous time"));
    }
    let trace = Trace { rows, lines };
    Ok(Imported { trace, format: Format::RmmLog, notes })
}
