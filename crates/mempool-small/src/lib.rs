//! A stream-ordered small-block layer over any [`MemPool`].
//!
//! A stream-ordered pool rounds every allocation up to its granularity (2 MiB on Ascend), so
//! a framework that makes many small or oddly sized tensors reserves far more than it
//! uses. [`SmallBlocks`] sits between the framework and the pool, as PyTorch's caching
//! allocator and RAPIDS RMM's binning resource do: requests up to a **threshold** are carved
//! from larger pool blocks at a 512-byte alignment; larger requests go to the pool as they
//! are. It is generic over the [`Device`] and its pool, so the same code runs on the
//! emulator and on the real runtime, and it implements [`MemPool`] itself, so code written
//! against the trait (the `mempool` facade's buffers included) uses it unchanged.
//!
//! # The threshold
//!
//! `threshold` is the largest *requested* size, in bytes and inclusive, that the layer
//! serves from its blocks. A request of `1..=threshold` bytes is rounded up to 512 bytes
//! ([`ALIGN`]) and carved from a block; a request above it is passed to the pool
//! (which rounds it to its granularity). `0` turns the layer into a pass-through: every
//! request goes to the pool, and its errors come back as the pool gives them (no
//! [out-of-memory](#out-of-memory) retry), which is how a test lets the emulator's checker
//! judge every allocation on its own (see [the checker](#the-checker)). The conformance
//! suite checks both: see [Conformance](#conformance).
//!
//! Requests of at most 1 MiB ([`SMALL_LIMIT`]) are carved from *small* blocks of 2 MiB
//! ([`SMALL_BLOCK`], one granule at the default granularity); larger ones from *large*
//! blocks sized for little rounding waste: `k` times the request, rounded up to the
//! granularity, with the `k` that wastes the least within 20 MiB ([`LARGE_BLOCK`]) or
//! within the request's own rounded size when that is larger (a 2.25 MiB request gets an
//! 18 MiB block that holds eight, a 9 MiB request one that holds two, a 147.3 MiB request
//! one of 148 MiB). Later requests of the stream take the remainder. Within a stream's
//! blocks of one kind the layer takes the smallest free range that fits, then the lowest
//! address, and merges neighbouring free ranges of a block when they are freed.
//!
//! # Stream order
//!
//! Each block belongs to the stream it was allocated on (its *owner*), and is carved
//! only for requests on that stream:
//!
//! - A free on the owner stream makes the range reusable at once by the owner stream: work
//!   on one stream runs in order, so the next user is ordered after the free.
//! - A free on another stream `T` records an event on `T` and holds the range back until
//!   the host has seen that event complete ([`Device::query_event`], polled when the layer
//!   needs room, or [`Device::synchronize_event`] on the out-of-memory path). Work enqueued
//!   afterwards on the owner stream is then ordered after the free. When the pool's
//!   [`ReuseAllowInternalDependencies`] flag is on (attribute 3, rule e of the
//!   [allocation contract](mempool_hal::contract::allocation)), the layer follows it as the
//!   pool does: rather than take a new block, it makes the owner stream wait for the events
//!   of its pending ranges ([`Device::stream_wait_event`]) and reuses them at once.
//! - A block whose ranges are all free goes back to the pool with
//!   [`MemPool::free_async`] on its owner stream, which is ordered after every free of its
//!   ranges by the two rules above. Other streams reuse that memory only through the
//!   pool's own rules: its reuse flags, events and synchronizations (the
//!   [allocation contract](mempool_hal::contract::allocation)). Three exceptions keep
//!   memory in the layer a while, all on the owner stream and all given back by
//!   [`SmallBlocks::release_empty`], [`MemPool::trim_to`] and the out-of-memory path:
//!   - one empty small block per stream is kept as a spare, so that a same-stream
//!     allocate-and-free cycle never reaches the pool;
//!   - the last [`HOT`] small ranges freed on a stream stay unmerged, and a request of the
//!     same rounded size takes the latest one back at once (the fast path);
//!   - an empty block of at least [`PARK_MIN`] (64 MiB) is *parked*, up to [`PARKED`] per
//!     stream, for a later request of the same block size on its stream; one passed over by
//!     more than [`PARK_AGE`] block requests of its stream goes back. Given back at once, a
//!     large block would be split by the pool for the next smaller request (the pool takes
//!     the smallest cached block that fits), and the next request of its size would need
//!     fresh memory: on a fine-tuning trace that frees and reallocates 147 MiB tensors
//!     every step, parking brings RESERVED_HIGH from 1.090 to 1.037 times the peak of live
//!     requested bytes.
//!
//! # Out of memory
//!
//! When the pool cannot provide a block (or a large request), the layer waits for the
//! events of its pending cross-stream frees, gives every empty block back to the pool
//! (spares and parked blocks included), synchronizes the device (so that every free, the
//! layer's and any other, is known complete), trims the pool to its USED (so that the
//! cached memory goes back to the pool's address space and can be carved at any size) and
//! retries once; a block request also falls back to the smallest block that fits. The
//! second failure is returned as the pool's out-of-memory error. This path blocks; it is
//! the layer's equivalent of PyTorch freeing its cached blocks before reporting out of
//! memory. With threshold 0 the layer holds nothing and takes no part: the pool's
//! out-of-memory error is returned at once.
//!
//! # Statistics
//!
//! [`SmallBlocks::small_stats`] reports the layer's own counters: the requested bytes of
//! live allocations made through it, the pool bytes it holds (its blocks and the rounded
//! size of the requests it passed through), their high-water marks, and
//! [`SmallStats::waste`], the difference. The pool's own counters
//! ([`MemPool::stats_snapshot`]) are those of the pool underneath.
//!
//! # The checker
//!
//! The emulator's [stream-order checker](mempool_hal::contract::checker) judges pool
//! allocations; it "sees through" the layer as follows:
//!
//! - Every pool call the layer makes is itself a correct stream-ordered program, so the
//!   checker never refuses a correct program because it uses the layer.
//! - Copies, memsets and kernels on a carved range are checked against the pool block
//!   that holds it: an access not ordered after the block's allocation, outside the block,
//!   or after the block went back to the pool is refused as without the layer.
//! - What happens inside a block (a range freed on a stream that is not ordered after its
//!   last use, a use after the range was freed while the block is still held) is invisible
//!   to the pool. To have the checker judge every allocation on its own, run the tests
//!   with threshold 0: the layer then passes every request through and the checker
//!   refuses such a free as it does without the layer.
//!
//! The layer checks what it can itself on every backend: a free of a pointer that it did
//! not hand out, that was freed already, or that points inside an allocation is
//! `InvalidPointer` (107000), never a panic and never passed to the pool.
//!
//! # Conformance
//!
//! The workspace runs the conformance suite of `mempool-conformance` (contract §10)
//! through the layer on the emulator, in both execution modes and both profiles
//! (`tests/conformance_small.rs`), on a test device whose pools are layers over the
//! emulator's pools ([`SmallBlocks::new_shared`]):
//!
//! - at threshold 0 every one of the 30 scenarios passes unchanged: the layer is
//!   transparent;
//! - at threshold one granule (64 KiB there) the scenarios about attributes, properties,
//!   cross-stream reuse of multi-granule blocks (event dependencies, opportunistic and
//!   internal-dependency reuse), `trim_to` errors and bad handles pass (1, 2, 4-7,
//!   14-18, 25, 29). The other 17 do not apply: their exact expectations are about the
//!   pool's own carving of requests of at most a granule, which the layer serves from its
//!   blocks instead: the address of such a request, or RESERVED and USED counting it as
//!   one granule (3, 8-13, 20-24, 26-28), the out-of-memory figures,
//!   which the layer's [out-of-memory](#out-of-memory) path changes by trimming the pool
//!   (19), and a registry of granule-rounded ranges (30). The test file lists each with
//!   its reason, as ignored cases.
//!
//! # Example
//!
//! ```
//! use mempool_emu::Emulator;
//! use mempool_hal::{Device, MemPool, PoolProps};
//! use mempool_small::SmallBlocks;
//!
//! let emu = Emulator::new();
//! let s = emu.create_stream()?;
//! let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
//! let small = SmallBlocks::new(&emu, &pool, 1 << 20)?;
//!
//! let a = small.malloc_async(100, &s)?;
//! let b = small.malloc_async(1000, &s)?;
//! assert_eq!(b.addr(), a.addr() + 512); // both in one 2 MiB block
//! let st = small.small_stats();
//! assert_eq!((st.requested_current, st.held_current), (1100, 2 << 20));
//! // SAFETY: both are live allocations of `small`, used on `s` only.
//! unsafe {
//!     small.free_async(a, &s)?;
//!     small.free_async(b, &s)?;
//! }
//! assert_eq!(small.small_stats().requested_current, 0);
//! drop(small); // gives the empty block back to the pool
//! emu.synchronize_device()?;
//! emu.destroy_pool(&pool)?;
//! # Ok::<(), mempool_hal::Error>(())
//! ```

#![deny(missing_docs)]
//!
//! # Where each part lives
//!
//! | file | what |
//! |---|---|
//! | `layer.rs` | [`SmallBlocks`]: construction, the small and direct paths, pending cross-stream frees, giving blocks back, drop |
//! | `pool.rs` | [`SmallBlocks`] as a [`MemPool`]: allocation, the stream-ordered free, attributes |
//! | `arena.rs` | the bookkeeping: per-stream arenas, blocks and their ranges, free sets, carving and merging |
//! | `live.rs` | the live carved ranges by address (the table every allocation and free touches) |
//! | `stats.rs` | [`SmallStats`] |

// The crate docs name these.
#[cfg(doc)]
use mempool_hal::{Device, MemPool, attr::ReuseAllowInternalDependencies};

mod arena;
mod layer;
mod live;
mod pool;
mod stats;

pub use layer::SmallBlocks;
pub use stats::SmallStats;

/// The alignment, and the rounding, of every range carved from a block: 512 bytes.
pub const ALIGN: u64 = 512;
/// Requests of at most this many bytes (1 MiB) are carved from small blocks.
pub const SMALL_LIMIT: u64 = 1 << 20;
/// The size of a small block (2 MiB), rounded up to the pool's granularity.
pub const SMALL_BLOCK: u64 = 2 << 20;
/// The most a large block holds for several requests (20 MiB): a request above
/// [`SMALL_LIMIT`] gets a block of `k` times its rounded size, rounded up to the
/// granularity, with the `k` that wastes the smallest share of the block among those that
/// keep it within 20 MiB (or within one request's own rounded size, when that is larger).
pub const LARGE_BLOCK: u64 = 20 << 20;

/// How many freed small ranges a stream keeps unmerged for exact-size reuse.
pub const HOT: usize = 8;
/// Empty blocks of at least this size (64 MiB) are kept whole for a while (*parked*) rather
/// than given back at once: see [`PARKED`] and [`PARK_AGE`].
pub const PARK_MIN: u64 = 64 << 20;
/// How many empty blocks a stream keeps parked at most.
pub const PARKED: usize = 2;
/// A parked block goes back to the pool when the stream has asked for this many new blocks
/// since it was parked without one of its size.
pub const PARK_AGE: u64 = 5;

#[cfg(test)]
mod tests;
