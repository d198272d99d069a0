//! What a backend provides to run the suite: fresh devices, its capabilities, and a way
//! to let a stream run without the host synchronizing.

use mempool_hal::{Device, EventStatus, Profile, Result};
use std::fmt;
use std::time::{Duration, Instant};

/// Something a scenario needs that not every backend can offer. A scenario whose needs
/// are not all supported is reported as *not run* (ignored), never as passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Host functions that block their stream until the test releases them, while other
    /// streams keep running (needed to pin "free enqueued but not executed").
    BlockingHostFunctions,
    /// [`Harness::let_run`] can make a stream execute its queue without the host
    /// observing it (so opportunistic reuse can be told from known-complete reuse).
    ObserveExecutionWithoutSync,
    /// Two devices from [`Harness::device`] are independent, so a handle of one is a
    /// foreign (garbage) handle to the other.
    ForeignHandles,
    /// Many host threads may call the backend at once.
    Threads,
    /// The backend answers bad free pointers (interior, already freed, unknown, or of a
    /// destroyed pool) with an `InvalidPointer` error instead of undefined behaviour.
    /// The emulator checks every pointer; the real runtime cannot, so the scenarios that
    /// free bad pointers on purpose need this.
    CheckedFree,
    /// [`Harness::peer_pair`] gives two devices of one platform, which may reach each
    /// other's memory (peer access).
    PeerDevices,
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A backend under test.
pub trait Harness: Send + Sync + 'static {
    /// The backend's device type.
    type Device: Device;

    /// A fresh, independent device for one scenario (scenarios may run in parallel).
    /// Its pool granularity and memory size are whatever the backend chooses; scenarios
    /// read them from the device. Small granules keep the suite fast.
    ///
    /// # Errors
    ///
    /// When the backend cannot be brought up.
    fn device(&self) -> Result<Self::Device>;

    /// Whether the backend supports `cap`.
    fn supports(&self, cap: Capability) -> bool;

    /// The behaviour of the backend's pools (contract §12): scenarios whose expectation
    /// differs by profile (reuse, release at synchronization) check this one's. The
    /// default is [`Profile::Documented`]; a backend over a runtime that behaves as the open
    /// CANN code ships reports [`Profile::CannOpen`], and the scenarios then expect no
    /// reuse, RESERVED growing with every allocation, and memory given back by `trim_to`
    /// only.
    fn profile(&self) -> Profile {
        Profile::Documented
    }

    /// Two different devices of one platform, for the peer-access scenarios (with
    /// [`Capability::PeerDevices`]). The default has none.
    ///
    /// # Errors
    ///
    /// When the backend has no second device, or cannot be brought up.
    fn peer_pair(&self) -> Result<(Self::Device, Self::Device)> {
        Err(mempool_hal::Error::new(
            mempool_hal::ErrorKind::NotSupported,
            mempool_hal::code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "peer_pair",
            "this harness has no two devices of one platform",
        ))
    }

    /// Makes `stream` execute everything enqueued on it so far **without** the host
    /// synchronizing (no release, no "known complete" observation), and returns once it
    /// has. The default records an event and polls [`Device::query_event`] for up to ten
    /// seconds; a backend that only runs work when told (the emulator's deferred mode)
    /// overrides it.
    ///
    /// # Errors
    ///
    /// Backend errors, or `Internal` after the time-out.
    fn let_run(&self, dev: &Self::Device, stream: &<Self::Device as Device>::Stream) -> Result<()> {
        let ev = dev.create_event()?;
        dev.record_event(&ev, stream)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if dev.query_event(&ev)? == EventStatus::Complete {
                break;
            }
            if Instant::now() > deadline {
                let _ = dev.destroy_event(&ev);
                return Err(mempool_hal::Error::new(
                    mempool_hal::ErrorKind::Internal,
                    mempool_hal::code::ACL_ERROR_RT_INTERNAL_ERROR,
                    "let_run",
                    "stream did not run its queue within 10 s",
                ));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        dev.destroy_event(&ev)
    }
}
