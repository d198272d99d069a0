//! Converting the traces people have into the project's format.
//!
//! [`import`] reads, by content (a leading gzip header is undone first):
//!
//! - a **PyTorch memory snapshot**, the pickle `torch.cuda.memory._dump_snapshot()` writes
//!   (plain or gzipped). The events of one device become rows: `alloc` an `allocate`,
//!   `free_requested` (the program's free) a `free`, `oom` an `allocate failure`;
//!   `free_completed` and the `segment_*`, `snapshot` and `user_defined` events are
//!   dropped. Streams (raw `cudaStream_t` values) become 1, 2, ... in order of first
//!   mention; `Time` is seconds since the first event; `Thread` is 1 (snapshots do not
//!   say). Memory
//!   allocated before recording started is reconstructed by rows at time 0, first: one
//!   `allocate` per block whose first mention is its free (address and size from the
//!   free), then one per block still active at the dump (`segments`) that no event
//!   mentions (its `requested_size`).
//! - an **RMM log** (`rmm::mr::logging_resource_adaptor`, told by a wall-clock time or a
//!   hex stream in its first row): wall-clock times `HH:MM:SS.ffffff` (passing midnight
//!   adds a day), or seconds since the epoch, become seconds since the first row;
//!   native thread ids become 1, 2, ... in order of first appearance; stream `0x2`, CUDA's
//!   per-thread default stream, becomes a stream of its own per thread, `0x0` and `0x1`
//!   (the legacy default stream) one stream, any other handle its own stream.
//! - a trace already in the project's format (seconds in `Time`), checked and written back.
//!
//! Every import checks what the pool would: no allocation at a live address, every free
//! of a live allocation of the same size. A problem names its line (text) or its event
//! index (snapshots), a pickle that cannot be read its byte offset; nothing in a bad file
//! panics.
//!
//! ```
//! let log = "Thread,Time,Action,Pointer,Size,Stream\n\
//!            140213,23:59:59.999000,allocate,0x7f0000000000,1000,0x2\n\
//!            140377,00:00:00.000500,allocate,0x7f0000200000,2000,0x2\n\
//!            140213,00:00:00.001000,free,0x7f0000000000,1000,0x2\n";
//! let imported = mempool_trace::import::import(log.as_bytes(), &Default::default())?;
//! assert_eq!(
//!     imported.trace.to_csv(),
//!     "Thread,Time,Action,Pointer,Size,Stream\n\
//!      1,0.000000000,allocate,0x7f0000000000,1000,1\n\
//!      2,0.001500000,allocate,0x7f0000200000,2000,2\n\
//!      1,0.002000000,free,0x7f0000000000,1000,1\n"
//! );
//! # Ok::<(), mempool_trace::import::ImportError>(())
//! ```

mod pickle;
mod rmm;

use crate::format::Trace;
use std::fmt;
use std::io::Read as _;

/// The formats [`import`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A PyTorch memory snapshot pickle.
    Snapshot,
    /// An RMM log with wall-clock times.
    RmmLog,
    /// The project's own format.
    Project,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Snapshot => "PyTorch memory snapshot",
            Format::RmmLog => "RMM log",
            Format::Project => "mempool-trace CSV",
        })
    }
}

/// How to import.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// The device whose events a snapshot gives (default: the only one with events).
    pub device: Option<usize>,
}

/// A converted trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The rows, in the project's format.
    pub trace: Trace,
    /// What the input was.
    pub format: Format,
    /// What the conversion did, in words (dropped events, reconstructed rows, ...).
    pub notes: Vec<String>,
}

/// Where in the input a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A 1-based line of a text input.
    Line(usize),
    /// A 0-based index into a snapshot's events (`device_traces[device][i]`).
    Event(usize),
}

/// An input that could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// Where, when the problem has a place.
    pub place: Option<Place>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.place {
            Some(Place::Line(l)) => write!(f, "line {l}: {}", self.message),
            Some(Place::Event(i)) => write!(f, "event {i}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// Converts `input` (a snapshot pickle, an RMM log or a project trace, each optionally
/// gzipped) to the project's format; see the [module docs](self) for the rules.
///
/// # Errors
///
/// An input that is none of those formats, or breaks their rules, with the place of the
/// first problem.
pub fn import(input: &[u8], options: &ImportOptions) -> Result<Imported, ImportError> {
    let whole = |message: String| ImportError { place: None, message };
    let unzipped;
    let bytes = if input.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(input)
            .read_to_end(&mut out)
            .map_err(|e| whole(format!("gzip data is damaged: {e}")))?;
        unzipped = out;
        &unzipped[..]
    } else {
        input
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(whole("empty input".into()));
    }
    // Protocol 2 and later start with PROTO (0x80); nothing else here starts so.
    if bytes[0] == 0x80 {
        return pickle::import(bytes, options.device);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        ImportError {
            place: Some(Place::Line(line)),
            message: "not UTF-8 text (and not a pickle of protocol 2 or later)".into(),
        }
    })?;
    let imported = if rmm::is_rmm_log(text) {
        rmm::import(text)?
    } else {
        let trace = crate::format::parse(text)
            .map_err(|e| ImportError { place: Some(Place::Line(e.line)), message: e.message })?;
        Imported { notes: vec![format!("{} rows", trace.rows.len())], trace, format: Format::Project }
    };
    if imported.trace.rows.is_empty() {
        return Err(whole("no operations (a header alone)".into()));
    }
    Ok(imported)
}

#[cfg(test)]
mod tests;
