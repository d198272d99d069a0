//! [mockall] mocks of the `mempool-hal` traits, for unit tests of code that is generic over
//! a [`Device`].
//!
//! A framework's allocator, cache or scheduler is written against `D: Device`; its unit
//! tests swap the real device for [`MockDevice`] and its pools for [`MockMemPool`], set
//! expectations (what `malloc_async` returns, an injected out-of-memory error, how many
//! times `free_async` is called) and let mockall check them when the mocks drop.
//!
//! - [`MockDevice`] mocks [`Device`] with `Stream = `[`MockStream`], `Event = `[`MockEvent`]
//!   and `Pool = `[`MockMemPool`].
//! - [`MockMemPool`] mocks [`MemPool`] with `Stream = `[`MockStream`].
//! - [`MockDevice`] also mocks [`VirtualMemory`]
//!   (`expect_reserve`, `expect_create_physical`, `expect_map`, ...).
//! - [`MockDevice`] also mocks [`HostRegistration`]
//!   (`expect_register_host`, `expect_unregister_host`; `register_host` is an `unsafe fn`,
//!   as on the trait).
//! - [`MockStream`] and [`MockEvent`] are plain ids: tests make them with `MockStream(1)`
//!   and compare them in predicates.
//!
//! The typed attribute methods `get`, `set`, `reset` and `stats` of
//! [`MemPoolExt`](mempool_hal::MemPoolExt) are not mocked: they are provided methods, so on
//! a mock they call the mocked raw path ([`MemPool::get_attr_raw`],
//! [`MemPool::set_attr_raw`]) exactly as they do on a real backend, and the type rules (a
//! read-only counter cannot be `set`) still hold at compile time. Nor is
//! [`MemPool::stats_snapshot`]: the mock keeps its provided method, so `stats()` on a mock
//! is four `get_attr_raw` calls (attributes 5, 6, 7, 8, in that order), each answered by
//! the test's expectations, which fix what a snapshot reads. Expect the raw calls they make: `pool.set(attr::ReleaseThreshold, 5)` is
//! `set_attr_raw(AttrId(4), RawAttrValue::U64(5))`.
//!
//! [`MemPool::free_async`] is an `unsafe fn`; its mock is too, so calling it needs an
//! `unsafe` block, but setting its expectation (`expect_free_async`) does not.
//!
//! Depend on this crate (or on the `mempool` facade with its `mock` feature) from
//! `[dev-dependencies]` only, so release builds never carry mockall.
//!
//! # Example
//!
//! A unit test of a function that retries an allocation once after trimming the pool:
//!
//! ```
//! use mempool_hal::{attr, AttrId, DevicePtr, ErrorKind, MemPool, MemPoolExt, RawAttrValue, Result};
//! use mempool_mock::{MockMemPool, MockStream, out_of_memory, predicate::eq};
//! use mempool_mock::mockall::Sequence;
//!
//! /// The code under test: allocate, and on out-of-memory trim to USED and retry once.
//! fn alloc_or_trim<P: MemPool>(pool: &P, size: u64, stream: &P::Stream) -> Result<DevicePtr> {
//!     match pool.malloc_async(size, stream) {
//!         Err(e) if e.kind() == ErrorKind::OutOfMemory => {
//!             pool.trim_to(pool.get(attr::UsedMemCurrent)?)?;
//!             pool.malloc_async(size, stream)
//!         }
//!         other => other,
//!     }
//! }
//!
//! let mut pool = MockMemPool::new();
//! let mut seq = Sequence::new();
//! pool.expect_malloc_async()
//!     .times(1)
//!     .in_sequence(&mut seq)
//!     .returning(|size, _| Err(out_of_memory(size)));
//! pool.expect_get_attr_raw()
//!     .with(eq(AttrId::USED_MEM_CURRENT))
//!     .times(1)
//!     .in_sequence(&mut seq)
//!     .returning(|_| Ok(RawAttrValue::U64(6 << 20)));
//! pool.expect_trim_to().with(eq(6 << 20)).times(1).in_sequence(&mut seq).returning(|_| Ok(()));
//! pool.expect_malloc_async()
//!     .withf(|&size, stream| size == 4096 && *stream == MockStream(7))
//!     .times(1)
//!     .in_sequence(&mut seq)
//!     .returning(|_, _| Ok(DevicePtr::from_addr(0x1000)));
//!
//! let p = alloc_or_trim(&pool, 4096, &MockStream(7))?;
//! assert_eq!(p, DevicePtr::from_addr(0x1000));
//! # Ok::<(), mempool_hal::Error>(())
//! ```
//!
//! # Handles for RAII code
//!
//! Code that creates and destroys streams, events and pools (the `mempool` facade's
//! `Stream`, `Event` and `Pool` do so when dropped) calls those methods on every run; a
//! mock panics on a call it does not expect. [`MockDevice::allow_handles`] expects any
//! number of them, hands out fresh ids, and leaves the interesting methods to the test.

#![deny(missing_docs)]

use mempool_hal::{Access, Granularity, Mapping, Physical, Reserved, VirtualMemory};
use mempool_hal::{
    AttrId, Device, DevicePtr, Error, EventStatus, HostBuffer, HostFn, MemInfo, MemPool, OomInfo, PoolProps, PoolStats,
    RawAttrValue, Result, StreamStatus,
};
// Host registration (contract §15).
use mempool_hal::{HostRegisterFlags, HostRegistration};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The mocking library, re-exported so tests need no direct dependency on it (for
/// `Sequence`, `predicate`, `Predicate`).
pub use mockall;
/// mockall's predicates (`eq`, `function`, `always`, ...), for `.with(...)`.
pub use mockall::predicate;

/// The stream handle of [`MockDevice`] and [`MockMemPool`]: an id chosen by the test (or
/// handed out by [`MockDevice::allow_handles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MockStream(pub u64);

/// The event handle of [`MockDevice`]: an id chosen by the test (or handed out by
/// [`MockDevice::allow_handles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MockEvent(pub u64);

mockall::mock! {
    /// A mock of [`MemPool`] (stream type [`MockStream`]).
    ///
    /// `MockMemPool::new()` expects nothing: set an expectation for each call the code
    /// under test makes (`expect_malloc_async`, `expect_free_async`, `expect_trim_to`,
    /// `expect_get_attr_raw`, `expect_set_attr_raw`, `expect_size`). The typed methods of
    /// [`MemPoolExt`](mempool_hal::MemPoolExt) go through the raw ones.
    ///
    /// ```
    /// use mempool_hal::{attr, AttrId, MemPoolExt, RawAttrValue};
    /// use mempool_mock::{MockMemPool, predicate::eq};
    ///
    /// let mut pool = MockMemPool::new();
    /// pool.expect_set_attr_raw()
    ///     .with(eq(AttrId(4)), eq(RawAttrValue::U64(5)))
    ///     .times(1)
    ///     .returning(|_, _| Ok(()));
    /// pool.set(attr::ReleaseThreshold, 5)?;
    /// # Ok::<(), mempool_hal::Error>(())
    /// ```
    #[derive(Debug)]
    pub MemPool {}

    impl MemPool for MemPool {
        type Stream = MockStream;

        fn malloc_async(&self, size: u64, stream: &MockStream) -> Result<DevicePtr>;
        unsafe fn free_async(&self, ptr: DevicePtr, stream: &MockStream) -> Result<()>;
        fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()>;
        fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue>;
        fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()>;
        fn size(&self) -> u64;
    }
}

mockall::mock! {
    /// A mock of [`Device`] (streams [`MockStream`], events [`MockEvent`], pools
    /// [`MockMemPool`]).
    ///
    /// `MockDevice::new()` expects nothing: set an expectation for each call the code
    /// under test makes, or call [`MockDevice::allow_handles`] to accept the handle
    /// bookkeeping. `create_pool` returns a [`MockMemPool`] that the test builds with its
    /// own expectations:
    ///
    /// ```
    /// use mempool_hal::{Device, DevicePtr, MemPool, PoolProps};
    /// use mempool_mock::{MockDevice, MockMemPool, MockStream};
    ///
    /// let mut dev = MockDevice::new();
    /// dev.expect_create_pool().times(1).returning(|_| {
    ///     let mut pool = MockMemPool::new();
    ///     pool.expect_malloc_async().returning(|_, _| Ok(DevicePtr::from_addr(0x2000)));
    ///     Ok(pool)
    /// });
    /// let pool = dev.create_pool(&PoolProps::default())?;
    /// assert_eq!(pool.malloc_async(64, &MockStream(1))?, DevicePtr::from_addr(0x2000));
    /// # Ok::<(), mempool_hal::Error>(())
    /// ```
    #[derive(Debug)]
    pub Device {}

    impl Device for Device {
        type Stream = MockStream;
        type Event = MockEvent;
        type Pool = MockMemPool;

        fn id(&self) -> u32;
        fn pool_granularity(&self) -> u64;
        fn mem_info(&self) -> Result<MemInfo>;
        fn create_stream(&self) -> Result<MockStream>;
        fn destroy_stream(&self, stream: &MockStream) -> Result<()>;
        fn synchronize_stream(&self, stream: &MockStream) -> Result<()>;
        fn synchronize_device(&self) -> Result<()>;
        fn create_event(&self) -> Result<MockEvent>;
        fn destroy_event(&self, event: &MockEvent) -> Result<()>;
        fn record_event(&self, event: &MockEvent, stream: &MockStream) -> Result<()>;
        fn stream_wait_event(&self, stream: &MockStream, event: &MockEvent) -> Result<()>;
        fn synchronize_event(&self, event: &MockEvent) -> Result<()>;
        fn query_event(&self, event: &MockEvent) -> Result<EventStatus>;
        fn query_stream(&self, stream: &MockStream) -> Result<StreamStatus>;
        fn event_elapsed_ms(&self, start: &MockEvent, end: &MockEvent) -> Result<f32>;
        fn create_pool(&self, props: &PoolProps) -> Result<MockMemPool>;
        fn destroy_pool(&self, pool: &MockMemPool) -> Result<()>;
        fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &MockStream) -> Result<()>;
        fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &MockStream) -> Result<()>;
        fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &MockStream) -> Result<()>;
        fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &MockStream) -> Result<()>;
        fn launch_host_func(&self, stream: &MockStream, f: HostFn) -> Result<()>;
        fn can_access_peer(&self, peer: u32) -> Result<bool>;
        fn enable_peer_access(&self, peer: u32) -> Result<()>;
        fn disable_peer_access(&self, peer: u32) -> Result<()>;
    }

    // Virtual memory (contract §14): `expect_reserve`, `expect_map`, ...
    impl VirtualMemory for Device {
        fn granularity(&self, which: Granularity) -> Result<u64>;
        fn reserve(&self, size: u64, alignment: u64, hint: Option<DevicePtr>) -> Result<Reserved>;
        fn release_reserved(&self, range: Reserved) -> Result<()>;
        fn create_physical(&self, size: u64) -> Result<Physical>;
        fn release_physical(&self, chunk: Physical) -> Result<()>;
        fn map(&self, at: DevicePtr, size: u64, offset: u64, chunk: Physical) -> Result<Mapping>;
        fn unmap(&self, mapping: Mapping) -> Result<()>;
        fn set_access(&self, at: DevicePtr, size: u64, access: Access) -> Result<()>;
    }

    // Host registration (contract §15): `expect_register_host`, `expect_unregister_host`.
    impl HostRegistration for Device {
        unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr>;
        fn unregister_host(&self, ptr: *mut u8) -> Result<()>;
    }
}

impl MockDevice {
    /// Expects any number of `create_stream`, `destroy_stream`, `create_event`,
    /// `destroy_event` and `destroy_pool` calls, all succeeding. Created streams and
    /// events get fresh ids counting from 1 (streams and events count separately, in
    /// creation order).
    ///
    /// Expectations set earlier on these methods are matched first (mockall tries them
    /// in the order they were set), so a test can still pin, say, one failing
    /// `create_stream` before calling this.
    ///
    /// ```
    /// use mempool_hal::Device;
    /// use mempool_mock::{MockDevice, MockEvent, MockStream};
    ///
    /// let mut dev = MockDevice::new();
    /// dev.allow_handles();
    /// assert_eq!(dev.create_stream()?, MockStream(1));
    /// assert_eq!(dev.create_stream()?, MockStream(2));
    /// assert_eq!(dev.create_event()?, MockEvent(1));
    /// dev.destroy_stream(&MockStream(1))?;
    /// # Ok::<(), mempool_hal::Error>(())
    /// ```
    pub fn allow_handles(&mut self) -> &mut Self {
        let streams = Arc::new(AtomicU64::new(0));
        let events = Arc::new(AtomicU64::new(0));
        self.expect_create_stream().returning(move || Ok(MockStream(streams.fetch_add(1, Ordering::Relaxed) + 1)));
        self.expect_destroy_stream().returning(|_| Ok(()));
        self.expect_create_event().returning(move || Ok(MockEvent(events.fetch_add(1, Ordering::Relaxed) + 1)));
        self.expect_destroy_event().returning(|_| Ok(()));
        self.expect_destroy_pool().returning(|_| Ok(()));
        self
    }
}

/// An out-of-memory error as a pool reports it (code 507000), for `requested` bytes of
/// an exhausted pool: the snapshot says nothing is free and nothing is cached.
///
/// For a particular snapshot (to test code that tells fragmentation from exhaustion),
/// call [`Error::out_of_memory`] with your own [`OomInfo`].
///
/// ```
/// use mempool_hal::ErrorKind;
/// let e = mempool_mock::out_of_memory(4096);
/// assert_eq!((e.kind(), e.code()), (ErrorKind::OutOfMemory, 507_000));
/// assert_eq!(e.oom().unwrap().requested, 4096);
/// ```
pub fn out_of_memory(requested: u64) -> Error {
    Error::out_of_memory(
        "malloc_async",
        OomInfo {
            requested,
            stats: PoolStats::default(),
            pool_size: 0,
            largest_free_range: 0,
            largest_cached_block: 0,
            device_free: None,
        },
    )
}
