//! A CPU emulator of stream-ordered device memory pools, with the behaviour of Ascend's
//! `aclrtMemPool*` (SPEC.md sections 1-7).
//!
//! Frameworks test on any machine with it: streams really run concurrently (each on a
//! worker thread of its own), events order them, host functions, copies and memsets touch
//! real host memory, and the pool follows every reuse rule, releases at synchronization,
//! trims, counts statistics and reports the same error codes as the real runtime.
//!
//! # Design
//!
//! - **Positions and vector clocks.** Each stream hands out positions to its work; frees
//!   and event records are *markers* that only take a position, so the pool's hot path
//!   enqueues nothing. Each stream keeps a vector clock of how far it is ordered after
//!   every other stream (through waits, transitively); each event carries the clock of
//!   the point it recorded; the host keeps what it has observed complete. Reuse decisions
//!   compare these counters under the pool lock.
//! - **Real memory.** Each pool reserves its address range once (`PROT_NONE`,
//!   `MAP_NORESERVE`), makes it accessible in chunks of 64 MiB or more while any of a
//!   chunk is reserved, and gives released pages back at once (`MADV_DONTNEED`; a chunk
//!   left with nothing reserved becomes `PROT_NONE` again), so RESERVED is memory the
//!   process may really hold and a release really returns it. Device addresses are the
//!   host addresses of that range.
//! - **Allocator.** The ranges of a pool are nodes of one slab linked in address order;
//!   cached blocks sit in per-stream segregated size classes (one per size up to 64
//!   granules, then eight per power of two, each a heap by size then address) and free
//!   address space in one more, which keeps the exact best fit of SPEC.md section 4
//!   (smallest block, then lowest address) at O(1) for the same-stream cycle and
//!   O(log n) otherwise.
//! - **Checked access.** Copies and memsets are checked when enqueued (the range must lie
//!   in one live allocation) and again when they run (it must still be reserved), under
//!   the pool lock, so a bad program gets an error, never a fault.
//! - **Stream-order checker** (on by default, [`EmulatorBuilder::checker`] turns it off).
//!   Every copy, memset and kernel ([`Emulator::launch_kernel`], a host function that
//!   declares the device memory it reads and writes) is checked with the vector clocks
//!   when it is enqueued: use after free, use on a stream not ordered after the
//!   allocation, and access to a destroyed pool's memory are refused at the call with
//!   `ErrorKind::StreamOrderViolation` (code 107000), and so is a free that races with
//!   an access still pending on another stream. The message names the streams and the
//!   operations; nothing is executed. Vendor tools offer nothing like it for pool memory.
//!   A destroyed pool's address range stays reserved, inaccessible and without memory, for
//!   the next 256 dropped pools (up to 16 TiB of address space), so the host maps nothing
//!   there meanwhile and a pointer that outlived its pool is still known as device memory.
//! - **Bounded waits and faults.** Every wait inside the emulator gives up after
//!   [`Config::wait_timeout`] with an error instead of hanging; a panicking host function
//!   is reported at the next synchronization of its stream, which keeps working; and
//!   [`Emulator::inject_commit_failures`] makes host-memory commits fail, which surfaces
//!   as `OutOfMemory` with the pool intact.
//! - **Deferred mode.** With [`ExecutionMode::Deferred`] nothing runs until the host
//!   synchronizes, calls [`Emulator::step`] or [`Emulator::run_pending`]; tests use it to
//!   pin states such as "free enqueued but not executed".
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

mod clock;
mod config;
mod device;
mod env;
mod event;
mod pool;
mod raw;
mod stream;

use device::Platform;
use mempool_hal::{Error, ErrorKind, Result, code};
use std::fmt;
use std::sync::Arc;

pub use config::{Config, ExecutionMode, MAX_DEVICE_MEMORY, MAX_DEVICES, MAX_GRANULARITY};
pub use env::{ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, parse_bytes};
pub use event::EmuEvent;
pub use pool::access::CopySide;
pub use pool::{EmuPool, ReuseCounts, ReuseRule};
pub use raw::{Access, KernelMem};
pub use stream::EmuStream;

/// Builds an [`Emulator`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EmulatorBuilder {
    config: Config,
}

impl EmulatorBuilder {
    /// Number of devices.
    pub fn devices(mut self, n: u32) -> Self {
        self.config.devices = n;
        self
    }
    /// Memory of each device, in bytes.
    pub fn device_memory(mut self, bytes: u64) -> Self {
        self.config.device_memory = bytes;
        self
    }
    /// Pool granularity, in bytes.
    pub fn granularity(mut self, bytes: u64) -> Self {
        self.config.granularity = bytes;
        self
    }
    /// Execution mode.
    pub fn mode(mut self, mode: ExecutionMode) -> Self {
        self.config.mode = mode;
        self
    }
    /// Turns the stream-order checker on (the default) or off.
    pub fn checker(mut self, on: bool) -> Self {
        self.config.checker = on;
        self
    }
    /// The longest any wait inside the emulator may take (default 60 s).
    pub fn wait_timeout(mut self, t: std::time::Duration) -> Self {
        self.config.wait_timeout = t;
        self
    }
    /// Shorthand for `mode(ExecutionMode::Deferred)`.
    pub fn deferred(self) -> Self {
        self.mode(ExecutionMode::Deferred)
    }

    /// Applies the `MEMPOOL_EMU_*` variables that are set (see the `ENV_*` constants);
    /// unset or empty ones keep the builder's value.
    ///
    /// # Errors
    ///
    /// `InvalidParam` (100000) naming the variable and its value when a value does not
    /// parse, or is out of the range [`EmulatorBuilder::build`] enforces.
    pub fn with_env(self) -> Result<Self> {
        Ok(EmulatorBuilder { config: env::read_vars(self.config, |name| std::env::var_os(name))? })
    }

    /// Device 0 of a new emulated platform.
    ///
    /// # Errors
    ///
    /// `InvalidParam` (100000) for no devices or more than [`MAX_DEVICES`], a
    /// granularity that is not a power of two from the host page size to
    /// [`MAX_GRANULARITY`], or device memory below one granule or above
    /// [`MAX_DEVICE_MEMORY`].
    pub fn build(self) -> Result<Emulator> {
        let c = self.config;
        if let Err((_, m)) = c.check() {
            return Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, "Emulator::build", m));
        }
        Ok(Emulator { platform: Arc::new(Platform::new(c)), device: 0 })
    }
}

/// One device of an emulated platform; implements [`mempool_hal::Device`].
///
/// Cheap to clone; clones are the same device. Handles (streams, events, pools) of one
/// platform are foreign to another: using them there is `InvalidHandle`.
#[derive(Clone)]
pub struct Emulator {
    platform: Arc<Platform>,
    device: u32,
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator").field("platform", &self.platform.id).field("device", &self.device).finish()
    }
}

impl Default for Emulator {
    fn default() -> Self {
        Emulator::new()
    }
}

impl Emulator {
    /// Device 0 of a platform with the default [`Config`]: one 16 GiB device, 2 MiB
    /// granularity, threaded.
    pub fn new() -> Emulator {
        Emulator { platform: Arc::new(Platform::new(Config::default())), device: 0 }
    }

    /// A builder for another configuration.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder::default()
    }

    /// The platform's configuration.
    pub fn config(&self) -> Config {
        self.platform.config
    }

    /// Device `id` of the same platform.
    ///
    /// # Errors
    ///
    /// `InvalidDevice` (107001) for an id out of range.
    pub fn device(&self, id: u32) -> Result<Emulator> {
        if id >= self.platform.config.devices {
            return Err(Error::new(
                ErrorKind::InvalidDevice,
                code::ACL_ERROR_RT_INVALID_DEVICEID,
                "Emulator::device",
                format!("device {id} does not exist ({} device(s))", self.platform.config.devices),
            ));
        }
        Ok(Emulator { platform: Arc::clone(&self.platform), device: id })
    }
}
