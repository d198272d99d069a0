//! Page-locked staging buffers for host-to-device and device-to-host copies.
//!
//! CANN makes an async copy whose host side is pageable memory synchronous (it waits for
//! the stream, then copies), so the backend stages every copy through `aclrtMallocHost`
//! memory, which keeps the copy asynchronous. Buffers are reused from a small cache per
//! backend instance, the shared [`Staging`](mempool_backend_kit::staging::Staging): sizes
//! are rounded up to a power of two (at least 4 KiB), and at most
//! [`PER_CLASS`](mempool_backend_kit::staging::PER_CLASS) buffers of each size up to
//! [`MAX_CACHED`](mempool_backend_kit::staging::MAX_CACHED) bytes are kept.
//! [`StagingStats`] counts `aclrtMallocHost` calls as allocations and `aclrtFreeHost` calls
//! as frees.
//!
//! A buffer goes back to the cache only after its copy has run: it is moved into the host
//! function launched after the copy on the same stream, which returns it. CANN forbids
//! freeing memory inside a host function, so a buffer the cache cannot keep is set aside
//! there and freed later on a user thread (the next copy, or the instance's end).

use crate::result::memory::PinnedHost;
pub use mempool_backend_kit::staging::StagingStats;

/// The staging cache of one backend instance (see the [module docs](self)).
pub(super) type Staging = mempool_backend_kit::staging::Staging<PinnedHost>;
