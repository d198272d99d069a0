//! Core traits and types for stream-ordered device memory pools.
//!
//! This crate is the contract every backend of `mempool-hal` implements: Ascend CANN's
//! `aclrtMemPool*`, CUDA's `cuMemPool*` (the driver's twin of `cudaMemPool*`), the CPU
//! emulator, and mocks. It holds no FFI and no unsafe code; frameworks depend on it
//! (usually through the `mempool` facade) and pick a backend by cargo feature.
//!
//! # The contract
//!
//! What every backend does, rule by rule, is written down in [`contract`]: stream order and
//! the precise meaning of "ordered after", pool properties, attributes, the reuse order of
//! allocation, free, release and trim, statistics and lifetime, the C ABIs of the two
//! drop-in libraries (CANN's `libacl_rt.so`, CUDA's `libcuda.so.1`), how the real runtimes
//! are found, the conformance scenarios, the emulator's stream-order checker, the
//! behaviours of installed runtimes (Ascend's two and CUDA's), virtual memory and host
//! registration. The trait docs state each method's part and link to the page that holds
//! the rule; a page's "Status" note says what the project does not implement yet.
//!
//! # Design choices
//!
//! - **Static dispatch.** [`Device`] has associated `Stream`, `Event` and `Pool` types, as
//!   wgpu-hal's `Api` does; generic code compiles to direct calls.
//! - **Typed attributes.** Each pool attribute is a zero-sized key in [`attr`]; marker
//!   traits decide what compiles: a read-only counter has no `set`, a high-water mark has
//!   only `reset`, reuse flags are `bool`. The numbered raw path still exists for FFI and
//!   checks the same rules at run time.
//! - **One error type.** [`Error`] carries a portable [`ErrorKind`] to match on
//!   ([`Error::kind`]) and a vendor code to log ([`Error::code`], in the numbering
//!   [`Error::vendor`] names). The emulator's own errors and the Ascend backend's are ACL
//!   numbers ([`code`], [`Vendor::Acl`]); the CUDA backend's are `CUresult`s
//!   ([`Vendor::Cuda`]), stamped at its boundary from one kind → code table
//!   (`mempool_cuda::result::code_of`). An error the runtime or the driver itself returns
//!   keeps its code. Out-of-memory errors carry a statistics snapshot and the largest free
//!   range.
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
//! Implement [`Device`] and [`MemPool`]; use [`PoolProps::validate`] and
//! [`attr::AttrId::check_write`] so errors have the kinds of every other backend. They
//! stamp ACL numbers ([`code`]): a backend of another vendor stamps its own code at its
//! boundary ([`Error::code_in`], [`Error::with_vendor_code`]) from its vendor's one
//! kind → code table, as the CUDA backend does. Then run the `mempool-conformance` suite
//! against your backend (its scenarios are listed in [`contract::conformance`]).

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
