//! Page-locked staging buffers for host-to-device and device-to-host copies.
//!
//! The driver copies asynchronously only between device memory and page-locked host
//! memory: with pageable memory, `cuMemcpyHtoDAsync_v2` and `cuMemcpyDtoHAsync_v2` stage
//! through the driver's own buffers and may return only once the copy is done. So the
//! backend stages every copy through `cuMemAllocHost_v2` memory, which keeps it
//! asynchronous. Buffers are reused from a small cache per backend instance, the shared
//! [`Staging`](mempool_backend_kit::staging::Staging): sizes are rounded up to a power of
//! two (at least 4 KiB), and at most [`PER_CLASS`](mempool_backend_kit::staging::PER_CLASS)
//! buffers of each size up to [`MAX_CACHED`](mempool_backend_kit::staging::MAX_CACHED)
//! bytes are kept. [`StagingStats`] counts `cuMemAllocHost_v2` calls as allocations and
//! `cuMemFreeHost` calls as frees.
//!
//! A buffer goes back to the cache only after its copy has run: it is moved into the host
//! function launched after the copy on the same stream, which returns it. The driver
//! forbids CUDA calls inside a host function, so a buffer the cache cannot keep is set
//! aside there and freed later on a user thread (the next copy, or the instance's end).

use crate::result::memory::PinnedHost;
pub use mempool_backend_kit::staging::StagingStats;

/// The staging cache of one backend instance (see the [module docs](self)).
pub(super) type Staging = mempool_backend_kit::staging::Staging<PinnedHost>;
