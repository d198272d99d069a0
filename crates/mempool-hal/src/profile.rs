//! Which behaviour of the stream-ordered pool a runtime has ([contract §12](crate::contract::profiles)).

use std::fmt;
use std::str::FromStr;

/// The behaviour of a runtime's pools: as CANN documents it, as the open CANN runtime
/// ships, or as CUDA documents its twin ([contract §12](crate::contract::profiles)).
///
/// The emulator takes one (`EmulatorBuilder::profile`, `MEMPOOL_EMU_PROFILE`), a
/// conformance harness reports the one its backend has, and the Ascend backend's probe
/// tells which one an installed runtime has.
///
/// ```
/// use mempool_hal::Profile;
/// assert_eq!("cann-open".parse::<Profile>(), Ok(Profile::CannOpen));
/// assert_eq!(Profile::default().to_string(), "documented");
/// assert!(Profile::Documented.reuses() && !Profile::CannOpen.releases_at_sync());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// Contract §4-7: reuse rules a-f, release at synchronization, destroy waits for the
    /// work queued before it.
    #[default]
    Documented,
    /// The open CANN runtime: every allocation takes fresh address space (reuse rules a-e
    /// off; cached blocks come back only through `trim_to`), no release at
    /// synchronization, and destroy does not wait for queued work.
    CannOpen,
    /// CUDA's documented `cuMemPool*` behaviour: as [`Profile::Documented`], except that
    /// the reuse flags (attributes 1-3) are on when a pool is created, `trim_to` below
    /// USED releases what it can instead of refusing, and writing 0 to a HIGH attribute
    /// resets it to its CURRENT value instead of 0.
    Cuda,
}

impl Profile {
    /// Every profile, the default first.
    pub const ALL: [Profile; 3] = [Profile::Documented, Profile::CannOpen, Profile::Cuda];

    /// The two behaviours of Ascend runtimes (what a program written for CANN may meet).
    pub const ASCEND: [Profile; 2] = [Profile::Documented, Profile::CannOpen];

    /// The profile's name: `documented` or `cann-open` (what [`FromStr`] accepts).
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Documented => "documented",
            Profile::CannOpen => "cann-open",
            Profile::Cuda => "cuda",
        }
    }

    /// Whether cached blocks serve allocations (reuse rules a-e).
    pub const fn reuses(self) -> bool {
        matches!(self, Profile::Documented | Profile::Cuda)
    }

    /// Whether a synchronization releases cached memory above the release threshold.
    pub const fn releases_at_sync(self) -> bool {
        matches!(self, Profile::Documented | Profile::Cuda)
    }

    /// Whether destroying a pool keeps its memory until the work queued before the
    /// destroy has run.
    pub const fn destroy_waits(self) -> bool {
        matches!(self, Profile::Documented | Profile::Cuda)
    }

    /// Whether the reuse flags (attributes 1-3) are on when a pool is created (CUDA's
    /// default; Ascend's are off).
    pub const fn reuse_flags_on_at_creation(self) -> bool {
        matches!(self, Profile::Cuda)
    }

    /// Whether `trim_to` below USED releases what it can (CUDA) instead of refusing
    /// (Ascend, 507000).
    pub const fn trim_below_used_releases(self) -> bool {
        matches!(self, Profile::Cuda)
    }

    /// Whether an event never recorded queries as complete (CUDA) instead of not ready
    /// (Ascend).
    pub const fn unrecorded_event_is_complete(self) -> bool {
        matches!(self, Profile::Cuda)
    }

    /// Whether writing 0 to a HIGH attribute resets it to its CURRENT value (CUDA)
    /// instead of 0 (Ascend).
    pub const fn high_resets_to_current(self) -> bool {
        matches!(self, Profile::Cuda)
    }

    /// Whether a fresh mapping of a physical chunk is readable and writable at once
    /// (Ascend: the owning device gets read-write at `aclrtMapMem`) instead of having no
    /// access until it is set (CUDA: `cuMemSetAccess` first; [contract §14](crate::contract::vmm)).
    pub const fn maps_with_access(self) -> bool {
        matches!(self, Profile::Documented | Profile::CannOpen)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;

    /// `documented`, `cann-open` or `cuda`, in any case.
    fn from_str(s: &str) -> Result<Profile, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "documented" => Ok(Profile::Documented),
            "cann-open" => Ok(Profile::CannOpen),
            "cuda" => Ok(Profile::Cuda),
            _ => Err(format!("{s:?} is not `documented`, `cann-open` or `cuda`")),
        }
    }
}
