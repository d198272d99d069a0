//! The conformance suite (contract §10) through the small-block layer
//! (`mempool_small::SmallBlocks`) over the emulator, in both execution modes and both
//! profiles, as `conformance.rs` runs it on the bare emulator.
//!
//! The scenarios make their pools with `Device::create_pool`, so they run on a
//! [`LayerDevice`]: a device that delegates every call to the emulator and whose pools are
//! a layer over an emulator pool ([`LayerPool`], built with `SmallBlocks::new_shared`).
//! Two thresholds:
//!
//! - **0** (`pass_through::<scenario>::mode_..::profile_..`): every request goes to the
//!   pool. Every scenario must pass unchanged: the layer is transparent.
//! - **the pool granularity** (`granule::<scenario>::..`): requests of at most one granule
//!   (64 KiB here) are carved from the layer's 2 MiB blocks, larger ones go to the pool.
//!   Scenarios whose exact expectations are about the pool's own granule carving (the
//!   address of a request of at most one granule, RESERVED and USED figures that count
//!   such a request as one granule, reuse of a freed granule) do not apply: they are
//!   listed in [`GRANULE`] with the reason and run as ignored cases whose ignore message is
//!   that reason (`cargo test -- --ignored` runs them, and they fail). Every other scenario
//!   runs and must pass.
//!
//! `every_scenario_is_run_or_listed` checks that each table names every scenario of the
//! suite once, in order, so a new scenario cannot be left out silently.
//!
//! The rules it checks: contract §10 (`mempool_hal::contract::conformance`), §12
//! (`mempool_hal::contract::profiles`), and the crate docs of `mempool_small`.

use mempool_conformance::{Capability, Harness};
use mempool_emu::Emulator;
use mempool_emu::ExecutionMode::{self, Deferred, Threaded};
use mempool_emu::Profile::{self, CannOpen, Documented};
use mempool_hal::{
    AttrId, Device, DevicePtr, EventStatus, HostBuffer, HostFn, MemInfo, MemPool, PoolProps, PoolStats, RawAttrValue,
    Result, StreamStatus,
};
use mempool_small::SmallBlocks;
use mempool_tests::{EmuHarness, check_scenario_names, run_scenario};
use rstest::rstest;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A device whose pools are small-block layers over the pools of device `D`; every other
/// call goes to `D` as it is.
#[derive(Debug)]
struct LayerDevice<D> {
    inner: Arc<D>,
    /// The threshold of the layers it makes (capped at each pool's size).
    threshold: u64,
}

/// A pool of [`LayerDevice`]: the layer and the pool underneath it.
///
/// Once [`LayerDevice::destroy_pool`] has destroyed the pool underneath, every call goes
/// to that pool, which answers as a destroyed pool does (`InvalidHandle`, or
/// `InvalidPointer` for a free): the layer's blocks went with the pool.
struct LayerPool<D: Device + 'static>
where
    D::Stream: Eq + Hash,
{
    inner: Arc<D::Pool>,
    layer: SmallBlocks<'static, D>,
    destroyed: AtomicBool,
}

impl<D: Device + 'static> LayerPool<D>
where
    D::Stream: Eq + Hash,
{
    fn destroyed(&self) -> bool {
        self.destroyed.load(Ordering::SeqCst)
    }
}

impl<D: Device + 'static> fmt::Debug for LayerPool<D>
where
    D::Stream: Eq + Hash,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LayerPool").field("layer", &self.layer).field("destroyed", &self.destroyed()).finish()
    }
}

impl<D: Device + 'static> MemPool for LayerPool<D>
where
    D::Stream: Eq + Hash,
{
    type Stream = D::Stream;

    fn malloc_async(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        if self.destroyed() { self.inner.malloc_async(size, stream) } else { self.layer.malloc_async(size, stream) }
    }

    unsafe fn free_async(&self, ptr: DevicePtr, stream: &D::Stream) -> Result<()> {
        if self.destroyed() {
            // SAFETY: the caller owes `MemPool::free_async`'s contract; the pool underneath
            // is destroyed, so it refuses the pointer (the scenarios that free through a
            // destroyed pool need `Capability::CheckedFree`, which the emulator offers).
            unsafe { self.inner.free_async(ptr, stream) }
        } else {
            // SAFETY: the caller owes `MemPool::free_async`'s contract, passed on as it is.
            unsafe { self.layer.free_async(ptr, stream) }
        }
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        if self.destroyed() { self.inner.trim_to(min_bytes_to_keep) } else { self.layer.trim_to(min_bytes_to_keep) }
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        if self.destroyed() { self.inner.get_attr_raw(attr) } else { self.layer.get_attr_raw(attr) }
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        if self.destroyed() { self.inner.set_attr_raw(attr, value) } else { self.layer.set_attr_raw(attr, value) }
    }

    fn size(&self) -> u64 {
        self.layer.size()
    }

    fn stats_snapshot(&self) -> Result<PoolStats> {
        if self.destroyed() { self.inner.stats_snapshot() } else { self.layer.stats_snapshot() }
    }
}

impl<D: Device + 'static> Device for LayerDevice<D>
where
    D::Stream: Eq + Hash,
{
    type Stream = D::Stream;
    type Event = D::Event;
    type Pool = LayerPool<D>;

    fn id(&self) -> u32 {
        self.inner.id()
    }
    fn pool_granularity(&self) -> u64 {
        self.inner.pool_granularity()
    }
    fn mem_info(&self) -> Result<MemInfo> {
        self.inner.mem_info()
    }
    fn create_stream(&self) -> Result<D::Stream> {
        self.inner.create_stream()
    }
    fn destroy_stream(&self, stream: &D::Stream) -> Result<()> {
        self.inner.destroy_stream(stream)
    }
    fn synchronize_stream(&self, stream: &D::Stream) -> Result<()> {
        self.inner.synchronize_stream(stream)
    }
    fn query_stream(&self, stream: &D::Stream) -> Result<StreamStatus> {
        self.inner.query_stream(stream)
    }
    fn synchronize_device(&self) -> Result<()> {
        self.inner.synchronize_device()
    }
    fn create_event(&self) -> Result<D::Event> {
        self.inner.create_event()
    }
    fn destroy_event(&self, event: &D::Event) -> Result<()> {
        self.inner.destroy_event(event)
    }
    fn record_event(&self, event: &D::Event, stream: &D::Stream) -> Result<()> {
        self.inner.record_event(event, stream)
    }
    fn stream_wait_event(&self, stream: &D::Stream, event: &D::Event) -> Result<()> {
        self.inner.stream_wait_event(stream, event)
    }
    fn synchronize_event(&self, event: &D::Event) -> Result<()> {
        self.inner.synchronize_event(event)
    }
    fn query_event(&self, event: &D::Event) -> Result<EventStatus> {
        self.inner.query_event(event)
    }
    fn event_elapsed_ms(&self, start: &D::Event, end: &D::Event) -> Result<f32> {
        self.inner.event_elapsed_ms(start, end)
    }

    /// A pool of the device underneath, with a layer over it.
    fn create_pool(&self, props: &PoolProps) -> Result<LayerPool<D>> {
        let inner = Arc::new(self.inner.create_pool(props)?);
        let threshold = self.threshold.min(inner.size());
        match SmallBlocks::new_shared(Arc::clone(&self.inner), Arc::clone(&inner), threshold) {
            Ok(layer) => Ok(LayerPool { inner, layer, destroyed: AtomicBool::new(false) }),
            Err(e) => {
                let _ = self.inner.destroy_pool(&inner);
                Err(e)
            }
        }
    }

    /// Destroys the pool underneath; the layer's blocks go with it.
    fn destroy_pool(&self, pool: &LayerPool<D>) -> Result<()> {
        self.inner.destroy_pool(&pool.inner)?;
        pool.destroyed.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &D::Stream) -> Result<()> {
        self.inner.memcpy_h2d_async(dst, src, stream)
    }
    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &D::Stream) -> Result<()> {
        self.inner.memcpy_d2h_async(dst, src, stream)
    }
    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &D::Stream) -> Result<()> {
        self.inner.memcpy_d2d_async(dst, src, len, stream)
    }
    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &D::Stream) -> Result<()> {
        self.inner.memset_async(dst, value, len, stream)
    }
    fn launch_host_func(&self, stream: &D::Stream, f: HostFn) -> Result<()> {
        self.inner.launch_host_func(stream, f)
    }
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        self.inner.can_access_peer(peer)
    }

    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        self.inner.enable_peer_access(peer)
    }

    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        self.inner.disable_peer_access(peer)
    }
}

/// The layer's threshold in a run of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Threshold {
    /// 0: a pass-through.
    Zero,
    /// The device's pool granularity: requests of at most one granule are carved.
    Granule,
}

/// The emulator harness of `conformance.rs` (64 KiB granules, a 1 GiB device), with a
/// small-block layer over every pool.
#[derive(Debug, Clone, Copy)]
struct LayerHarness {
    emu: EmuHarness,
    threshold: Threshold,
}

impl LayerHarness {
    fn new(mode: ExecutionMode, profile: Profile, threshold: Threshold) -> Self {
        LayerHarness { emu: EmuHarness { mode, profile }, threshold }
    }
}

impl Harness for LayerHarness {
    type Device = LayerDevice<Emulator>;

    fn device(&self) -> Result<LayerDevice<Emulator>> {
        let emu = self.emu.device()?;
        let threshold = match self.threshold {
            Threshold::Zero => 0,
            Threshold::Granule => emu.pool_granularity(),
        };
        Ok(LayerDevice { inner: Arc::new(emu), threshold })
    }

    fn supports(&self, cap: Capability) -> bool {
        // The emulator's capabilities; the layer checks the pointers it is given itself
        // (`CheckedFree`), and two devices are two emulators (`ForeignHandles`).
        self.emu.supports(cap)
    }

    fn profile(&self) -> Profile {
        self.emu.profile()
    }

    fn let_run(&self, dev: &LayerDevice<Emulator>, stream: &<Emulator as Device>::Stream) -> Result<()> {
        self.emu.let_run(&dev.inner, stream)
    }
}

/// Threshold 0: every scenario, unchanged.
macro_rules! pass_through_tests {
    ($($name:ident),* $(,)?) => {
        /// The scenarios run at threshold 0, in order.
        const PASS_THROUGH: &[&str] = &[$(stringify!($name)),*];

        mod pass_through {
            use super::*;
            $(
                #[rstest]
                fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode, #[values(Documented, CannOpen)] profile: Profile) {
                    run_scenario(stringify!($name), &LayerHarness::new(mode, profile, Threshold::Zero));
                }
            )*
        }
    };
}

mempool_tests::each_scenario!(pass_through_tests);

/// One scenario at threshold one granule: `runs`, or the reason it does not apply (an
/// ignored case with that reason).
macro_rules! granule_case {
    ($name:ident, runs) => {
        #[rstest]
        fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode, #[values(Documented, CannOpen)] profile: Profile) {
            run_scenario(stringify!($name), &LayerHarness::new(mode, profile, Threshold::Granule));
        }
    };
    ($name:ident, $why:literal) => {
        #[rstest]
        #[ignore = $why]
        fn $name(#[values(Threaded, Deferred)] mode: ExecutionMode, #[values(Documented, CannOpen)] profile: Profile) {
            run_scenario(stringify!($name), &LayerHarness::new(mode, profile, Threshold::Granule));
        }
    };
}

macro_rules! verdict {
    (runs) => {
        None
    };
    ($why:literal) => {
        Some($why)
    };
}

/// Threshold one granule: the table of every scenario, `runs` or the reason it does not
/// apply.
macro_rules! granule_tests {
    ($($name:ident: $verdict:tt),* $(,)?) => {
        /// Every scenario at threshold one granule, in order: `None` when it runs, else
        /// why it does not apply.
        const GRANULE: &[(&str, Option<&str>)] = &[$((stringify!($name), verdict!($verdict))),*];

        mod granule {
            use super::*;
            $(granule_case!($name, $verdict);)*
        }
    };
}

granule_tests! {
    s01_fresh_pool_defaults: runs,
    s02_reuse_flags_round_trip: runs,
    s03_read_only_counters_refuse_writes:
        "a 1-byte request is carved from a 2 MiB layer block: RESERVED and USED are the block, not one granule",
    s04_high_marks_reset_only: runs,
    s05_unknown_attribute_id: runs,
    s06_threshold_limits: runs,
    s07_bad_props_rejected: runs,
    s08_max_size_zero_and_rounding:
        "a 1-byte request is carved from a 2 MiB layer block: USED of the whole-device pool is the block, not one granule",
    s09_one_byte_rounds_to_granule:
        "about the pool rounding a 1-byte request to one granule; the layer carves it from a 2 MiB block",
    s10_fresh_allocations_in_address_order:
        "requests of 1 byte and one granule are carved from a layer block, not from the pool's address range in order",
    s11_same_stream_reuse:
        "the 1-granule request is carved from a layer block, not from the low end of the pool's cached block",
    s12_best_fit:
        "the 1-granule spacers and request are carved from a layer block: the layout and best fit are the pool's",
    s13_cross_stream_no_flags_no_sync:
        "the 1-granule request is carved from a layer block: the address and RESERVED are the pool's granules",
    s14_cross_stream_after_sync: runs,
    s15_event_dependency: runs,
    s16_event_chain: runs,
    s17_opportunistic_reuse: runs,
    s18_internal_dependencies: runs,
    s19_pool_exhaustion:
        "the 1-granule requests are carved (from 1-granule blocks: a 2 MiB block does not fit), and the layer's \
         out-of-memory path synchronizes and trims the pool before the error, so its figures differ",
    s20_bad_free_pointers:
        "the freed 1-granule requests stay in the layer's spare block: USED at the end is the block, not 0",
    s21_high_marks:
        "the 1-granule request is carved from a layer block: its address and the HIGH marks count the block",
    s22_release_threshold_zero:
        "a 1-granule request is carved from a layer block: RESERVED after release counts the block, not one granule",
    s23_release_threshold_t:
        "the 1-granule request is carved from a layer block: max(T, USED) counts the block, not one granule",
    s24_release_at_event_and_device_sync:
        "the 1-granule requests are carved from layer blocks: max(T, USED) counts the blocks, not one granule",
    s25_trim_errors: runs,
    s26_trim_smallest_first_split:
        "the 1-granule blocks and spacers are carved from a layer block: the pool's trim order and split are not seen",
    s27_unexecuted_free_not_released:
        "the 1-granule request is carved from a layer block kept as a spare: RESERVED counts the block",
    s28_destroy_with_live_allocations:
        "a 1-granule request is carved from a layer block: USED of the other pool is the block, not one granule",
    s29_bad_handles: runs,
    s30_concurrent_alloc_free:
        "requests of at most one granule are carved at 512 bytes, closer than the granule-rounded ranges its registry \
         checks; the layer keeps spare blocks, so USED is not 0 at the end",
}

#[test]
fn every_scenario_is_run_or_listed() {
    check_scenario_names::<LayerHarness>(PASS_THROUGH);
    let names: Vec<&str> = GRANULE.iter().map(|&(name, _)| name).collect();
    check_scenario_names::<LayerHarness>(&names);
    for &(name, why) in GRANULE {
        assert!(why.is_none_or(|w| !w.is_empty()), "{name}: an empty reason");
    }
}
