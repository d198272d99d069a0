//! The C functions of `libmempool_alloc.so`, one file per concern: [`alloc`] (allocation
//! and free), [`streams`] (record-stream), [`cache`] (init, empty cache, the memory
//! fraction, out-of-memory observers), [`stats`] (statistics, peaks), [`history`] (the
//! allocation history and memory snapshots), [`errors`] (the last error, the backend) and
//! [`registry`] (the pool as a stream's allocator in CANN's registry). `include/mempool_alloc.h` declares them; the crate's
//! `header` test checks that it declares exactly these.
//!
//! Every function runs in `ffi::guard` (`src/ffi.rs`): it clears the calling thread's last
//! error, and a failure or a panic becomes the documented answer (NULL, -1 or nothing)
//! with the reason in `mempool_last_error()`; nothing unwinds into the caller. The first
//! call of any function starts the library from the environment (see the crate docs); a
//! start that fails makes every call fail with that reason.
//!
//! # Adding a function: the checklist
//!
//! 1. Declare it in `include/mempool_alloc.h` with its contract in a comment (what it
//!    answers on failure), and add its name to [`EXPORTS`].
//! 2. Define it in the file of its concern with `#[unsafe(no_mangle)]`, its body in
//!    `ffi::guard` (`src/ffi.rs`) (never a bare body: no panic may cross the boundary), a
//!    `# Safety` section when it takes a pointer, and re-export it from the crate root.
//! 3. Give it hostile rows: in process in `tests/exports.rs`, and in the C harness
//!    (`tests/c/alloc/` of the workspace's tests) over both drop-in libraries.
//! 4. When a framework hook calls it, add it to the README's recipes (the `header` test
//!    checks they name only exports).
//!
//! # Safety
//!
//! The functions take what the frameworks pass: stream handles of the runtime they loaded
//! (or NULL), pointers the library handed out, and out-pointers that are NULL or valid for
//! writing. A handle or pointer the library does not know is refused with an error; a
//! stream handle is passed to the runtime, which must know it.

pub mod alloc;
pub mod cache;
pub mod errors;
pub mod history;
pub mod registry;
pub mod stats;
pub mod streams;

pub use alloc::{mempool_alloc, mempool_free};
pub use cache::{
    mempool_empty_cache, mempool_empty_cache_checked, mempool_init, mempool_on_oom, mempool_set_memory_fraction,
};
pub use errors::{mempool_backend, mempool_last_error};
pub use history::{mempool_dump_snapshot, mempool_record_history};
pub use registry::{mempool_register_stream_allocator, mempool_unregister_stream_allocator};
pub use stats::{mempool_reset_peak_stats, mempool_stats};
pub use streams::mempool_record_stream;

/// Every export, in the header's order: the table the header test checks.
pub const EXPORTS: [&str; 16] = [
    "mempool_alloc",
    "mempool_free",
    "mempool_init",
    "mempool_empty_cache",
    "mempool_empty_cache_checked",
    "mempool_set_memory_fraction",
    "mempool_record_stream",
    "mempool_stats",
    "mempool_reset_peak_stats",
    "mempool_on_oom",
    "mempool_record_history",
    "mempool_dump_snapshot",
    "mempool_last_error",
    "mempool_backend",
    "mempool_register_stream_allocator",
    "mempool_unregister_stream_allocator",
];
