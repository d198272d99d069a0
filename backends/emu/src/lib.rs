//! A CPU emulator of stream-ordered device memory pools, with the behaviour of Ascend's
//! `aclrtMemPool*` (SPEC.md sections 1-7).
//!
//! Frameworks test on any machine with it: streams really run concurrently (each on a
//! worker thread of its own), events order them, host functions, copies and memsets touch
//! real host memory, and the pool follows every reuse rule, releases at synchronization,
//! trims, counts statistics and reports the same error codes as the real runtime.
//!
//! # Design
//!
//! - **Positions and vector clocks.** Each stream hands out positions to its work; frees
//!   and event records are *markers* that only take a position, so the pool's hot path
//!   enqueues nothing. Each stream keeps a vector clock of how far it is ordered after
//!   every other stream (through waits, transitively); each event carries the clock of
//!   the point it recorded; the host keeps what it has observed complete. Reuse decisions
//!   compare these counters under the pool lock.
//! - **Real memory.** Each pool reserves its address range once (`PROT_NONE`,
//!   `MAP_NORESERVE`), makes it accessible in chunks of 64 MiB or more while any of a
//!   chunk is reserved, and gives released pages back at once (`MADV_DONTNEED`; a chunk
//!   left with nothing reserved becomes `PROT_NONE` again), so RESERVED is memory the
//!   process may really hold and a release really returns it. Device addresses are the
//!   host addresses of that range.
//! - **Allocator.** The ranges of a pool are nodes of one slab linked in address order;
//!   cached blocks sit in per-stream segregated size classes (one per size up to 64
//!   granules, then eight per power of two, each a heap by size then address) and free
//!   address space in one more, which keeps the exact best fit of SPEC.md section 4
//!   (smallest block, then lowest address) at O(1) for the same-stream cycle and
//!   O(log n) otherwise.
//! - **Checked access.** Copies and memsets are checked when enqueued (the range must lie
//!   in one live allocation) and again when they run (it must still be reserved), under
//!   the pool lock, so a bad program gets an error, never a fault.
//! - **Stream-order checker** (on by default, [`EmulatorBuilder::checker`] turns it off).
//!   Every copy, memset and kernel ([`Emulator::launch_kernel`], a host function that
//!   declares the device memory it reads and writes) is checked with the vector clocks
//!   when it is enqueued: use after free, use on a stream not ordered after the
//!   allocation, and access to a destroyed pool's memory are refused at the call with
//!   `ErrorKind::StreamOrderViolation` (code 107000), and so is a free that races with
//!   an access still pending on another stream. The message names the streams and the
//!   operations; nothing is executed. Vendor tools offer nothing like it for pool memory.
//!   A destroyed pool's address range stays reserved, inaccessible and without memory, for
//!   the next 256 dropped pools (up to 16 TiB of address space), so the host maps nothing
//!   there meanwhile and a pointer that outlived its pool is still known as device memory.
//! - **Bounded waits and faults.** Every wait inside the emulator gives up after
//!   [`Config::wait_timeout`] with an error instead of hanging; a panicking host function
//!   is reported at the next synchronization of its stream, which keeps working; and
//!   [`Emulator::inject_commit_failures`] makes host-memory commits fail, which surfaces
//!   as `OutOfMemory` with the pool intact.
//! - **Deferred mode.** With [`ExecutionMode::Deferred`] nothing runs until the host
//!   synchronizes, calls [`Emulator::step`] or [`Emulator::run_pending`]; tests use it to
//!   pin states such as "free enqueued but not executed".
//!
//! # Example
//!
//! ```
//! use mempool_emu::{Emulator, ReuseRule};
//! use mempool_hal::{attr, Device, MemPool, MemPoolExt, PoolProps};
//!
//! let emu = Emulator::new();
//! let (a, b) = (emu.create_stream()?, emu.create_stream()?);
//! let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
//! pool.set(attr::ReuseFollowEventDependencies, true)?;
//!
//! let (p, rule) = pool.malloc_async_traced(1 << 20, &a)?;
//! assert_eq!(rule, ReuseRule::Fresh);
//! pool.free(p, &a)?;
//! let ev = emu.create_event()?;
//! emu.record_event(&ev, &a)?;
//! emu.stream_wait_event(&b, &ev)?;
//! let (q, rule) = pool.malloc_async_traced(1 << 20, &b)?;
//! assert_eq!((q, rule), (p, ReuseRule::EventDependency));
//! assert_eq!(pool.stats()?.used_current, 2 << 20); // one 2 MiB granule
//! # Ok::<(), mempool_hal::Error>(())
//! ```

#![deny(missing_docs)]

mod clock;
mod config;
mod device;
mod env;
mod event;
mod kernel;
mod platform;
mod pool;
mod stream;

pub use config::{Config, ExecutionMode, MAX_DEVICE_MEMORY, MAX_DEVICES, MAX_GRANULARITY};
pub use device::{Emulator, EmulatorBuilder};
pub use env::{ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, parse_bytes};
pub use event::EmuEvent;
pub use kernel::{KernelAccess, KernelMem};
pub use pool::access::CopySide;
pub use pool::{EmuPool, ReuseCounts, ReuseRule};
pub use stream::EmuStream;
