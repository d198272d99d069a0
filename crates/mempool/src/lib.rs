//! Safe, fast, testable stream-ordered device memory pools.
//!
//! This is the crate frameworks depend on. It re-exports the core traits of
//! [`mempool_hal`], picks a backend by cargo feature, and adds owned RAII types:
//! a [`Pool`] that is destroyed when dropped, [`Stream`]s and [`Event`]s, and a
//! [`Buffer`] that frees itself in stream order, so safe code cannot double free, free
//! into a destroyed pool, or leak a block.
//!
//! The contract is Ascend CANN's `aclrtMemPool*` (CUDA's `cuMemPool*` shares the
//! attribute numbering, and has a backend of its own): a pool hands out device memory in stream order, caches what is
//! freed, reuses it under rules the pool's creator opts into, and releases cached memory
//! above a threshold when the host synchronizes.
//!
//! # Backends and features
//!
//! Backend features are additive: enable any set of them.
//!
//! | feature | backend | explicit name | use it for |
//! |---|---|---|---|
//! | `ascend` | the real Ascend CANN runtime (`libacl_rt.so`), loaded at run time with libloading: no SDK needed to build | [`backend::Ascend`] | production on Ascend hardware; `auto()` falls back to the emulator |
//! | `cuda` | the CUDA driver (`libcuda.so.1`), loaded at run time with libloading: no toolkit needed to build | [`backend::Cuda`] | NVIDIA GPUs (an NVIDIA driver at run time); where CUDA's pools answer differently, see the `mempool_cuda` docs |
//! | `emu` (default) | the CPU emulator: real concurrent streams, every reuse rule, real host memory | [`backend::Emulator`] | running and testing on any machine |
//! | `mock` | [mockall] mocks of the traits | [`backend::Mock`] (= `MockDevice`), `MockMemPool` | unit tests of your own code; enable it in `[dev-dependencies]` only |
//!
//! ## Which backend runs: the three choosers
//!
//! Three places choose a backend, and each answers a different question, so their orders
//! differ on purpose. This table is the one place they are written; the items link here.
//!
//! | chooser | when | order | why this order |
//! |---|---|---|---|
//! | [`DefaultBackend`] | at build time, from the features | `ascend`, `cuda`, `emu`, `mock` | nothing is probed, so it names the contract's own runtime first; features are unified across a build, and a crate elsewhere in the graph that turns `cuda` on must not move an Ascend application off its runtime |
//! | `auto()`, `auto_from()` (features `emu` and `ascend` or `cuda`) | at run time, by what is installed | an NVIDIA device; an Ascend runtime; the project's CPU libcuda; the emulator | the strongest evidence of hardware first: NVIDIA's `cuInit(0)` succeeds only with a device present, while a found CANN runtime shows an install; the CPU libcuda is there only because someone pointed the search at it, and is never taken over a real runtime |
//! | `libmempool_alloc.so` (`MEMPOOL_ALLOC_BACKEND=auto`) | at run time, inside a framework's process | a CUDA driver the process has loaded; an Ascend runtime it has loaded; a CUDA driver found; an Ascend runtime found; the emulator | the library must share the framework's runtime and its stream handles, so a runtime the framework already loaded wins; after that, the same order as `auto()` |
//!
//! Every chooser says what it took and why (`Auto`'s `Display`, the library's
//! `mempool_backend()`); the explicit names under [`backend`] are always there for
//! the features that are on, so code that needs one backend names it. With no backend
//! feature the crate still builds: the traits, the RAII types and the attribute keys, for
//! libraries that are generic over [`Device`] and leave the choice to the application.
//!
//! ```toml
//! [dependencies]
//! # A library generic over the backend: no backend of its own.
//! mempool = { version = "0.1", default-features = false }
//!
//! [dev-dependencies]
//! # Its unit tests use the mocks, its integration tests the emulator; release builds
//! # carry neither.
//! mempool = { version = "0.1", features = ["mock", "emu"] }
//! ```
//!
//! # For users
//!
//! ## Choosing a backend
//!
//! Write the code that uses pools against the [`Device`] trait (static dispatch: it
//! compiles to direct calls), and pick the backend where the program starts:
//!
//! ```
//! use mempool::prelude::*;
//! use mempool::{Pool, PoolProps, Result, Stream};
//!
//! /// Library code: generic over the backend.
//! fn zeroed_scratch<D: Device>(dev: &D, bytes: u64) -> Result<u64> {
//!     let stream = Stream::new(dev)?;
//!     let pool = Pool::new(dev, &PoolProps::builder().device(dev.id()).max_size(1 << 30).build())?;
//!     let buf = pool.alloc(bytes, &stream)?;
//!     buf.fill(0, &stream)?;
//!     stream.synchronize()?;
//!     pool.stats().map(|s| s.used_current)
//! }
//!
//! # #[cfg(all(feature = "emu", not(feature = "ascend"), not(feature = "cuda")))] fn main() -> Result<()> {
//! // The application: the first enabled backend, or one by name.
//! let used = zeroed_scratch(&mempool::DefaultBackend::new(), 4096)?;
//! let used_too = zeroed_scratch(&mempool::backend::Emulator::new(), 4096)?;
//! assert_eq!((used, used_too), (2 << 20, 2 << 20)); // one 2 MiB granule each
//! # Ok(())
//! # }
//! # #[cfg(not(all(feature = "emu", not(feature = "ascend"), not(feature = "cuda"))))] fn main() {}
//! ```
//!
//! ## The typed attributes
//!
//! Each pool attribute is a zero-sized key in [`attr`]; the methods `get`, `set`,
//! `reset` and `stats` of [`MemPoolExt`] (in the [`prelude`]) take a key, and the key's
//! type decides what compiles: reuse flags are `bool`, sizes are `u64` bytes, the
//! current counters are read-only, the high-water marks can only be reset (to 0).
//!
//! ```
//! # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
//! use mempool::prelude::*;
//! use mempool::{attr, backend::Emulator, Pool, PoolProps};
//!
//! let dev = Emulator::new();
//! let pool = Pool::new(&dev, &PoolProps::builder().max_size(1 << 30).build())?;
//! pool.set(attr::ReleaseThreshold, 256 << 20)?; // keep 256 MiB cached at synchronization
//! pool.set(attr::ReuseFollowEventDependencies, true)?;
//! assert_eq!(pool.get(attr::ReleaseThreshold)?, 256 << 20);
//! assert!(pool.get(attr::ReuseFollowEventDependencies)?);
//! pool.reset(attr::UsedMemHigh)?;
//!
//! // The rules of the contract are checked at run time too:
//! let e = pool.set(attr::ReleaseThreshold, 2 << 30).unwrap_err(); // above the pool size
//! assert_eq!((e.kind(), e.code()), (mempool::ErrorKind::InvalidParam, 507_000));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "emu"))] fn main() {}
//! ```
//!
//! Writing a read-only statistic does not compile, whatever the backend:
//!
//! ```compile_fail,E0277
//! use mempool::prelude::*;
//! use mempool::{attr, Pool};
//! fn clear<D: Device>(pool: &Pool<'_, D>) -> mempool::Result<()> {
//!     pool.set(attr::UsedMemCurrent, 0)
//! }
//! ```
//!
//! The numbered raw path ([`MemPool::get_attr_raw`], [`MemPool::set_attr_raw`]) is
//! there for FFI and checks the same rules at run time.
//!
//! ## The safe buffer
//!
//! [`Pool::alloc`] returns a [`Buffer`] that borrows the pool and its stream. Dropping it
//! frees it in stream order on the stream it was allocated on; [`Buffer::free_async`]
//! frees it on another stream (order every use before that free, with an event). The
//! one `unsafe` call of the traits, [`MemPool::free_async`], is made for you.
//!
//! ```
//! # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
//! use mempool::prelude::*;
//! use mempool::{backend::Emulator, Event, HostBuffer, Pool, PoolProps, Stream};
//!
//! let dev = Emulator::new();
//! let (producer, consumer) = (Stream::new(&dev)?, Stream::new(&dev)?);
//! let ready = Event::new(&dev)?;
//! let pool = Pool::new(&dev, &PoolProps::builder().max_size(1 << 30).build())?;
//!
//! let buf = pool.alloc(4096, &producer)?;
//! buf.copy_from_host(b"tensor", &producer)?;
//! ready.record(&producer)?; // the consumer may use the buffer after this point...
//! consumer.wait(&ready)?;
//! let out = HostBuffer::new(6);
//! buf.copy_to_host(&out, &consumer)?;
//! buf.free_async(&consumer)?; // ...and frees it after its last use, in its own order
//! consumer.synchronize()?;
//! assert_eq!(out.to_vec(), b"tensor");
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "emu"))] fn main() {}
//! ```
//!
//! A buffer cannot outlive its pool, so safe code never frees into a destroyed pool:
//!
//! ```compile_fail,E0505
//! use mempool::prelude::*;
//! use mempool::{Pool, PoolProps, Stream};
//! fn leak<D: Device>(dev: &D) -> mempool::Result<()> {
//!     let stream = Stream::new(dev)?;
//!     let pool = Pool::new(dev, &PoolProps::default())?;
//!     let buf = pool.alloc(64, &stream)?;
//!     drop(pool); // error: `pool` is still borrowed by `buf`
//!     buf.fill(0, &stream)
//! }
//! ```
//!
//! A free that the backend refuses when a buffer is dropped cannot be returned from
//! `drop`; the pool keeps the error and the next [`Pool::alloc`] reports it (or read it
//! with [`Pool::take_drop_error`]).
//!
//! ## Reading statistics
//!
//! [`MemPoolExt::stats`] reads the four counters at once. USED counts live allocations,
//! RESERVED adds the cached blocks the pool still holds; both count whole granules.
//! An out-of-memory error carries a snapshot, so fragmentation (much cached, no block
//! large enough) can be told from exhaustion.
//!
//! ```
//! # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
//! use mempool::prelude::*;
//! use mempool::{attr, backend::Emulator, ErrorKind, Pool, PoolProps, PoolStats, Stream};
//!
//! const MIB: u64 = 1 << 20;
//! let dev = Emulator::new(); // 2 MiB granules
//! let stream = Stream::new(&dev)?;
//! let pool = Pool::new(&dev, &PoolProps::builder().max_size(8 * MIB).build())?;
//!
//! let a = pool.alloc(1, &stream)?; // one granule
//! let b = pool.alloc(5 * MIB, &stream)?; // three granules
//! let full = PoolStats {
//!     reserved_current: 8 * MIB,
//!     reserved_high: 8 * MIB,
//!     used_current: 8 * MIB,
//!     used_high: 8 * MIB,
//! };
//! assert_eq!(pool.stats()?, full);
//!
//! drop(a); // cached: USED falls, RESERVED stays until a synchronization releases it
//! assert_eq!(pool.stats()?, PoolStats { used_current: 6 * MIB, ..full });
//! assert_eq!(pool.stats()?.cached(), 2 * MIB);
//!
//! let e = pool.alloc(4 * MIB, &stream).unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::OutOfMemory);
//! let oom = e.oom().expect("out-of-memory errors carry a snapshot");
//! assert_eq!((oom.largest_cached_block, oom.largest_free_range), (2 * MIB, 0));
//!
//! drop(b);
//! stream.synchronize()?; // threshold 0: everything cached is released
//! assert_eq!(pool.get(attr::ReservedMemCurrent)?, 0);
//! assert_eq!(pool.get(attr::ReservedMemHigh)?, 8 * MIB); // marks keep the peak until reset
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "emu"))] fn main() {}
//! ```
//!
//! ## What the reuse flags do
//!
//! A block freed on stream A is always reused by later allocations on A, and by any
//! stream once the host has synchronized with A after the free (the block is then known
//! complete). Reuse by another stream before that is what the three flags allow; all
//! three are off by default (Ascend's defaults), so the pool's creator opts in:
//!
//! | flag | another stream reuses a block when | cost |
//! |---|---|---|
//! | [`attr::ReuseFollowEventDependencies`] | it is ordered after the free through recorded events and waits (chains included) | none: the program already ordered it |
//! | [`attr::ReuseAllowOpportunistic`] | the free has already run on its stream when the allocation is made | results depend on timing |
//! | [`attr::ReuseAllowInternalDependencies`] | always; the pool makes the allocating stream wait for the freeing stream to pass the free | a wait the program did not ask for |
//!
//! ```
//! # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
//! use mempool::prelude::*;
//! use mempool::{attr, backend::Emulator, Event, Pool, PoolProps, Stream};
//!
//! let dev = Emulator::new();
//! let (a, b) = (Stream::new(&dev)?, Stream::new(&dev)?);
//! let after_free = Event::new(&dev)?;
//! let pool = Pool::new(&dev, &PoolProps::builder().max_size(1 << 30).build())?;
//!
//! let x = pool.alloc(1 << 20, &a)?;
//! let freed_addr = x.ptr();
//! drop(x); // freed on `a`
//! after_free.record(&a)?;
//! b.wait(&after_free)?; // `b` is now ordered after the free
//!
//! let y = pool.alloc(1 << 20, &b)?;
//! assert_ne!(y.ptr(), freed_addr, "flags off: the pool does not follow events");
//! pool.set(attr::ReuseFollowEventDependencies, true)?;
//! let z = pool.alloc(1 << 20, &b)?;
//! assert_eq!(z.ptr(), freed_addr, "flag on: the event orders the free before `b`");
//!
//! // With internal dependencies, `a` may take `b`'s freed block at once: the pool
//! // inserts the wait on `b`'s free itself.
//! pool.set(attr::ReuseAllowInternalDependencies, true)?;
//! let y_addr = y.ptr();
//! y.free_async(&b)?;
//! let w = pool.alloc(1 << 20, &a)?;
//! assert_eq!(w.ptr(), y_addr);
//! # drop((z, w));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "emu"))] fn main() {}
//! ```
//!
//! ## Testing your code with mocks
//!
//! With the `mock` feature (in `[dev-dependencies]`), [`backend::Mock`] is a
//! [mockall] mock of [`Device`], and its pools are mocks of [`MemPool`]: set
//! expectations, inject errors, count calls. The typed attribute methods keep working
//! on mocks, through the mocked raw path.
//!
//! ```
//! # #[cfg(feature = "mock")] fn main() -> mempool::Result<()> {
//! use mempool::backend::{Mock, MockMemPool, MockStream};
//! use mempool::{DevicePtr, Pool, PoolProps, Stream};
//!
//! let mut dev = Mock::new();
//! dev.allow_handles(); // streams, events and pool destruction: any number, all fine
//! dev.expect_create_pool().times(1).returning(|_| {
//!     let mut pool = MockMemPool::new();
//!     pool.expect_malloc_async().times(1).returning(|_, _| Ok(DevicePtr::from_addr(0x1000)));
//!     // The buffer frees exactly once, on the stream it was allocated on.
//!     pool.expect_free_async()
//!         .withf(|&p, &s| p == DevicePtr::from_addr(0x1000) && s == MockStream(1))
//!         .times(1)
//!         .returning(|_, _| Ok(()));
//!     Ok(pool)
//! });
//!
//! let stream = Stream::new(&dev)?;
//! let pool = Pool::new(&dev, &PoolProps::default())?;
//! let buf = pool.alloc(100, &stream)?;
//! drop(buf); // the mock checks its expectations when the pool is dropped
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "mock"))] fn main() {}
//! ```
//!
//! # For backend authors
//!
//! A backend implements [`Device`] (streams, events, synchronization, copies, pool
//! creation) and [`MemPool`] (allocation, free, trim and the raw attribute path) and
//! proves it with the `mempool-conformance` suite: every scenario of the behaviour
//! contract, written once against the traits. [`docs::backend_authors`] walks through a
//! complete small backend and runs the suite against it.
//!
//! - Use [`PoolProps::validate`], [`hal::attr::AttrId::check_write`] and the [`code`]
//!   numbers, so that errors match every other backend's.
//! - Document `# Errors` and, where your backend differs, `# Portability` on your types.
//! - Implement `mempool_conformance::Harness` for your backend and add a test target
//!   with `harness = false` that calls `mempool_conformance::conformance_main!`.
//!
//! [mockall]: https://docs.rs/mockall
#![cfg_attr(feature = "ascend", doc = "[`backend::Ascend`]: crate::backend::Ascend")]
#![cfg_attr(not(feature = "ascend"), doc = "[`backend::Ascend`]: #backends-and-features")]
#![cfg_attr(feature = "cuda", doc = "[`backend::Cuda`]: crate::backend::Cuda")]
#![cfg_attr(not(feature = "cuda"), doc = "[`backend::Cuda`]: #backends-and-features")]
#![cfg_attr(feature = "emu", doc = "[`backend::Emulator`]: crate::backend::Emulator")]
#![cfg_attr(not(feature = "emu"), doc = "[`backend::Emulator`]: #backends-and-features")]
#![cfg_attr(feature = "mock", doc = "[`backend::Mock`]: crate::backend::Mock")]
#![cfg_attr(not(feature = "mock"), doc = "[`backend::Mock`]: #backends-and-features")]
#![cfg_attr(
    any(feature = "ascend", feature = "cuda", feature = "emu", feature = "mock"),
    doc = "[`DefaultBackend`]: crate::DefaultBackend"
)]
#![cfg_attr(
    not(any(feature = "ascend", feature = "cuda", feature = "emu", feature = "mock")),
    doc = "[`DefaultBackend`]: #backends-and-features"
)]
#![deny(missing_docs)]
// docs.rs builds with `--cfg docsrs` on nightly: each feature-gated item says its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]

mod raii;
mod segment;

pub use mempool_hal as hal;
pub use mempool_hal::{
    Access, AttrId, Device, DevicePtr, Error, ErrorKind, EventStatus, Granularity, HostBuffer, HostRegisterFlags,
    HostRegistration, Mapping, MemInfo, MemPool, MemPoolExt, OomInfo, Physical, PoolProps, PoolStats, RawAttrValue,
    Reserved, Result, StreamStatus, VirtualMemory, code,
};
pub use raii::{Buffer, Event, Pool, Stream};
pub use segment::ExpandableSegment;

/// The stream-ordered small-block layer (the `mempool-small` crate): packs requests up to
/// a threshold into pool blocks, for any backend. [`small::SmallBlocks`] is itself a
/// [`MemPool`]; a facade [`Pool`] dereferences to the backend's pool it wraps.
///
/// ```
/// # #[cfg(feature = "emu")] fn main() -> mempool::Result<()> {
/// use mempool::prelude::*;
/// use mempool::small::SmallBlocks;
/// use mempool::{Pool, PoolProps, Stream};
///
/// let dev = mempool::backend::Emulator::new();
/// let stream = Stream::new(&dev)?;
/// let pool = Pool::new(&dev, &PoolProps::builder().max_size(1 << 30).build())?;
/// let small = SmallBlocks::new(&dev, &pool, 1 << 20)?; // requests up to 1 MiB are carved
/// let p = small.malloc_async(4096, stream.raw())?;
/// assert_eq!(small.small_stats().held_current, 2 << 20);
/// // SAFETY: `p` is a live allocation of `small` with no work enqueued on it.
/// unsafe { small.free_async(p, stream.raw())? };
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "emu"))] fn main() {}
/// ```
pub use mempool_small as small;

/// The mocks (feature `mock`): the `mempool-mock` crate, with mockall's `predicate`
/// and `mockall` itself re-exported, so tests need no direct dependency on mockall.
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub use mempool_mock as mock;

/// The typed attribute keys (see [`mempool_hal::attr`]).
pub mod attr {
    pub use mempool_hal::attr::*;
}

/// The traits, so `use mempool::prelude::*;` brings `get`, `set`, `reset` and `stats`
/// into scope, and the extension traits of backends that have virtual memory and host
/// registration.
pub mod prelude {
    pub use mempool_hal::{Device, HostRegistration, MemPool, MemPoolExt, VirtualMemory};
}

/// The backends enabled by features, by explicit name.
///
/// Each backend's items are here exactly when its feature is on; naming one from code
/// that must run on that backend (rather than [`DefaultBackend`]) keeps working when
/// another crate in the build turns on a backend that comes earlier in the order.
#[cfg_attr(not(any(feature = "ascend", feature = "cuda", feature = "emu", feature = "mock")), doc = "")]
#[cfg_attr(
    not(any(feature = "ascend", feature = "cuda", feature = "emu", feature = "mock")),
    doc = "[`DefaultBackend`]: crate#backends-and-features"
)]
pub mod backend {
    /// The Ascend backend (feature `ascend`); its search options and environment variable
    /// carry the vendor's name, as the CUDA backend's do.
    #[cfg(feature = "ascend")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ascend")))]
    pub use mempool_ascend::{
        Ascend, AscendEvent, AscendPool, AscendStream, ENV_LIBRARY as ASCEND_ENV_LIBRARY,
        LoadOptions as AscendLoadOptions,
    };

    /// The Ascend backend's search options, by their old name.
    #[cfg(feature = "ascend")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ascend")))]
    #[deprecated(since = "0.1.0", note = "named `AscendLoadOptions`, beside `CudaLoadOptions`")]
    pub type LoadOptions = mempool_ascend::LoadOptions;

    /// The Ascend backend's environment variable, by its old name.
    #[cfg(feature = "ascend")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ascend")))]
    #[deprecated(since = "0.1.0", note = "named `ASCEND_ENV_LIBRARY`, beside `CUDA_ENV_LIBRARY`")]
    pub const ENV_LIBRARY: &str = mempool_ascend::ENV_LIBRARY;

    /// The CUDA backend (feature `cuda`); its search options and environment variable
    /// carry the vendor's name, as the Ascend backend's do.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub use mempool_cuda::{
        Cuda, CudaEvent, CudaPool, CudaStream, ENV_LIBRARY as CUDA_ENV_LIBRARY, LoadOptions as CudaLoadOptions,
    };

    #[cfg(feature = "emu")]
    #[cfg_attr(docsrs, doc(cfg(feature = "emu")))]
    pub use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, ReuseCounts, ReuseRule};

    /// The mock device (feature `mock`): `MockDevice` under its short name.
    #[cfg(feature = "mock")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
    pub type Mock = mempool_mock::MockDevice;
    #[cfg(feature = "mock")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
    pub use mempool_mock::{MockDevice, MockEvent, MockMemPool, MockStream, out_of_memory};
}

#[cfg(all(feature = "emu", any(feature = "ascend", feature = "cuda")))]
mod auto;
#[cfg(all(feature = "emu", feature = "ascend"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "emu", feature = "ascend"))))]
#[allow(deprecated)]
pub use auto::auto_with;
#[cfg(all(feature = "emu", any(feature = "ascend", feature = "cuda")))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "emu", any(feature = "ascend", feature = "cuda")))))]
pub use auto::{Auto, AutoOptions, auto, auto_from};

cfg_if::cfg_if! {
    if #[cfg(feature = "ascend")] {
        /// The first enabled backend: the real Ascend runtime (open it with
        /// `DefaultBackend::open(device)`, or use `auto()`, with `emu`, to fall back to the
        /// emulator). It stays the default when `cuda` is on too: the order and its reason
        /// are in [the choosers' table](crate#which-backend-runs-the-three-choosers).
        pub type DefaultBackend = mempool_ascend::Ascend;
    } else if #[cfg(feature = "cuda")] {
        /// The first enabled backend: the CUDA driver (open it with
        /// `DefaultBackend::open(device)`, or use `auto()`, with `emu`, to fall back to the
        /// emulator; [the choosers' table](crate#which-backend-runs-the-three-choosers)).
        pub type DefaultBackend = mempool_cuda::Cuda;
    } else if #[cfg(feature = "emu")] {
        /// The first enabled backend: the CPU emulator.
        pub type DefaultBackend = mempool_emu::Emulator;
    } else if #[cfg(feature = "mock")] {
        /// The first enabled backend: the mock device (no other backend is enabled).
        pub type DefaultBackend = mempool_mock::MockDevice;
    }
}

/// Guides that do not belong to one item.
pub mod docs {
    #[doc = include_str!("docs/backend_authors.md")]
    pub mod backend_authors {}
}

/// The README's example, compiled and run as a doctest.
#[cfg(all(doctest, feature = "emu"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The examples of `docs/c-libraries.md` (virtual memory), compiled and run as doctests.
#[cfg(all(doctest, feature = "emu"))]
#[doc = include_str!("../../../docs/c-libraries.md")]
pub struct CLibrariesDoctests;

/// The examples of `docs/frameworks.md` (the small-block layer), compiled and run as doctests.
#[cfg(all(doctest, feature = "emu"))]
#[doc = include_str!("../../../docs/frameworks.md")]
pub struct FrameworksDoctests;
