//! The emulated platform's configuration: [`Config`], its limits (`MAX_*`) and the
//! ranges `Config::check` enforces for `EmulatorBuilder::build` and the environment.

/// Which behaviour the emulated pools have (contract §12): `documented` (the default) or
/// `cann-open`. Defined in `mempool-hal`, so conformance harnesses and the Ascend probe
/// name the same profiles.
pub use mempool_hal::Profile;

/// When queued work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExecutionMode {
    /// Each stream's worker runs its queue as soon as it can (real concurrency).
    #[default]
    Threaded,
    /// Nothing runs until the host synchronizes, steps or runs a stream.
    Deferred,
}

/// The emulated platform's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Number of devices (default 1).
    pub devices: u32,
    /// Memory of each device in bytes (default 16 GiB): the most the device's pools may
    /// reserve all together (contract §2).
    pub device_memory: u64,
    /// Pool granularity in bytes: a power of two, at least the host page size
    /// (default 2 MiB, as on Ascend).
    pub granularity: u64,
    /// When queued work runs (default threaded).
    pub mode: ExecutionMode,
    /// Whether the stream-order checker refuses unordered accesses (default on).
    pub checker: bool,
    /// Whether the checker also refuses data races (default off): two accesses to
    /// overlapping device memory on different streams, at least one a write, neither
    /// ordered after the other. Needs `checker`.
    pub races: bool,
    /// The longest any wait of the host inside the emulator may take before it fails with
    /// an error instead of hanging (default 60 s). A stream's own wait (on an event, or
    /// one a pool inserts) does not fail: it lasts until the awaited work has run, and the
    /// host's synchronizations of that stream time out meanwhile.
    pub wait_timeout: std::time::Duration,
    /// Whether the host functions of all streams of one device run one at a time on one
    /// thread of that device (as on CANN, where a context's host functions share one
    /// callback thread), instead of each on its stream's worker (default off). With it on,
    /// a host function that blocks holds back the host functions of the device's other
    /// streams; copies, memsets and kernels still run per stream.
    pub host_functions_on_one_thread: bool,
    /// Which behaviour the pools have (contract §12, default [`Profile::Documented`]):
    /// with [`Profile::CannOpen`], reuse rules a-e are off (every allocation takes fresh
    /// address space; cached blocks come back only through `trim_to`), nothing is
    /// released at synchronization, and destroying a pool gives its memory back at once,
    /// so work queued before the destroy that touches it fails when it runs (reported by
    /// the next synchronization of its stream).
    pub profile: Profile,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            devices: 1,
            device_memory: 16 << 30,
            granularity: 2 << 20,
            mode: ExecutionMode::Threaded,
            checker: true,
            races: false,
            wait_timeout: std::time::Duration::from_secs(60),
            host_functions_on_one_thread: false,
            profile: Profile::Documented,
        }
    }
}

/// The most devices an emulated platform has (each costs a little host memory up front).
pub const MAX_DEVICES: u32 = 1024;

/// The most memory an emulated device has: 64 TiB, so that a pool as large as the device
/// still fits in a 47-bit host address space.
pub const MAX_DEVICE_MEMORY: u64 = 1 << 46;

/// The largest pool granularity: 1 GiB (Ascend's is 2 MiB).
pub const MAX_GRANULARITY: u64 = 1 << 30;

/// A setting of [`Config`] that [`Config::check`] can find out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Setting {
    Devices,
    DeviceMemory,
    Granularity,
}

impl Config {
    /// The ranges `build` enforces: on failure, the settings involved and why.
    pub(crate) fn check(&self) -> std::result::Result<(), (&'static [Setting], String)> {
        let page = rustix::param::page_size() as u64;
        let c = self;
        if c.devices == 0 || c.devices > MAX_DEVICES {
            return Err((&[Setting::Devices], format!("{} devices: 1 to {MAX_DEVICES} are possible", c.devices)));
        }
        if !c.granularity.is_power_of_two() || c.granularity < page || c.granularity > MAX_GRANULARITY {
            return Err((
                &[Setting::Granularity],
                format!("granularity {} is not a power of two from the page size {page} to 1 GiB", c.granularity),
            ));
        }
        if c.device_memory < c.granularity {
            return Err((
                &[Setting::DeviceMemory, Setting::Granularity],
                format!("device memory {} is below one granule ({})", c.device_memory, c.granularity),
            ));
        }
        if c.device_memory > MAX_DEVICE_MEMORY {
            return Err((
                &[Setting::DeviceMemory],
                format!("device memory {} is above the limit of {MAX_DEVICE_MEMORY} bytes (64 TiB)", c.device_memory),
            ));
        }
        Ok(())
    }
}
