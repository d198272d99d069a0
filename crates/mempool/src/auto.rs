//! Run on the real runtime when there is one, on the emulator otherwise.

use mempool_ascend::{Ascend, LoadOptions};
use mempool_emu::Emulator;
use mempool_hal::Error;
use std::fmt;

/// The backend [`auto()`] chose, and why.
///
/// Code generic over [`Device`](mempool_hal::Device) runs on either arm; the
/// [`with_auto_device!`](crate::with_auto_device) macro writes the `match`:
///
/// ```
/// use mempool::prelude::*;
/// fn total<D: Device>(dev: &D) -> mempool::Result<u64> {
///     Ok(dev.mem_info()?.total)
/// }
/// let chosen = mempool::auto(0)?;
/// println!("{chosen}"); // which backend, and why
/// let bytes = mempool::with_auto_device!(chosen, |dev| total(&dev))?;
/// assert!(bytes > 0);
/// # Ok::<(), mempool::Error>(())
/// ```
#[derive(Debug)]
pub enum Auto {
    /// A real runtime was found.
    Ascend(Ascend),
    /// No runtime was found (the error lists every path tried): the emulator, with its
    /// default configuration.
    Emulator(Emulator, Error),
}

impl fmt::Display for Auto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auto::Ascend(d) => write!(f, "Ascend runtime at {}", d.runtime().path().display()),
            Auto::Emulator(_, why) => {
                write!(f, "CPU emulator (no Ascend runtime: {})", why.message().lines().next().unwrap_or(""))
            }
        }
    }
}

impl Auto {
    /// Whether the real runtime was chosen.
    pub fn is_ascend(&self) -> bool {
        matches!(self, Auto::Ascend(_))
    }
}

/// Device `device` of the Ascend runtime if the standard search ([contract §9](mempool_hal::contract::loading))
/// finds one, else the emulator. Only a missing runtime falls back: a runtime that is
/// found but fails (a bad device id, for one) is an error.
///
/// # Errors
///
/// Errors of [`Ascend::open`] other than `Unavailable`.
pub fn auto(device: u32) -> mempool_hal::Result<Auto> {
    auto_with(&LoadOptions::default(), device)
}

/// [`auto()`] with explicit search options.
///
/// # Errors
///
/// As [`auto()`].
pub fn auto_with(opts: &LoadOptions, device: u32) -> mempool_hal::Result<Auto> {
    match Ascend::open_with(opts, device) {
        Ok(d) => Ok(Auto::Ascend(d)),
        Err(e) if e.kind() == mempool_hal::ErrorKind::Unavailable => Ok(Auto::Emulator(Emulator::new(), e)),
        Err(e) => Err(e),
    }
}

/// Runs an expression generic over [`Device`](mempool_hal::Device) on whichever backend
/// an [`Auto`] holds: `with_auto_device!(chosen, |dev| run(&dev))`.
#[macro_export]
macro_rules! with_auto_device {
    ($auto:expr, |$dev:ident| $body:expr) => {
        match $auto {
            $crate::Auto::Ascend($dev) => $body,
            $crate::Auto::Emulator($dev, _) => $body,
        }
    };
}
