//! Pool attributes (the [attribute contract](crate::contract::attributes)): the numbered
//! raw path and the typed keys.
//!
//! Every attribute is declared once, in the table at the bottom of this module. Each
//! row gives the key's name, id, value type and role ([`AttrRole`]: a reuse flag, the
//! release threshold, a current counter or a high-water mark), and generates from them a
//! zero-sized key type, its id constant, its [`AttrKey`] variant, its row in
//! [`ATTRIBUTES`] (whose docs carry the table of every key, generated from the same rows)
//! and the marker traits that decide what compiles. Code that acts on attributes matches
//! on the role or the key, never on an id with a catch-all arm, so a new row that some
//! consumer does not handle fails to compile there (the checklist is in the
//! [attribute contract](crate::contract::attributes)).
//!
//! Writable keys can be `set`, high-water marks can only be `reset`, and the current
//! counters can only be read:
//!
//! ```
//! use mempool_hal::{attr, MemPool, MemPoolExt, Result};
//! fn configure(pool: &impl MemPool) -> Result<()> {
//!     pool.set(attr::ReuseFollowEventDependencies, true)?;
//!     pool.set(attr::ReleaseThreshold, 64 << 20)?;
//!     pool.reset(attr::UsedMemHigh)?;
//!     let _used: u64 = pool.get(attr::UsedMemCurrent)?;
//!     Ok(())
//! }
//! ```
//!
//! Writing a read-only counter does not compile:
//!
//! ```compile_fail,E0277
//! use mempool_hal::{attr, MemPool, MemPoolExt, Result};
//! fn configure(pool: &impl MemPool) -> Result<()> {
//!     pool.set(attr::ReservedMemCurrent, 5)
//! }
//! ```
//!
//! Nor does writing a value into a high-water mark (only `reset` is allowed):
//!
//! ```compile_fail,E0277
//! use mempool_hal::{attr, MemPool, MemPoolExt, Result};
//! fn configure(pool: &impl MemPool) -> Result<()> {
//!     pool.set(attr::UsedMemHigh, 5)
//! }
//! ```
//!
//! Nor resetting a counter that is not a high-water mark:
//!
//! ```compile_fail,E0277
//! use mempool_hal::{attr, MemPool, MemPoolExt, Result};
//! fn configure(pool: &impl MemPool) -> Result<()> {
//!     pool.reset(attr::UsedMemCurrent)
//! }
//! ```
//!
//! The raw, numbered path ([`MemPool::set_attr_raw`](crate::MemPool::set_attr_raw))
//! exists for FFI and checks the same rules at run time; [`AttrId::check_write`] is the
//! shared implementation of those checks.
//!
//! The numbering is the same on both runtimes: CANN's `ACL_RT_MEM_POOL_ATTR_*` and CUDA's
//! `CU_MEMPOOL_ATTR_*` (`cudaMemPoolAttr*`) give each attribute the same id (the CUDA
//! backend maps each [`AttrKey`] through its `CU_MEMPOOL_ATTR_*` constants and checks at
//! compile time that the numbers agree). They differ in
//! two rules, which the [profiles](crate::contract::profiles) list: a fresh CUDA pool has
//! the three reuse flags on, and a reset high-water mark starts again from its current
//! value on CUDA, from 0 on Ascend.

use crate::error::{Error, ErrorKind, Result, code};
use std::fmt;

/// A numbered pool attribute (`aclrtMemPoolAttr`, the same numbering as CUDA's
/// `CUmemPool_attribute` and `cudaMemPoolAttr`). Any number can be formed; backends refuse
/// unknown ones with [`UnknownAttribute`](crate::ErrorKind::UnknownAttribute) (ACL 107000;
/// CUDA `CUDA_ERROR_INVALID_VALUE`, 1).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttrId(pub u32);

/// The C width of an attribute's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrWidth {
    /// `uint32_t`.
    U32,
    /// `uint64_t`.
    U64,
}

/// Who may write an attribute (derived from its [`AttrRole`]). Not the virtual-memory
/// [`Access`](crate::Access) of a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrAccess {
    /// Read and write.
    ReadWrite,
    /// Read only; a write is [`ReadOnly`](crate::ErrorKind::ReadOnly) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1; see the
    /// [attribute contract](crate::contract::attributes)).
    ReadOnly,
    /// Read, and write only 0, which resets the mark: to 0 under Ascend's rules, to its
    /// current value under CUDA's. A non-zero write is
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 507000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1).
    ResetOnly,
}

/// A raw attribute value of the documented C width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RawAttrValue {
    /// A `uint32_t` value (reuse flags).
    U32(u32),
    /// A `uint64_t` value (threshold and statistics).
    U64(u64),
}

impl RawAttrValue {
    /// The width of this value.
    pub fn width(self) -> AttrWidth {
        match self {
            RawAttrValue::U32(_) => AttrWidth::U32,
            RawAttrValue::U64(_) => AttrWidth::U64,
        }
    }

    /// The value widened to `u64`.
    pub fn as_u64(self) -> u64 {
        match self {
            RawAttrValue::U32(v) => u64::from(v),
            RawAttrValue::U64(v) => v,
        }
    }
}

/// One of the three cross-stream reuse switches (attributes 1-3), each a rule of the
/// [reuse order](crate::contract::allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReuseFlag {
    /// Attribute 1: follow event dependencies (rule c).
    FollowEventDependencies,
    /// Attribute 2: allow opportunistic reuse (rule d).
    AllowOpportunistic,
    /// Attribute 3: allow internal dependencies (rule e).
    AllowInternalDependencies,
}

impl ReuseFlag {
    /// The attribute that switches it.
    pub const fn id(self) -> AttrId {
        match self {
            ReuseFlag::FollowEventDependencies => AttrId::REUSE_FOLLOW_EVENT_DEPENDENCIES,
            ReuseFlag::AllowOpportunistic => AttrId::REUSE_ALLOW_OPPORTUNISTIC,
            ReuseFlag::AllowInternalDependencies => AttrId::REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        }
    }
}

/// Which of the pool's two byte counts a statistic follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// RESERVED: bytes the pool holds (live allocations plus cached blocks).
    Reserved,
    /// USED: bytes of live allocations.
    Used,
}

impl Counter {
    /// The current value in `stats`.
    pub const fn current(self, stats: &crate::PoolStats) -> u64 {
        match self {
            Counter::Reserved => stats.reserved_current,
            Counter::Used => stats.used_current,
        }
    }

    /// The high-water mark in `stats`.
    pub const fn high(self, stats: &crate::PoolStats) -> u64 {
        match self {
            Counter::Reserved => stats.reserved_high,
            Counter::Used => stats.used_high,
        }
    }

    /// Resets the high-water mark in `stats`: to the current value when `to_current`
    /// (CUDA's rule), to 0 otherwise (Ascend's).
    pub fn reset_high(self, stats: &mut crate::PoolStats, to_current: bool) {
        let current = self.current(stats);
        let mark = match self {
            Counter::Reserved => &mut stats.reserved_high,
            Counter::Used => &mut stats.used_high,
        };
        *mark = if to_current { current } else { 0 };
    }

    /// The id of its current counter (5 or 7).
    pub const fn current_id(self) -> AttrId {
        match self {
            Counter::Reserved => AttrId::RESERVED_MEM_CURRENT,
            Counter::Used => AttrId::USED_MEM_CURRENT,
        }
    }

    /// The id of its high-water mark (6 or 8).
    pub const fn high_id(self) -> AttrId {
        match self {
            Counter::Reserved => AttrId::RESERVED_MEM_HIGH,
            Counter::Used => AttrId::USED_MEM_HIGH,
        }
    }
}

/// What an attribute is, for the code that reads, writes and documents it. Every row of the
/// table declares one; a new role (or a new counter or flag) makes each `match` that does
/// not handle it fail to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrRole {
    /// A reuse flag (`bool`, read/write).
    ReuseFlag(ReuseFlag),
    /// The release threshold (`u64` bytes, read/write, at most the pool's size).
    ReleaseThreshold,
    /// A current counter (`u64` bytes, read-only).
    Current(Counter),
    /// A high-water mark (`u64` bytes, read, reset by writing 0).
    High(Counter),
}

impl AttrRole {
    /// Who may write an attribute of this role.
    pub const fn access(self) -> AttrAccess {
        match self {
            AttrRole::ReuseFlag(_) | AttrRole::ReleaseThreshold => AttrAccess::ReadWrite,
            AttrRole::Current(_) => AttrAccess::ReadOnly,
            AttrRole::High(_) => AttrAccess::ResetOnly,
        }
    }
}

/// One row of the attribute table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrInfo {
    /// The id.
    pub id: AttrId,
    /// The name without its prefix (`ACL_RT_MEM_POOL_ATTR_`, `CU_MEMPOOL_ATTR_`), e.g.
    /// `"RELEASE_THRESHOLD"`.
    pub name: &'static str,
    /// The key, as an enum.
    pub key: AttrKey,
    /// What it is.
    pub role: AttrRole,
    /// The C width.
    pub width: AttrWidth,
    /// Who may write it (from its role).
    pub access: AttrAccess,
    /// The value a fresh pool reads.
    pub default: u64,
}

/// A write that passed [`AttrId::check_write`], normalized for the backend to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrWrite {
    /// Set a reuse flag (any non-zero value stores `true`).
    Flag(ReuseFlag, bool),
    /// Set the release threshold, in bytes.
    ReleaseThreshold(u64),
    /// Reset the high-water mark of a counter (6 or 8): to 0 under Ascend's rules, to the
    /// current value under CUDA's.
    ResetHigh(Counter),
}

impl AttrId {
    /// This attribute's table row, or `None` for an unknown id.
    pub fn info(self) -> Option<&'static AttrInfo> {
        ATTRIBUTES.iter().find(|i| i.id == self)
    }

    /// This attribute's key, or `None` for an unknown id.
    pub fn key(self) -> Option<AttrKey> {
        self.info().map(|i| i.key)
    }

    /// Checks a raw write against the [attribute contract](crate::contract::attributes)
    /// for a pool of `pool_size` bytes.
    ///
    /// # Errors
    ///
    /// The errors it makes carry ACL numbers, whatever the backend: the emulator reports
    /// them as they are, and the CUDA backend, which calls this before the driver, stamps
    /// its own code at its boundary (`mempool_cuda::result::code_of`).
    ///
    /// | problem | kind | ACL code | CUDA backend (`CUresult`) |
    /// |---|---|---|---|
    /// | unknown id | [`UnknownAttribute`](crate::ErrorKind::UnknownAttribute) | 107000 | 1 (`CUDA_ERROR_INVALID_VALUE`) |
    /// | value of the wrong width | [`InvalidParam`](crate::ErrorKind::InvalidParam) | 107000 | 1 |
    /// | read-only attribute (5, 7) | [`ReadOnly`](crate::ErrorKind::ReadOnly) | 107000 | 1 |
    /// | non-zero write to a high-water mark (6, 8) | [`InvalidParam`](crate::ErrorKind::InvalidParam) | 507000 | 1 |
    /// | release threshold above `pool_size` | [`InvalidParam`](crate::ErrorKind::InvalidParam) | 507000 | 1 (the driver itself would take it; the CPU `libcuda.so.1` does) |
    pub fn check_write(self, value: RawAttrValue, pool_size: u64) -> Result<AttrWrite> {
        const OP: &str = "set_attr";
        let info = self.info_or_err(OP)?;
        if value.width() != info.width {
            return Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("{self:?} takes a {:?} value, got {:?}", info.width, value.width()),
            ));
        }
        let v = value.as_u64();
        match info.role {
            AttrRole::Current(_) => Err(Error::new(
                ErrorKind::ReadOnly,
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("{self:?} is read-only"),
            )),
            AttrRole::High(_) if v != 0 => Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                OP,
                format!("{self:?} can only be reset by writing 0, got {v}"),
            )),
            AttrRole::High(counter) => Ok(AttrWrite::ResetHigh(counter)),
            AttrRole::ReleaseThreshold if v > pool_size => Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                OP,
                format!("release threshold {v} is above the pool size {pool_size}"),
            )),
            AttrRole::ReleaseThreshold => Ok(AttrWrite::ReleaseThreshold(v)),
            AttrRole::ReuseFlag(flag) => Ok(AttrWrite::Flag(flag, v != 0)),
        }
    }

    /// Checks that a read of this id is allowed (the id is known).
    ///
    /// # Errors
    ///
    /// An unknown id is [`UnknownAttribute`](crate::ErrorKind::UnknownAttribute), with ACL
    /// code 107000 (the CUDA backend stamps `CUDA_ERROR_INVALID_VALUE`, 1).
    pub fn check_read(self) -> Result<&'static AttrInfo> {
        self.info_or_err("get_attr")
    }

    fn info_or_err(self, op: &'static str) -> Result<&'static AttrInfo> {
        self.info().ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownAttribute,
                code::ACL_ERROR_RT_PARAM_INVALID,
                op,
                format!("unknown pool attribute id {}", self.0),
            )
        })
    }
}

impl fmt::Debug for AttrId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(i) => write!(f, "{}({})", i.name, self.0),
            None => write!(f, "AttrId({})", self.0),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for bool {}
    impl Sealed for u64 {}
}

/// A typed attribute value: `bool` for reuse flags, `u64` for bytes.
pub trait AttrValue: sealed::Sealed + Copy + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The C width this type travels as.
    const WIDTH: AttrWidth;
    /// Encodes to the raw value.
    fn to_raw(self) -> RawAttrValue;
    /// Decodes a raw value of the right width (`None` for the wrong width).
    fn from_raw(raw: RawAttrValue) -> Option<Self>;
}

impl AttrValue for bool {
    const WIDTH: AttrWidth = AttrWidth::U32;
    fn to_raw(self) -> RawAttrValue {
        RawAttrValue::U32(u32::from(self))
    }
    fn from_raw(raw: RawAttrValue) -> Option<Self> {
        match raw {
            RawAttrValue::U32(v) => Some(v != 0),
            RawAttrValue::U64(_) => None,
        }
    }
}

impl AttrValue for u64 {
    const WIDTH: AttrWidth = AttrWidth::U64;
    fn to_raw(self) -> RawAttrValue {
        RawAttrValue::U64(self)
    }
    fn from_raw(raw: RawAttrValue) -> Option<Self> {
        match raw {
            RawAttrValue::U64(v) => Some(v),
            RawAttrValue::U32(_) => None,
        }
    }
}

mod key_sealed {
    pub trait Sealed {}
}

/// A typed attribute key: a zero-sized type naming one attribute.
pub trait Attribute: key_sealed::Sealed + Copy + fmt::Debug + Default + Send + Sync + 'static {
    /// The numbered id.
    const ID: AttrId;
    /// The typed value.
    type Value: AttrValue;
}

/// Keys whose value can be read (all of them).
pub trait Readable: Attribute {}

/// Keys that can be written with any value of their type.
#[diagnostic::on_unimplemented(
    message = "the pool attribute `{Self}` cannot be set",
    label = "`{Self}` is read-only or reset-only",
    note = "statistics counters are read-only; high-water marks (`ReservedMemHigh`, `UsedMemHigh`) can only be `reset`"
)]
pub trait Writable: Attribute {}

/// High-water marks, which can be reset to 0 and nothing else.
#[diagnostic::on_unimplemented(
    message = "the pool attribute `{Self}` cannot be reset",
    label = "`{Self}` is not a high-water mark",
    note = "only `ReservedMemHigh` and `UsedMemHigh` can be reset"
)]
pub trait Resettable: Attribute {}

macro_rules! attributes {
    ($(
        $(#[doc = $doc:literal])*
        $key:ident = $id:literal, $const_name:ident, $value:ty, $role:ident $(($arg:ident))?, default $default:literal;
    )*) => {
        impl AttrId {
            $(
                $(#[doc = $doc])*
                pub const $const_name: AttrId = AttrId($id);
            )*
        }

        /// Every attribute, in id order: the table the typed keys are generated from.
        ///
        /// | key | id | value | role | access |
        /// |---|---|---|---|---|
        $(
            #[doc = concat!(
                "| [`", stringify!($key), "`] | ", stringify!($id), " | `", stringify!($value), "` | ",
                attributes!(@role_text $role $(($arg))?), " | ", attributes!(@access_text $role), " |"
            )]
        )*
        pub const ATTRIBUTES: &[AttrInfo] = &[
            $(AttrInfo {
                id: AttrId($id),
                name: stringify!($const_name),
                key: AttrKey::$key,
                role: attributes!(@role $role $(($arg))?),
                width: <$value as AttrValue>::WIDTH,
                access: attributes!(@role $role $(($arg))?).access(),
                default: $default,
            },)*
        ];

        /// Every attribute key as one enum, in id order: what code that must handle each
        /// key matches on (a `match` without a catch-all arm stops compiling when a key is
        /// added).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum AttrKey {
            $(
                #[doc = concat!("[`", stringify!($key), "`], id ", stringify!($id), ".")]
                $key,
            )*
        }

        impl AttrKey {
            /// Every key, in id order.
            pub const ALL: &[AttrKey] = &[$(AttrKey::$key),*];

            /// Its id.
            pub const fn id(self) -> AttrId {
                match self {
                    $(AttrKey::$key => AttrId($id),)*
                }
            }

            /// Its role.
            pub const fn role(self) -> AttrRole {
                match self {
                    $(AttrKey::$key => attributes!(@role $role $(($arg))?),)*
                }
            }
        }

        $(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!(
                "Id ", stringify!($id), ", `", stringify!($const_name), "`, value `", stringify!($value),
                "`, ", attributes!(@role_text $role $(($arg))?), ", ", attributes!(@access_text $role), "."
            )]
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
            pub struct $key;

            impl key_sealed::Sealed for $key {}
            impl Attribute for $key {
                const ID: AttrId = AttrId($id);
                type Value = $value;
            }
            impl Readable for $key {}
            attributes!(@impl $role $key);
        )*
    };
    (@role flag($flag:ident)) => { AttrRole::ReuseFlag(ReuseFlag::$flag) };
    (@role threshold) => { AttrRole::ReleaseThreshold };
    (@role current($counter:ident)) => { AttrRole::Current(Counter::$counter) };
    (@role high($counter:ident)) => { AttrRole::High(Counter::$counter) };
    (@role_text flag($flag:ident)) => { "reuse flag" };
    (@role_text threshold) => { "release threshold (bytes)" };
    (@role_text current($counter:ident)) => { concat!("current ", stringify!($counter), " bytes") };
    (@role_text high($counter:ident)) => { concat!("high-water mark of ", stringify!($counter), " bytes") };
    (@access_text flag) => { "read/write" };
    (@access_text threshold) => { "read/write" };
    (@access_text current) => { "read-only" };
    (@access_text high) => { "read, reset (by writing 0)" };
    (@impl flag $key:ident) => { impl Writable for $key {} };
    (@impl threshold $key:ident) => { impl Writable for $key {} };
    (@impl current $key:ident) => {};
    (@impl high $key:ident) => { impl Resettable for $key {} };
}

attributes! {
    /// Reuse memory freed on another stream when the free is ordered before this
    /// stream's current position through recorded events and waits (chains included):
    /// rule c of the [reuse order](crate::contract::allocation).
    ReuseFollowEventDependencies = 1, REUSE_FOLLOW_EVENT_DEPENDENCIES, bool, flag(FollowEventDependencies), default 0;
    /// Reuse memory whose free has already executed on its stream when the allocation is
    /// made, even without any ordering. Timing-dependent by nature: rule d of the
    /// [reuse order](crate::contract::allocation).
    ReuseAllowOpportunistic = 2, REUSE_ALLOW_OPPORTUNISTIC, bool, flag(AllowOpportunistic), default 0;
    /// Reuse any cached block; the pool makes the allocating stream wait for the freeing
    /// stream to pass the free: rule e of the [reuse order](crate::contract::allocation).
    ReuseAllowInternalDependencies = 3, REUSE_ALLOW_INTERNAL_DEPENDENCIES, bool, flag(AllowInternalDependencies), default 0;
    /// Bytes the pool keeps reserved at synchronization instead of releasing them (see
    /// [release and trim](crate::contract::release)); above the pool size is
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 507000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1).
    ReleaseThreshold = 4, RELEASE_THRESHOLD, u64, threshold, default 0;
    /// Bytes the pool currently holds (live allocations plus cached blocks).
    ReservedMemCurrent = 5, RESERVED_MEM_CURRENT, u64, current(Reserved), default 0;
    /// High-water mark of reserved bytes; reset writes 0 (the mark becomes 0 under Ascend's
    /// rules, the current RESERVED under CUDA's).
    ReservedMemHigh = 6, RESERVED_MEM_HIGH, u64, high(Reserved), default 0;
    /// Bytes of live allocations (rounded to the granularity).
    UsedMemCurrent = 7, USED_MEM_CURRENT, u64, current(Used), default 0;
    /// High-water mark of used bytes; reset writes 0 (the mark becomes 0 under Ascend's
    /// rules, the current USED under CUDA's).
    UsedMemHigh = 8, USED_MEM_HIGH, u64, high(Used), default 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn table_is_in_id_order_and_matches_keys() {
        for (i, info) in ATTRIBUTES.iter().enumerate() {
            assert_eq!(info.id.0 as usize, i + 1);
        }
        assert_eq!(ReleaseThreshold::ID, AttrId::RELEASE_THRESHOLD);
        assert_eq!(AttrId(4).info().unwrap().name, "RELEASE_THRESHOLD");
        assert_eq!(AttrId(9).info(), None);
        assert_eq!(format!("{:?}", AttrId(6)), "RESERVED_MEM_HIGH(6)");
    }

    #[test]
    fn keys_roles_and_helpers_agree_with_the_table() {
        assert_eq!(AttrKey::ALL.len(), ATTRIBUTES.len());
        for (key, info) in AttrKey::ALL.iter().zip(ATTRIBUTES) {
            assert_eq!((key.id(), key.role(), info.key), (info.id, info.role, *key));
            assert_eq!(info.access, info.role.access());
            assert_eq!(info.id.key(), Some(*key));
            // The value's width follows from the role.
            let width = match info.role {
                AttrRole::ReuseFlag(_) => AttrWidth::U32,
                AttrRole::ReleaseThreshold | AttrRole::Current(_) | AttrRole::High(_) => AttrWidth::U64,
            };
            assert_eq!(info.width, width, "{:?}", info.id);
            match info.role {
                AttrRole::ReuseFlag(f) => assert_eq!(f.id(), info.id),
                AttrRole::Current(c) => assert_eq!(c.current_id(), info.id),
                AttrRole::High(c) => assert_eq!(c.high_id(), info.id),
                AttrRole::ReleaseThreshold => assert_eq!(info.id, AttrId::RELEASE_THRESHOLD),
            }
        }
        let mut stats = crate::PoolStats { reserved_current: 5, reserved_high: 9, used_current: 2, used_high: 7 };
        assert_eq!((Counter::Reserved.high(&stats), Counter::Used.current(&stats)), (9, 2));
        Counter::Reserved.reset_high(&mut stats, true);
        Counter::Used.reset_high(&mut stats, false);
        assert_eq!((stats.reserved_high, stats.used_high), (5, 0));
    }

    /// Every rule of a raw write (contract §3), one case each, for a pool of 100 bytes.
    #[rstest]
    #[case::flag_nonzero_stores_true(
        1,
        RawAttrValue::U32(5),
        Ok(AttrWrite::Flag(ReuseFlag::FollowEventDependencies, true))
    )]
    #[case::flag_zero_stores_false(2, RawAttrValue::U32(0), Ok(AttrWrite::Flag(ReuseFlag::AllowOpportunistic, false)))]
    #[case::flag_of_the_wrong_width(1, RawAttrValue::U64(1), Err((ErrorKind::InvalidParam, 107_000)))]
    #[case::threshold_equal_to_the_pool(4, RawAttrValue::U64(100), Ok(AttrWrite::ReleaseThreshold(100)))]
    #[case::threshold_above_the_pool(4, RawAttrValue::U64(101), Err((ErrorKind::InvalidParam, 507_000)))]
    #[case::reserved_current_is_read_only(5, RawAttrValue::U64(0), Err((ErrorKind::ReadOnly, 107_000)))]
    #[case::used_current_is_read_only(7, RawAttrValue::U64(1), Err((ErrorKind::ReadOnly, 107_000)))]
    #[case::high_mark_takes_only_zero(6, RawAttrValue::U64(100), Err((ErrorKind::InvalidParam, 507_000)))]
    #[case::high_mark_reset(8, RawAttrValue::U64(0), Ok(AttrWrite::ResetHigh(Counter::Used)))]
    #[case::unknown_id(0, RawAttrValue::U32(0), Err((ErrorKind::UnknownAttribute, 107_000)))]
    #[case::unknown_high_id(9, RawAttrValue::U64(0), Err((ErrorKind::UnknownAttribute, 107_000)))]
    fn check_write_rules(
        #[case] id: u32,
        #[case] value: RawAttrValue,
        #[case] expected: std::result::Result<AttrWrite, (ErrorKind, i32)>,
    ) {
        let got = AttrId(id).check_write(value, 100).map_err(|e| (e.kind(), e.code()));
        assert_eq!(got, expected);
    }

    #[test]
    fn unknown_ids_are_refused_for_reads() {
        let e = AttrId(99).check_read().unwrap_err();
        assert_eq!((e.kind(), e.code()), (ErrorKind::UnknownAttribute, 107_000));
    }

    #[test]
    fn values_round_trip() {
        assert_eq!(bool::from_raw(true.to_raw()), Some(true));
        assert_eq!(bool::from_raw(RawAttrValue::U32(7)), Some(true));
        assert_eq!(u64::from_raw(RawAttrValue::U32(7)), None);
        assert_eq!(u64::from_raw(9u64.to_raw()), Some(9));
    }
}
