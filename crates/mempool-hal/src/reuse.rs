//! [`ReuseFlags`]: the three cross-stream reuse switches of a pool (attributes 1-3) as one
//! named value.

use crate::attr::{
    AttrId, AttrKey, AttrRole, ReuseAllowInternalDependencies, ReuseAllowOpportunistic, ReuseFlag,
    ReuseFollowEventDependencies,
};
use crate::error::Result;
use crate::pool::{MemPool, MemPoolExt};
use std::fmt;
use std::str::FromStr;

/// The three reuse flags of a pool, attributes 1-3, named.
///
/// Same-stream reuse and reuse of blocks whose free the host has observed complete are
/// always on; these flags switch on the three further rules of the reuse order (see the
/// [allocation contract](crate::contract::allocation), rules c, d and e). All three are off
/// on a fresh Ascend pool; CUDA turns them all on (see the
/// [attribute contract](crate::contract::attributes)).
///
/// ```
/// use mempool_hal::ReuseFlags;
/// let f: ReuseFlags = "follow,internal".parse().unwrap();
/// assert!(f.follow_event_dependencies && f.internal_dependencies && !f.opportunistic);
/// assert_eq!(f.to_string(), "follow,internal");
/// assert_eq!(ReuseFlags::from_bits(f.bits()), f);
/// assert_eq!(ReuseFlags::NONE.to_string(), "none");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReuseFlags {
    /// Attribute 1, [`ReuseFollowEventDependencies`]: reuse a block whose free is ordered
    /// before the allocating stream through events (`follow`).
    pub follow_event_dependencies: bool,
    /// Attribute 2, [`ReuseAllowOpportunistic`]: reuse a block whose free has already
    /// executed, ordered or not (`opportunistic`).
    pub opportunistic: bool,
    /// Attribute 3, [`ReuseAllowInternalDependencies`]: reuse any cached block, making the
    /// allocating stream wait for the free (`internal`).
    pub internal_dependencies: bool,
}

impl ReuseFlags {
    /// All three off (a fresh Ascend pool, and the contract's default).
    pub const NONE: ReuseFlags =
        ReuseFlags { follow_event_dependencies: false, opportunistic: false, internal_dependencies: false };
    /// All three on (a fresh CUDA pool: the CUDA backend's, and the emulator's `cuda`
    /// profile's).
    pub const ALL: ReuseFlags =
        ReuseFlags { follow_event_dependencies: true, opportunistic: true, internal_dependencies: true };
    /// The attribute ids of the three flags, in the order of [`ReuseFlags::bits`].
    pub const IDS: [AttrId; 3] = [
        AttrId::REUSE_FOLLOW_EVENT_DEPENDENCIES,
        AttrId::REUSE_ALLOW_OPPORTUNISTIC,
        AttrId::REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    ];
    const NAMES: [&'static str; 3] = ["follow", "opportunistic", "internal"];

    /// Reads the three flags of `pool` through the typed keys.
    ///
    /// # Errors
    ///
    /// As [`MemPool::get_attr_raw`]: a destroyed or foreign pool is
    /// [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_HANDLE`, 400).
    pub fn read<P: MemPool + ?Sized>(pool: &P) -> Result<ReuseFlags> {
        Ok(ReuseFlags {
            follow_event_dependencies: pool.get(ReuseFollowEventDependencies)?,
            opportunistic: pool.get(ReuseAllowOpportunistic)?,
            internal_dependencies: pool.get(ReuseAllowInternalDependencies)?,
        })
    }

    /// Writes the three flags to `pool` through the typed keys.
    ///
    /// # Errors
    ///
    /// As [`MemPool::set_attr_raw`]: a destroyed or foreign pool is
    /// [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_HANDLE`, 400).
    pub fn apply<P: MemPool + ?Sized>(self, pool: &P) -> Result<()> {
        pool.set(ReuseFollowEventDependencies, self.follow_event_dependencies)?;
        pool.set(ReuseAllowOpportunistic, self.opportunistic)?;
        pool.set(ReuseAllowInternalDependencies, self.internal_dependencies)
    }

    /// The value of `flag`.
    pub const fn flag(self, flag: ReuseFlag) -> bool {
        match flag {
            ReuseFlag::FollowEventDependencies => self.follow_event_dependencies,
            ReuseFlag::AllowOpportunistic => self.opportunistic,
            ReuseFlag::AllowInternalDependencies => self.internal_dependencies,
        }
    }

    /// Sets `flag` to `on`.
    pub fn set_flag(&mut self, flag: ReuseFlag, on: bool) {
        let slot = match flag {
            ReuseFlag::FollowEventDependencies => &mut self.follow_event_dependencies,
            ReuseFlag::AllowOpportunistic => &mut self.opportunistic,
            ReuseFlag::AllowInternalDependencies => &mut self.internal_dependencies,
        };
        *slot = on;
    }

    /// The flag that attribute `id` names, or `None` when `id` is not 1, 2 or 3.
    pub fn get(self, id: AttrId) -> Option<bool> {
        match id.key()?.role() {
            AttrRole::ReuseFlag(flag) => Some(self.flag(flag)),
            AttrRole::ReleaseThreshold | AttrRole::Current(_) | AttrRole::High(_) => None,
        }
    }

    /// Sets the flag that attribute `id` names; returns `false` (and changes nothing) when
    /// `id` is not 1, 2 or 3.
    pub fn set(&mut self, id: AttrId, on: bool) -> bool {
        match id.key().map(AttrKey::role) {
            Some(AttrRole::ReuseFlag(flag)) => {
                self.set_flag(flag, on);
                true
            }
            Some(AttrRole::ReleaseThreshold | AttrRole::Current(_) | AttrRole::High(_)) | None => false,
        }
    }

    /// The flags as bits: bit 0 is attribute 1, bit 1 attribute 2, bit 2 attribute 3.
    pub fn bits(self) -> u8 {
        u8::from(self.follow_event_dependencies)
            | u8::from(self.opportunistic) << 1
            | u8::from(self.internal_dependencies) << 2
    }

    /// The flags from [`ReuseFlags::bits`]; bits above the third are ignored.
    pub fn from_bits(bits: u8) -> ReuseFlags {
        ReuseFlags {
            follow_event_dependencies: bits & 1 != 0,
            opportunistic: bits & 2 != 0,
            internal_dependencies: bits & 4 != 0,
        }
    }

    /// Every one of the eight combinations, [`ReuseFlags::NONE`] first.
    pub fn all_combinations() -> impl Iterator<Item = ReuseFlags> {
        (0..8).map(ReuseFlags::from_bits)
    }
}

/// Parses a comma-separated list of `follow`, `opportunistic` and `internal`; `none` or an
/// empty string is no flag.
impl FromStr for ReuseFlags {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<ReuseFlags, String> {
        let mut f = ReuseFlags::NONE;
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty() && *n != "none") {
            let Some(i) = ReuseFlags::NAMES.iter().position(|n| *n == name) else {
                return Err(format!("unknown reuse flag {name:?} (follow, opportunistic, internal, none)"));
            };
            f.set(ReuseFlags::IDS[i], true);
        }
        Ok(f)
    }
}

/// Writes the names of the flags that are on, comma-separated, or `none`.
impl fmt::Display for ReuseFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on: Vec<&str> = (0..3).filter(|i| self.bits() & (1 << i) != 0).map(|i| ReuseFlags::NAMES[i]).collect();
        f.write_str(if on.is_empty() { "none" } else { "" })?;
        f.write_str(&on.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_bits_and_names_agree() {
        for f in ReuseFlags::all_combinations() {
            assert_eq!(ReuseFlags::from_bits(f.bits()), f);
            assert_eq!(f.to_string().parse::<ReuseFlags>(), Ok(f));
            for (i, id) in ReuseFlags::IDS.iter().enumerate() {
                assert_eq!(f.get(*id), Some(f.bits() & (1 << i) != 0));
            }
        }
        let mut f = ReuseFlags::NONE;
        assert!(f.set(AttrId(2), true));
        assert_eq!(f, ReuseFlags { opportunistic: true, ..ReuseFlags::NONE });
        assert!(!f.set(AttrId(4), true));
        assert_eq!(f.get(AttrId(4)), None);
        assert!("follow,bogus".parse::<ReuseFlags>().is_err());
        assert_eq!(ReuseFlags::all_combinations().count(), 8);
    }
}
