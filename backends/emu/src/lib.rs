//! A CPU emulator of stream-ordered device memory pools, with the behaviour of Ascend's
//! `aclrtMemPool*` ([contract](mempool_hal::contract) §§1-7).
//!
//! Frameworks test on any machine with it: streams really run concurrently (each on a
//! worker thread of its own, started with its first queued work), events order them,
//! host functions, copies and memsets touch real host memory, and the pool follows every
//! reuse rule, releases at synchronization, trims, counts statistics and reports the same
//! error codes as the real runtime. The
//! `cann-open` profile ([`EmulatorBuilder::profile`], contract
//! [§12](mempool_hal::contract::profiles)) behaves instead as the open CANN runtime ships:
//! no reuse, no release at synchronization, and a destroy that does not wait for queued work.
//!
//! # Design
//!
//! - **Positions and vector clocks.** Each stream hands out positions to its work; frees
//!   and event records are *markers* that only take a position, so the pool's hot path
//!   enqueues nothing. Each stream keeps a vector clock of how far it is ordered after
//!   every other stream (through waits, transitively); each event carries the clock of
//!   the point it recorded (sharing its stream's clock); the host keeps what it has
//!   observed complete. Reuse decisions compare these counters under the pool lock. A
//!   clock names only the streams it has heard of, and forgets destroyed ones once the
//!   host has observed them (`Platform::prune`), so its cost follows the streams alive,
//!   not every stream ever created. A clock's entries live in shared immutable chunks of
//!   32 streams under a shared spine, with a few entries on top not yet written into
//!   chunks, so a record shares its stream's clock and a copy costs nothing; each stream's
//!   clocks form a lineage of growing versions, and a clock names the version of another
//!   lineage it came from (its origin) with the few entries it holds above it. A wait for
//!   a record made at or after the waiting stream's origin (a pipeline's hand-offs, a
//!   ring) is then the record's clock with those few entries raised, decided from the ids
//!   alone; other joins skip the chunks that are shared (`clock.rs`).
//! - **Real memory.** Each pool reserves its address range once (`PROT_NONE`,
//!   `MAP_NORESERVE`), makes it accessible in chunks of 64 MiB or more while any of a
//!   chunk is reserved (chunks double in size away from the range's start, so a pool
//!   that grows makes few system calls), and gives released pages back at once
//!   (`MADV_DONTNEED`; a chunk left with nothing reserved becomes `PROT_NONE` again), so
//!   RESERVED is memory the process may really hold and a release really returns it.
//!   Device addresses are the host addresses of that range.
//! - **Allocator.** The ranges of a pool are nodes of one slab linked in address order;
//!   cached blocks sit in per-stream segregated size classes (one per size up to 64
//!   granules, then eight per power of two, each a heap by size then address) and free
//!   address space in one more, which keeps the exact best fit of [contract §4](mempool_hal::contract::allocation)
//!   (smallest block, then lowest address) at O(1) for the same-stream cycle and
//!   O(log n) otherwise.
//! - **Checked access.** Copies and memsets are checked when enqueued (the range must lie
//!   in one live allocation) and again when they run (it must still be reserved), under
//!   the pool lock, so a bad program gets an error, never a fault. When it runs, a copy
//!   *pins* its range under the lock and moves the bytes without it: a pinned range is
//!   never released or given back, and overlapping pinned accesses, one writing, take
//!   turns, so a long copy stalls nothing else on its pool.
//! - **Virtual memory** ([`mempool_hal::VirtualMemory`], contract
//!   [§14](mempool_hal::contract::vmm)). A reserved range is host address space like a
//!   pool's; a physical chunk is a `memfd` counted against the device's memory; a mapping
//!   puts the chunk's pages at an address of the range (shared, so two mappings show the
//!   same bytes). Copies, memsets and kernels resolve such a range to its chunks when they
//!   are enqueued (refused where it is not mapped, or lacks the access) and move bytes
//!   through the chunks' own views, so an unmapping never pulls memory from under queued
//!   work; the pages also stay at the address until that work has run.
//! - **Device memory.** One atomic counter per device holds RESERVED summed over its
//!   pools (the drop-in library's hidden `aclrtMalloc` pool included): a fresh carve
//!   reserves from it or fails with the device full, a release or a destroy gives back;
//!   reuse never touches it. `mem_info` reads it.
//! - **Stream-order checker** (on by default, [`EmulatorBuilder::checker`] turns it off).
//!   It judges happens-before (contract §1), never timing: a call is ordered after a
//!   point when its stream's vector clock covers it, or the platform's clock of what the
//!   host has observed does (synchronizations, event queries answering complete), or the
//!   point is a synchronous allocation ([`EmuPool::malloc_sync`], `aclrtMalloc`). Every
//!   copy, memset and kernel ([`Emulator::launch_kernel`], a host function that declares
//!   the device memory it reads and writes) is checked when it is enqueued, and every
//!   synchronous host access when it is made: use after free (released memory included),
//!   use not ordered after the allocation, and access to a destroyed pool's memory are
//!   refused at the call with `ErrorKind::StreamOrderViolation` (code 107000), and so is
//!   a free not ordered after the allocation and every earlier access, executed or not.
//!   Race mode ([`EmulatorBuilder::race_check`]) also refuses unordered overlapping
//!   accesses with a write. The message names the streams, positions and operations;
//!   nothing is executed. Vendor tools offer nothing like it for pool memory.
//!   A destroyed pool's address range stays reserved, inaccessible and without memory, for
//!   the next 256 dropped pools (up to 16 TiB of address space), so the host maps nothing
//!   there meanwhile and a pointer that outlived its pool is still known as device memory.
//! - **Bounded waits and faults.** Every wait of the host inside the emulator gives up
//!   after [`Config::wait_timeout`] with an error instead of hanging. A stream's own wait
//!   (on an event, or rule e's) lasts until the awaited work has run: the stream runs
//!   nothing after it and nothing after it counts as executed or observed before, so a
//!   wait that outlasts the timeout orders nothing (the host's synchronizations of that
//!   stream time out meanwhile); a stream destroyed during such a wait drops the rest of
//!   its work. A panicking host function
//!   is reported at the next synchronization of its stream, which keeps working; and
//!   [`Emulator::inject_commit_failures`] makes host-memory commits fail, which surfaces
//!   as `OutOfMemory` with the pool intact.
//! - **Host functions on one thread** ([`EmulatorBuilder::host_functions_on_one_thread`],
//!   off by default, on in the drop-in ACL library). The host functions of a device run
//!   one at a time on one thread, as CANN runs a context's on its callback thread: a
//!   stream's worker hands each to that thread and waits for it, so a host function that
//!   blocks holds back the host functions of the device's other streams, not their
//!   copies, memsets or kernels. A host function that synchronizes a stream whose own
//!   host function waits behind it fails at once; longer chains end with the wait timeout.
//! - **Deferred mode.** With [`ExecutionMode::Deferred`] nothing runs until the host
//!   synchronizes, calls [`Emulator::step`] or [`Emulator::run_pending`]; tests use it to
//!   pin states such as "free enqueued but not executed".
//!
//! # Where each rule lives
//!
//! | contract | rule | file |
//! |---|---|---|
//! | [§1](mempool_hal::contract::objects) | streams, positions and markers; the worker; a free's marker without the stream's lock | `stream.rs`, `stream/published.rs` |
//! | §1 | events; vector clocks; destroyed streams leave clocks once observed | `event.rs`; `clock.rs`; `platform.rs` (`prune`) |
//! | §1, [§8](mempool_hal::contract::c_abi) | host functions on one thread per device | `hostfn.rs`, `stream.rs` (`wait_for`) |
//! | §1 | stale and foreign handles | `EmuStream::live` (`stream.rs`), `EmuEvent::live` (`event.rs`) |
//! | §1 | synchronization and what the host observes | `device.rs`, `platform.rs` (`observe_clock`), `clock.rs` (`HostClock`) |
//! | §1 | a stream's waits: until the awaited work has run; a destroyed stream's dropped work | `stream.rs` (`push_wait_locked`, `wait_on`, `abandon`) |
//! | §1, §6 | a device synchronization drains, observes and releases every stream, then returns the first error | `device.rs` (`synchronize_device`) |
//! | §1 | a synchronous allocation | `pool/mod.rs` (`malloc_sync`), `pool/shared.rs` (`malloc`) |
//! | [§2](mempool_hal::contract::properties) | pool properties (validated by `PoolProps::validate`) | `device.rs` (`create_pool`) |
//! | [§3](mempool_hal::contract::attributes) | attributes | `pool/shared.rs` (`get_attr`, `set_attr`) |
//! | [§4](mempool_hal::contract::allocation) | the reuse order, rules a-f, rule e's wait | `pool/reuse.rs` (`choose`) |
//! | §4 | best fit: smallest block, then lowest address | `pool/blocks.rs`, `crates/mempool-bins` |
//! | §4 | validation, commit, counting | `pool/shared.rs` (`malloc`); `pool/mapping.rs` |
//! | [§2](mempool_hal::contract::properties), §4 | RESERVED summed per device, never above its memory; `mem_info` | `pool/budget.rs` (`DeviceMemory`), `pool/shared.rs` (`malloc`, `release_locked`, `mark_destroyed`), `device.rs` (`mem_info`) |
//! | [§5](mempool_hal::contract::free) | the stream-ordered free; a stream of another device refused | `pool/shared.rs` (`free_async`), `pool/blocks.rs` (`cache`) |
//! | §5 | the free by address (no pool named) | `pool/registry.rs` (`free_async`) |
//! | [§6](mempool_hal::contract::release) | release at synchronization, trim | `pool/shared.rs`, `pool/blocks/release.rs` (`plan_release`), `pool/mapping.rs`, `platform.rs` (`after_sync`) |
//! | §6 | the pools released are those of the stream's (the event's) device, not the handle's | `device.rs` (`synchronize_stream`, `event_device`) |
//! | §6 | a range being copied is not released | `pool/pins.rs`, `pool/shared.rs` (`with_memory`, `release_locked`, `give_back`) |
//! | [§7](mempool_hal::contract::statistics) | statistics; one snapshot under the pool lock, the lanes' changes folded first | `pool/blocks.rs` (`stats`), `pool/shared.rs` (`stats`), `pool/lanes.rs` |
//! | - | several host threads: the same-stream cycle on a lane per stream, no pool-wide lock or written line; every other path alone | `pool/lanes.rs`, `pool/blocks/fast.rs`, `pool/shared.rs` (`fast_malloc`, `fast_free`, `state`) |
//! | §7 | destroyed streams leave the registry when their worker ends | `platform.rs` (`add_stream`, `Streams`) |
//! | §7 | a destroyed pool: graveyard, destroyed ranges (indexed, bounded), quarantine | `device.rs` (`destroy_pool`), `platform.rs`, `pool/registry.rs`, `pool/mapping.rs` |
//! | [§8](mempool_hal::contract::c_abi) | what the drop-in ACL library needs: raw copies and memsets (host memory too), holding host memory for queued work, free by address, pool addresses | `kernel.rs` |
//! | §8 | a destroy that waits as CANN's does (the force form drops the work not started); a function run once every stream has run what was queued before (the drop-in library's delayed `aclrtFree` trim) | `kernel.rs` (`destroy_stream_waiting`, `after_queued_work`), `stream.rs` (`close_discarding`, `discard_pending`) |
//! | [§11](mempool_hal::contract::checker) | checked ranges of copies, memsets, kernels and host accesses; race mode | `pool/access.rs` (`check`, `check_races`), `kernel.rs` |
//! | §11 | "ordered after an allocation"; the accesses noted per allocation | `pool/records.rs` (`Live`, `Access`, `Cached`), `pool/blocks/addresses.rs` (`note_access`) |
//! | §11 | a free ordered after its allocation and every earlier access | `pool/shared.rs` (`check_free`) |
//! | [§12](mempool_hal::contract::profiles) | the profile: `documented` or `cann-open` (setting, environment) | `config.rs` (`Config::profile`), `env.rs` (`MEMPOOL_EMU_PROFILE`) |
//! | §12 | cann-open: reuse rules a-e off | `pool/reuse.rs` (`Rules::new`) |
//! | §12 | cann-open: no release at synchronization | `pool/shared.rs` (`release_at_sync`) |
//! | §12 | cann-open: destroy does not wait; queued work on the pool fails when it runs | `platform.rs` (`entomb`), `pool/shared.rs` (`give_back`, `with_memory`), `pool/mapping.rs` (`decommit_all`) |
//! | [§8](mempool_hal::contract::c_abi) | C handles and page-locked host memory of the drop-in libraries | `cabi.rs` |
//! | [§14](mempool_hal::contract::vmm) | virtual memory: reserved ranges, chunks, mappings, access; each call's checks and codes; lookups by address | `vmm/space.rs`, `vmm/chunk.rs`, `vmm/range.rs`, `vmm/emulator.rs` |
//! | §14, §11 | work on virtual memory: resolved to its chunks when enqueued, refused where unmapped or inaccessible; an unmapping under queued work | `pool/access.rs` (`resolve`, `Memory`), `vmm/mapped.rs`, `vmm/emulator.rs` (`unmap`) |
//! | [§15](mempool_hal::contract::host_register) | registered host ranges: the table, overlap refused, unregister by start, copies through them as pinned memory | `host_register/mod.rs` (the table), `host_register/emulator.rs` (the trait), `pool/access.rs` (`registered_side`) |
//! | - | configuration and its limits; the environment | `config.rs`; `env.rs` |
//! | - | locks, condition variables, atomics, threads: the standard library's, or loom's for the model check | `sync.rs` |
//!
//! # Lock order
//!
//! Every path takes locks in this order, never the reverse:
//!
//! 1. a pool's state (`PoolShared::state`: the pool's lock, then every lane of the pool shut
//!    out, `pool/lanes.rs`); the pools of one operation by pool id (`pool/access.rs`,
//!    `with_locked`). A stream's lane of a pool (its same-stream fast path) stands at this
//!    level instead: a fast path holds one lane, never a pool's lock, and takes only its
//!    stream's state under it;
//! 2. a stream's state (`StreamShared::state`), under the pool state for an allocation
//!    (rules b-e), a free and a checked enqueue, or under the platform's stream registry
//!    when a pool is destroyed (`Platform::entomb`) and when the platform drops (it
//!    closes its streams);
//! 3. the stream's completion lock (`done_mx`), under its state.
//!
//! The other locks are taken alone: the registry of pools (its map and its destroyed
//! ranges), the bookkeeping of virtual memory (`vmm/space.rs`: a copy resolves its range
//! under it before it takes any pool's lock), a chunk's pins (`vmm/chunk.rs`: running work
//! holds one at a time), an event's record, a stream's failure, the platform's host-function threads
//! and the platform's stream registry (except as in 2; a stream's worker takes it alone
//! when it ends). The platform's map of every stream by id (`Platform::prune`) is taken
//! alone or innermost (a wait reads it under its stream's state). The host's clock (`HostClock`) is innermost: the checker reads it under
//! a pool's and a stream's state, and nothing is locked under it. The graveyard's lock may
//! drop a pool's last reference, and the destroyed ranges' lock reads the quarantine when
//! it forgets ranges: both take the process-wide quarantine lock of `pool/mapping.rs`,
//! under which nothing is locked. A device's memory counter (`pool/budget.rs`) is an
//! atomic, not a lock. Queued work runs with no lock held; a copy, memset or kernel takes
//! one pool's state at a time, only to pin the range it touches and later to unpin it, and
//! moves the bytes with no lock held. A pin that conflicts with another waits on the
//! pool's condition variable (letting the state go) and holds no other pin meanwhile, so
//! pins cannot deadlock; a cann-open destroy waits there for the pool's pins to go.
//!
//! Every lock, condition variable, per-object atomic and thread of these paths comes from
//! `sync.rs`, the bottom layer: the standard library's, or under `--cfg loom` the model
//! checker's, with which `cargo xtask loom` (`tests/loom.rs`) runs small programs of two
//! streams, an event and a pool through every interleaving up to a preemption bound.
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

pub mod cabi;
mod clock;
mod config;
mod device;
mod env;
mod event;
mod failure;
mod host_register;
mod hostfn;
mod kernel;
mod platform;
mod pool;
mod signal;
mod stream;
mod sync;
#[cfg(test)]
mod tests;
mod vmm;
mod words;

pub use config::{Config, ExecutionMode, MAX_DEVICE_MEMORY, MAX_DEVICES, MAX_GRANULARITY, Profile};
pub use device::{Emulator, EmulatorBuilder};
pub use env::{
    ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, ENV_PROFILE, ENV_RACES,
    ENV_WAIT_TIMEOUT, ENV_WORKER_DELAY, parse_bytes,
};
pub use event::EmuEvent;
pub use kernel::{KernelAccess, KernelMem};
pub use pool::access::CopySide;
pub use pool::{EmuPool, ReuseCounts, ReuseRule};
pub use signal::{EmuNotify, ValueCompare};
pub use stream::{EmuStream, FailureHook, TaskFailure};
