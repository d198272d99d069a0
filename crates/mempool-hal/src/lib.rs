//! Core traits and types for stream-ordered device memory pools.
//!
//! This crate is the contract every backend of `mempool-hal` implements: the Ascend
//! CANN runtime (`aclrtMemPool*`), the CUDA driver (`cuMemPool*`, the twin of
//! `cudaMemPool*`, with the same attribute numbering), the CPU emulator (which answers as
//! either), and mocks. It holds no FFI and no unsafe code; frameworks depend on it
//! (usually through the `mempool` facade) and pick a backend by cargo feature. Errors are
//! portable kinds ([`ErrorKind`]) with each backend's own vendor code ([`Error::code`],
//! [`Vendor`]): ACL numbers from the emulator and the Ascend backend, `CUresult`s from the
//! CUDA backend.
//!
//! # The contract
//!
//! What every backend does, rule by rule, is written down in [`contract`]: stream order and
//! the precise meaning of "ordered after", pool properties, attributes, the reuse order of
//! allocation, free, release and trim, statistics and lifetime, the C ABI of the drop-in
//! library, how the real runtime is found, the conformance scenarios, the emulator's
//! stream-order checker, and the two behaviours of installed runtimes. The trait docs state
//! each method's part and link to the page that holds the rule; a page's "Status" note
//! says what the project does not implement yet.
//!
//! # Design choices
//!
//! - **Static dispatch.** [`Device`] has associated `Stream`, `Event` and `Pool` types, as
//!   wgpu-hal's `Api` does; generic code compiles to direct calls.
//! - **Typed attributes.** Each pool attribute is a zero-sized key in [`attr`]; marker
//!   traits decide what compiles: a read-only counter has no `set`, a high-water mark has
//!   only `reset`, reuse flags are `bool`. The numbered raw path still exists for FFI and
//!   checks the same rules at run time.
//! - **One error type.** [`Error`] carries a portable [`ErrorKind`] to match on and the
//!   vendor code (ACL numbering) to log; out-of-memory errors carry a statistics snapshot
//!   and the largest free range.
//! - **Opaque pointers.** [`DevicePtr`] is `Copy` and never dereferenced by host code.
//!   [`MemPool::free_async`] is the one `unsafe fn`: the real driver cannot check every
//!   pointer. The `mempool` facade wraps it in a safe, owned buffer.
//!
//! # For users
//!
//! ```
//! use mempool_hal::{attr, Device, MemPool, MemPoolExt, PoolProps, Result};
//!
//! /// Allocates a scratch buffer on `stream`, clears it, and frees it in stream order.
//! fn scratch<D: Device>(dev: &D, stream: &D::Stream) -> Result<u64> {
//!     let pool = dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(1 << 30).build())?;
//!     pool.set(attr::ReleaseThreshold, 256 << 20)?;
//!     let p = pool.malloc_async(4096, stream)?;
//!     dev.memset_async(p, 0, 4096, stream)?;
//!     // SAFETY: `p` is a live allocation of `pool`, used only on `stream` before this.
//!     unsafe { pool.free_async(p, stream)? };
//!     let high = pool.stats()?.used_high;
//!     dev.destroy_pool(&pool)?;
//!     Ok(high)
//! }
//! ```
//!
//! # For backend authors
//!
//! Implement [`Device`] and [`MemPool`]; use [`PoolProps::validate`],
//! [`attr::AttrId::check_write`] and the [`code`] numbers so errors match every other
//! backend; then run the `mempool-conformance` suite against your backend (its scenarios
//! are listed in [`contract::conformance`]).

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod attr;
pub mod contract;
mod device;
mod error;
mod pool;
mod profile;
mod props;
mod ptr;
mod reuse;
mod stats;
mod vmm;

pub use attr::{AttrId, RawAttrValue};
pub use device::{Device, EventStatus, HostFn, MemInfo, StreamStatus};
pub use error::{Error, ErrorKind, OomInfo, PoolCall, Result, Vendor, code};
pub use pool::{MemPool, MemPoolExt};
pub use profile::Profile;
pub use props::{
    AllocationType, HandleType, Location, LocationType, PoolProps, PoolPropsBuilder, round_down, round_up,
};
pub use ptr::{DevicePtr, HostBuffer};
pub use reuse::ReuseFlags;
pub use stats::PoolStats;
pub use vmm::{Access, Granularity, HostRegisterFlags, HostRegistration, Mapping, Physical, Reserved, VirtualMemory};
