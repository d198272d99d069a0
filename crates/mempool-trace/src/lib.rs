//! Traces of stream-ordered memory pool operations: record them from any backend,
//! generate small deterministic ones, and replay them against the emulator.
//!
//! # The trace format
//!
//! A trace is a CSV file with the columns of RAPIDS RMM's logging adaptor,
//! `Thread,Time,Action,Pointer,Size,Stream`, one row per operation in the order the pool
//! saw them:
//!
//! | Action | Pointer | Size | Stream |
//! |---|---|---|---|
//! | `allocate` | the address handed out (hex, `0x...`) | requested bytes | stream id |
//! | `allocate failure` | `0x0` | requested bytes | stream id |
//! | `free` | the address freed (hex) | the allocation's requested bytes | stream id |
//! | `record` | the **event id** (decimal) | empty | stream the event is recorded on |
//! | `wait` | the **event id** (decimal) | empty | stream that waits |
//! | `sync_stream` | empty | empty | stream synchronized |
//! | `sync_event` | the **event id** (decimal) | empty | empty |
//! | `sync_device` | empty | empty | empty |
//!
//! `Thread` is a small id of the calling host thread (1, 2, ... in order of first call);
//! `Time` is seconds since the start of recording, with nine decimals. Stream and event
//! ids are small integers naming handles within one trace (a [`Recorder`] numbers them
//! in order of creation; ids are only compared for equality). Sizes are the requested
//! sizes: the pool rounds them up to its granularity.
//!
//! [`parse`] reads a trace back and checks it: a malformed row, an unknown action, an
//! allocation at a pointer that is still live, or a free of a pointer that is not live is
//! an error naming the line.
//!
//! # Pieces
//!
//! - [`Recorder`] wraps any [`mempool_hal::Device`] and records the calls made through it.
//! - [`import()`](import::import) converts the traces people have (PyTorch memory
//!   snapshots, RMM logs with wall-clock times) into this format.
//! - [`snapshot`] goes the other way: [`Snapshot::from_trace`](snapshot::Snapshot::from_trace)
//!   turns a trace into a PyTorch memory snapshot, and
//!   [`Snapshot::to_pickle`](snapshot::Snapshot::to_pickle) writes the pickle
//!   `torch.cuda.memory._dump_snapshot()` writes, for PyTorch's viewer
//!   (<https://pytorch.org/memory_viz>); [`import()`](import::import) reads it back to
//!   the same allocations and frees.
//! - [`generate`] writes the bundled traces (`traces/*.csv` in this crate).
//! - [`replay()`] runs a trace against the emulator and reports statistics, and [`svg`]
//!   plots USED, RESERVED and the live requested bytes over the run; the `mempool-trace`
//!   command line tool wraps both, [`import`] (`mempool-trace import`) and [`snapshot`]
//!   (`mempool-trace export TRACE.csv -o SNAPSHOT.pickle`).
//!
//! # Features
//!
//! - `cli` (default): the `mempool-trace` command line tool and what only it needs
//!   (`clap`, `indicatif`). A library that records, replays or writes snapshots depends on
//!   the crate with `default-features = false`.

#![deny(missing_docs)]
#![deny(unsafe_code)]

mod format;
pub mod generate;
pub mod import;
mod record;
pub mod replay;
pub mod requested;
mod resolve;
pub mod snapshot;
pub mod svg;
pub mod table;

pub use format::{HEADER, Op, ParseError, Row, Trace, parse, to_csv};
pub use record::{RecEvent, RecStream, Recorder, RecordingPool};
pub use replay::{
    Harness, Prepared, ReplayError, ReplayOptions, Report, ReuseFlags, replay, replay_prepared, replay_with,
};
