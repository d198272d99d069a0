//! `libmempool_alloc.so`: a stream-ordered pool allocator behind the small C interface
//! that frameworks load an outside allocator through: PyTorch's `CUDAPluggableAllocator`,
//! torch_npu's `NPUPluggableAllocator` and MindSpore's `PluggableAllocator` all `dlopen` a
//! library and call `void *alloc(size_t size, int device, stream)` and
//! `void free(void *ptr, size_t size, int device, stream)`, with optional hooks (init,
//! empty cache, memory fraction, record-stream). The header is
//! `include/mempool_alloc.h`; `include/mempool_alloc.hpp` wraps it for C++ callers that
//! want `std::bad_alloc`; `docs/frameworks.md` has the few lines each framework needs.
//!
//! # What it does
//!
//! - **One pool per device**, opened at the device's first use, with the small-block layer
//!   ([`mempool_small::SmallBlocks`]) over it, on the backend chosen at the first call:
//!   the CUDA driver, the Ascend runtime or the CPU emulator (the default where no runtime
//!   is found). A runtime the process has loaded already is preferred, so that the
//!   framework's stream handles mean the same to the library.
//! - **Streams** are the framework's raw handles (`CUstream`, `aclrtStream`), borrowed,
//!   never destroyed; they must stay valid while the library holds memory freed on them
//!   (frameworks keep their streams for the life of the process). NULL is the device's
//!   default stream: CUDA's legacy stream; on Ascend, whose pool calls take no NULL
//!   stream, a stream of the library's own, on which an allocation is complete when
//!   `mempool_alloc` returns and a free first waits for the device; on the emulator the
//!   only stream (its memory is host memory: a test can write through the pointer).
//! - **record-stream** as PyTorch's caching allocator does it: the free records an event on
//!   each stream that used the block, and the memory is freed (and reusable) only once the
//!   host has seen those events complete; the framework's streams are not made to wait.
//! - **Out of memory**: synchronize the device, take in the waiting frees, give the layer's
//!   empty blocks back, trim the pool to USED, retry once; then call the observers
//!   (`mempool_on_oom`); then answer NULL with the reason in `mempool_last_error()`.
//!   Nothing unwinds into the caller.
//! - **A memory fraction** caps a device's pool (its RESERVED bytes) at that fraction of the
//!   device's memory, as PyTorch's does: a request passed to the pool that would take it
//!   past the cap is refused before it is made; a block the small-block layer takes past
//!   the cap is given back before the call returns (the pool's high-water mark may show
//!   it), and the request goes through the out-of-memory path.
//! - **Stream-order violations**: the drop-in libraries' checker refuses a free that is not
//!   ordered after every use of the memory (a use on another stream not announced with
//!   record-stream). The library then synchronizes the device, frees the memory, counts the
//!   violation in the statistics and describes it in `mempool_last_error()`. A real
//!   runtime has no checker: there the count stays 0.
//! - **Memory snapshots**: `mempool_record_history(max_entries)` records each device's
//!   allocations and frees (off by default: one relaxed atomic load per call), and
//!   `mempool_dump_snapshot(path)` writes them in PyTorch's memory-snapshot format, for its
//!   memory viewer and `mempool-trace import`.
//!
//! # Environment
//!
//! Read once, at the first call. A value that does not parse makes every call fail with a
//! message naming the variable.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `MEMPOOL_ALLOC_BACKEND` | `auto`, `cuda`, `ascend` or `emulator` | `auto`: a loaded runtime, then CUDA, then Ascend, then the emulator |
//! | `MEMPOOL_ALLOC_POOL_SIZE` | each pool's size in bytes (`64M`, `8G`) | the device's memory |
//! | `MEMPOOL_ALLOC_RELEASE_THRESHOLD` | bytes a pool keeps cached at synchronizations (at most the pool size) | the pool size: memory stays cached until `mempool_empty_cache` |
//! | `MEMPOOL_ALLOC_SMALL_THRESHOLD` | the largest request the small-block layer carves from pool blocks; `0`: every request goes to the pool | the pool size: every request through the layer |
//! | `MEMPOOL_ALLOC_REUSE` | the pools' reuse flags: `follow`, `opportunistic`, `internal` (comma-separated) or `none` | the backend's |
//! | `MEMPOOL_ALLOC_MEMORY_FRACTION` | a memory fraction every device starts with, in (0, 1] | none |
//! | `MEMPOOL_ALLOC_HISTORY` | record the allocation history from the start, keeping this many events per device (`mempool_record_history`) | off |
//!
//! The backends' own variables apply too: `MEMPOOL_CUDA_LIBRARY`,
//! `MEMPOOL_ASCEND_LIBRARY`, and `MEMPOOL_EMU_*` for the emulator (devices, memory,
//! granularity, the checker).
//!
//! # From Rust
//!
//! The exports are ordinary functions of this crate too:
//!
//! ```
//! use mempool_alloc::{Stats, mempool_alloc, mempool_free, mempool_stats};
//! // SAFETY: NULL is the default stream; the pointer is freed with its size and device.
//! unsafe {
//!     let p = mempool_alloc(1000, 0, std::ptr::null_mut());
//!     assert!(!p.is_null());
//!     let mut s = Stats::default();
//!     assert_eq!(mempool_stats(0, &mut s), 0);
//!     assert!(s.requested_current >= 1000);
//!     mempool_free(p, 1000, 0, std::ptr::null_mut());
//! }
//! ```

#![deny(missing_docs)]

mod backend;
mod config;
mod device;
mod error;
pub mod exports;
mod ffi;
mod history;
mod state;
mod stats;
#[cfg(test)]
mod tests;

pub use config::{
    Choice, ENV_ALL, ENV_BACKEND, ENV_HISTORY, ENV_MEMORY_FRACTION, ENV_POOL_SIZE, ENV_RELEASE_THRESHOLD, ENV_REUSE,
    ENV_SMALL_THRESHOLD, Settings,
};
pub use error::AllocError;
pub use exports::{
    mempool_alloc, mempool_backend, mempool_dump_snapshot, mempool_empty_cache, mempool_empty_cache_checked,
    mempool_free, mempool_init, mempool_last_error, mempool_on_oom, mempool_record_history, mempool_record_stream,
    mempool_reset_peak_stats, mempool_set_memory_fraction, mempool_stats,
};
pub use exports::{mempool_register_stream_allocator, mempool_unregister_stream_allocator};
pub use ffi::last_error;

/// Whether the allocation history is being recorded (`mempool_record_history`): the one
/// relaxed atomic load an allocation or a free pays for the switch when it is off.
pub fn history_enabled() -> bool {
    history::on()
}
pub use state::{MAX_DEVICES, MAX_OBSERVERS, OomObserver};
pub use stats::{STATS_SIZE, STATS_VERSION, Stats};
