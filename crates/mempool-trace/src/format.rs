//! The trace format: rows, writing and parsing.

use rustc_hash::FxHashMap;
use std::fmt;

/// The header line every trace starts with.
pub const HEADER: &str = "Thread,Time,Action,Pointer,Size,Stream";

/// One pool or stream operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `allocate`: `size` bytes were handed out at `ptr` on `stream`.
    Allocate {
        /// The address handed out.
        ptr: u64,
        /// The requested size in bytes (before rounding).
        size: u64,
        /// The stream id.
        stream: u64,
    },
    /// `allocate failure`: an allocation of `size` bytes on `stream` failed.
    AllocateFailure {
        /// The requested size in bytes.
        size: u64,
        /// The stream id.
        stream: u64,
    },
    /// `free`: the allocation at `ptr` (of `size` bytes) was freed on `stream`.
    Free {
        /// The address freed.
        ptr: u64,
        /// The size the allocation was made with.
        size: u64,
        /// The stream id.
        stream: u64,
    },
    /// `record`: `event` was recorded on `stream`.
    Record {
        /// The event id (written in the Pointer column).
        event: u64,
        /// The stream id.
        stream: u64,
    },
    /// `wait`: `stream` waits for `event`.
    Wait {
        /// The event id (written in the Pointer column).
        event: u64,
        /// The stream id.
        stream: u64,
    },
    /// `sync_stream`: the host synchronized `stream`.
    SyncStream {
        /// The stream id.
        stream: u64,
    },
    /// `sync_event`: the host synchronized `event`.
    SyncEvent {
        /// The event id (written in the Pointer column).
        event: u64,
    },
    /// `sync_device`: the host synchronized the device.
    SyncDevice,
}

impl Op {
    /// The Action column's text.
    pub fn action(&self) -> &'static str {
        match self {
            Op::Allocate { .. } => "allocate",
            Op::AllocateFailure { .. } => "allocate failure",
            Op::Free { .. } => "free",
            Op::Record { .. } => "record",
            Op::Wait { .. } => "wait",
            Op::SyncStream { .. } => "sync_stream",
            Op::SyncEvent { .. } => "sync_event",
            Op::SyncDevice => "sync_device",
        }
    }
}

/// One row of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Row {
    /// The host thread that made the call: a small id (1, 2, ... in order of first call)
    /// when recorded here, or the thread id another tool wrote (RMM writes the native one).
    pub thread: u64,
    /// Nanoseconds since the start of recording.
    pub time_ns: u64,
    /// The operation.
    pub op: Op,
}

impl fmt::Display for Row {
    /// Writes the row as one CSV line, without the line break.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.time_ns / 1_000_000_000;
        let nanos = self.time_ns % 1_000_000_000;
        write!(f, "{},{secs}.{nanos:09},{},", self.thread, self.op.action())?;
        match self.op {
            Op::Allocate { ptr, size, stream } | Op::Free { ptr, size, stream } => {
                write!(f, "{ptr:#x},{size},{stream}")
            }
            Op::AllocateFailure { size, stream } => write!(f, "0x0,{size},{stream}"),
            Op::Record { event, stream } | Op::Wait { event, stream } => write!(f, "{event},,{stream}"),
            Op::SyncStream { stream } => write!(f, ",,{stream}"),
            Op::SyncEvent { event } => write!(f, "{event},,"),
            Op::SyncDevice => f.write_str(",,"),
        }
    }
}

/// A parsed trace: rows with the line numbers they came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The rows, in file order.
    pub rows: Vec<Row>,
    /// `lines[i]` is the 1-based line number of `rows[i]`.
    pub lines: Vec<usize>,
}

impl Trace {
    /// A trace of `rows`, numbered as if written by [`Trace::to_csv`].
    pub fn from_rows(rows: Vec<Row>) -> Trace {
        let lines = (2..rows.len() + 2).collect();
        Trace { rows, lines }
    }

    /// The trace as CSV text: the header, then one line per row.
    pub fn to_csv(&self) -> String {
        to_csv(&self.rows)
    }
}

/// `rows` as CSV text: the header, then one line per row.
pub fn to_csv(rows: &[Row]) -> String {
    use fmt::Write as _;
    let mut s = String::with_capacity(48 * (rows.len() + 1));
    s.push_str(HEADER);
    s.push('\n');
    for r in rows {
        let _ = writeln!(s, "{r}");
    }
    s
}

/// A problem in a trace file, at a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

fn num(field: &str, what: &str) -> Result<u64, String> {
    let t = field.trim();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse()
    };
    r.map_err(|_| format!("{what} {} is not a number", shown(t)))
}

/// A field as an error message quotes it: at most 40 characters.
fn shown(field: &str) -> String {
    const MAX: usize = 40;
    match field.char_indices().nth(MAX) {
        None => format!("{field:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &field[..cut], field.len()),
    }
}

fn time(field: &str) -> Result<u64, String> {
    let t = field.trim();
    let bad = || format!("time {} is not seconds with up to 9 decimals", shown(t));
    let (s, frac) = t.split_once('.').unwrap_or((t, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: u64 = s.parse().map_err(|_| bad())?;
    let nanos: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().map_err(|_| bad())? };
    secs.checked_mul(1_000_000_000).and_then(|x| x.checked_add(nanos)).ok_or_else(bad)
}

pub(crate) fn parse_row(line: &str) -> Result<Row, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 6 {
        return Err(format!("expected 6 comma-separated fields, found {}", f.len()));
    }
    let thread = num(f[0], "thread")?;
    let time_ns = time(f[1])?;
    let ptr = || num(f[3], "pointer");
    let event = || num(f[3], "event id");
    let size = || num(f[4], "size");
    let stream = || num(f[5], "stream");
    let op = match f[2].trim() {
        "allocate" => Op::Allocate { ptr: ptr()?, size: size()?, stream: stream()? },
        "allocate failure" => Op::AllocateFailure { size: size()?, stream: stream()? },
        "free" => Op::Free { ptr: ptr()?, size: size()?, stream: stream()? },
        "record" => Op::Record { event: event()?, stream: stream()? },
        "wait" => Op::Wait { event: event()?, stream: stream()? },
        "sync_stream" => Op::SyncStream { stream: stream()? },
        "sync_event" => Op::SyncEvent { event: event()? },
        "sync_device" => Op::SyncDevice,
        other => return Err(format!("unknown action {}", shown(other))),
    };
    Ok(Row { thread, time_ns, op })
}

/// The rows of a CSV log in the RMM columns: `(line number, trimmed line)` for every
/// non-blank line, after a byte-order mark (which some editors write) and without the
/// header, which may only come before the first row (after blank lines, say).
pub(crate) fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut header_allowed = true;
    text.lines().enumerate().filter_map(move |(i, raw)| {
        let l = raw.trim();
        if l.is_empty() || (std::mem::take(&mut header_allowed) && l.replace(' ', "") == HEADER) {
            return None;
        }
        Some((i + 1, l))
    })
}

/// Parses a trace and checks it: every row well formed, every action known, no
/// allocation of a pointer that is already live, no free of a pointer that is not live,
/// and a free's size equal to its allocation's.
///
/// Blank lines are skipped; the header line is optional.
///
/// # Errors
///
/// The first problem found, with its line number.
///
/// # Example
///
/// ```
/// let err = mempool_trace::parse("Thread,Time,Action,Pointer,Size,Stream\n1,0.0,free,0x1000,4096,1\n").unwrap_err();
/// assert_eq!(err.line, 2);
/// assert!(err.to_string().starts_with("line 2: free of unknown pointer 0x1000"));
/// ```
pub fn parse(text: &str) -> Result<Trace, ParseError> {
    let mut trace = Trace::default();
    let mut live: FxHashMap<u64, u64> = FxHashMap::default();
    for (line, l) in data_lines(text) {
        let err = |message: String| ParseError { line, message };
        let row = parse_row(l).map_err(err)?;
        match row.op {
            Op::Allocate { ptr, size, .. } => {
                if ptr == 0 {
                    return Err(err("allocate at the null pointer".into()));
                }
                if live.insert(ptr, size).is_some() {
                    return Err(err(format!("allocate at {ptr:#x}, which is still live")));
                }
            }
            Op::Free { ptr, size, .. } => match live.remove(&ptr) {
                None => return Err(err(format!("free of unknown pointer {ptr:#x}"))),
                Some(s) if s != size => {
                    return Err(err(format!("free of {ptr:#x} with size {size}, allocated with size {s}")));
                }
                Some(_) => {}
            },
            _ => {}
        }
        trace.rows.push(row);
        trace.lines.push(line);
    }
    Ok(trace)
}
