//! Pieces the FFI backends (`mempool-ascend`, `mempool-cuda`) share, written once:
//!
//! - [`callbacks`]: a pool and one of its streams behind C allocator callbacks (the
//!   object and functions CANN's external-allocator registry takes);
//! - [`staging`]: the cache of page-locked staging buffers that keeps host copies
//!   asynchronous, generic over how a backend allocates and frees such a buffer
//!   ([`staging::PinnedBuffer`]), and the staged copies, generic over how it queues a copy
//!   and a host function ([`staging::StagedCopies`]);
//! - [`handle`]: the liveness of stream, event and pool handles, shared by their clones,
//!   and whether the backend owns a handle or borrows it (a framework's stream);
//! - [`pool`]: the size check of an allocation, the out-of-memory error of a pool and the
//!   one retry after it (synchronize, trim to USED, try again, counted);
//! - [`host_fn`]: the trampoline that queues a Rust closure as a C host function;
//! - [`pinned`]: a page-locked host buffer over a backend's allocation call;
//! - [`context`]: the per-thread record of the context a backend made current, the three
//!   ways in, and the context given back after a call;
//! - [`symbols`]: the lazy, per-function symbol resolver (and the [`sym!`] macro);
//! - [`search`]: the walk over a backend's library candidates and the record of every path
//!   tried and why it was not taken, for the `Unavailable` error, and the copies of a
//!   library the process has loaded already ([`search::loaded_copies`]);
//! - [`probe`]: the probe table's rows, verdicts and Markdown rendering, and the pool
//!   experiments both backends run the same way.
//!
//! Nothing here calls a driver or runtime: the backends pass in what does. The calls
//! into the system are [`search::loaded_copies`]'s walk over the loaded objects
//! (`dl_iterate_phdr`) and [`symbols::resolve`]'s lookup in a library the backend loaded.

#![deny(missing_docs)]

pub mod callbacks;
pub mod context;
pub mod handle;
pub mod host_fn;
pub mod pinned;
pub mod pool;
pub mod probe;
pub mod search;
pub mod staging;
pub mod symbols;
