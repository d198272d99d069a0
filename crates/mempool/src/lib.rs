//! Safe, fast, testable stream-ordered device memory pools.
//!
//! This is the crate frameworks depend on. It re-exports the core traits of
//! [`mempool_hal`], picks a backend by cargo feature, and adds owned RAII types:
//! a [`Pool`] that is destroyed when dropped, [`Stream`]s and [`Event`]s, and a
//! [`Buffer`] that frees itself in stream order, so safe code cannot double free, free
//! into a destroyed pool, or leak a block.
//!
//! # Backends
//!
//! | feature | backend | type |
//! |---|---|---|
//! | `emu` (default) | CPU emulator | [`backend::Emulator`] |
//!
//! [`DefaultBackend`] names the first enabled backend. With no backend feature the crate
//! still builds: traits and types only.
//!
//! # For users
//!
//! ```
//! use mempool::prelude::*;
//! use mempool::{attr, DefaultBackend, Pool, PoolProps, Stream};
//!
//! let dev = DefaultBackend::new();
//! let stream = Stream::new(&dev)?;
//! let pool = Pool::new(&dev, &PoolProps::builder().max_size(1 << 30).build())?;
//! pool.set(attr::ReleaseThreshold, 256 << 20)?; // keep up to 256 MiB cached at sync
//!
//! let buf = pool.alloc(4096, &stream)?;
//! buf.copy_from_host(b"hello", &stream)?;
//! assert_eq!(pool.stats()?.used_current, 2 << 20); // rounded to the 2 MiB granule
//! buf.free_async(&stream)?; // or just drop it: it frees on its stream
//! stream.synchronize()?;
//! assert_eq!(pool.stats()?.used_current, 0);
//! # Ok::<(), mempool::Error>(())
//! ```
//!
//! Writing a read-only statistic does not compile:
//!
//! ```compile_fail,E0277
//! use mempool::prelude::*;
//! use mempool::{attr, DefaultBackend, Pool, PoolProps};
//! let dev = DefaultBackend::new();
//! let pool = Pool::new(&dev, &PoolProps::default()).unwrap();
//! pool.set(attr::UsedMemCurrent, 0).unwrap();
//! ```

#![deny(missing_docs)]
#![deny(unsafe_code)]

mod raii;

pub use mempool_hal as hal;
pub use mempool_hal::{
    AttrId, Device, DevicePtr, Error, ErrorKind, EventStatus, HostBuffer, MemInfo, MemPool, MemPoolExt, OomInfo,
    PoolProps, PoolStats, RawAttrValue, Result, code,
};
pub use raii::{Buffer, Event, Pool, Stream};

/// The typed attribute keys (see [`mempool_hal::attr`]).
pub mod attr {
    pub use mempool_hal::attr::*;
}

/// The traits, so `use mempool::prelude::*;` brings `get`, `set`, `reset` and `stats`
/// into scope.
pub mod prelude {
    pub use mempool_hal::{Device, MemPool, MemPoolExt};
}

/// The backends enabled by features, by explicit name.
pub mod backend {
    #[cfg(feature = "emu")]
    pub use mempool_emu::{EmuEvent, EmuPool, EmuStream, Emulator, ExecutionMode, ReuseCounts, ReuseRule};
}

cfg_if::cfg_if! {
    if #[cfg(feature = "emu")] {
        /// The first enabled backend: the CPU emulator.
        pub type DefaultBackend = mempool_emu::Emulator;
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(all(doctest, feature = "emu"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
