//! Pool attributes (the [attribute contract](crate::contract::attributes)): the numbered
//! raw path and the typed keys.
//!
//! Every attribute is declared once, in the table at the bottom of this module. Each
//! entry generates a zero-sized key type, its id constant, its row in [`ATTRIBUTES`] and
//! the marker traits that decide what compiles:
//!
//! | key | id | value | access |
//! |---|---|---|---|
//! | [`ReuseFollowEventDependencies`] | 1 | `bool` | read/write |
//! | [`ReuseAllowOpportunistic`] | 2 | `bool` | read/write |
//! | [`ReuseAllowInternalDependencies`] | 3 | `bool` | read/write |
//! | [`ReleaseThreshold`] | 4 | `u64` bytes | read/write |
//! | [`ReservedMemCurrent`] | 5 | `u64` bytes | read-only |
//! | [`ReservedMemHigh`] | 6 | `u64` bytes | read, reset (by writing 0) |
//! | [`UsedMemCurrent`] | 7 | `u64` bytes | read-only |
//! | [`UsedMemHigh`] | 8 | `u64` bytes | read, reset (by writing 0) |
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
//! `CU_MEMPOOL_ATTR_*` (`cudaMemPoolAttr*`) give each attribute the same id. They differ in
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

/// Who may write an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
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

/// One row of the attribute table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrInfo {
    /// The id.
    pub id: AttrId,
    /// The name without its prefix (`ACL_RT_MEM_POOL_ATTR_`, `CU_MEMPOOL_ATTR_`), e.g.
    /// `"RELEASE_THRESHOLD"`.
    pub name: &'static str,
    /// The C width.
    pub width: AttrWidth,
    /// Who may write it.
    pub access: Access,
    /// The value a fresh pool reads.
    pub default: u64,
}

/// A write that passed [`AttrId::check_write`], normalized for the backend to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrWrite {
    /// Set a reuse flag (any non-zero value stores `true`).
    Flag(AttrId, bool),
    /// Set the release threshold, in bytes.
    ReleaseThreshold(u64),
    /// Reset a high-water mark (6 or 8) to 0.
    ResetHigh(AttrId),
}

impl AttrId {
    /// This attribute's table row, or `None` for an unknown id.
    pub fn info(self) -> Option<&'static AttrInfo> {
        ATTRIBUTES.iter().find(|i| i.id == self)
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
        match info.access {
            Access::ReadOnly => Err(Error::new(
                ErrorKind::ReadOnly,
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("{self:?} is read-only"),
            )),
            Access::ResetOnly if v != 0 => Err(Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                OP,
                format!("{self:?} can only be reset by writing 0, got {v}"),
            )),
            Access::ResetOnly => Ok(AttrWrite::ResetHigh(self)),
            Access::ReadWrite if self == AttrId::RELEASE_THRESHOLD => {
                if v > pool_size {
                    Err(Error::new(
                        ErrorKind::InvalidParam,
                        code::ACL_ERROR_RT_INTERNAL_ERROR,
                        OP,
                        format!("release threshold {v} is above the pool size {pool_size}"),
                    ))
                } else {
                    Ok(AttrWrite::ReleaseThreshold(v))
                }
            }
            Access::ReadWrite => Ok(AttrWrite::Flag(self, v != 0)),
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
        $key:ident = $id:literal, $const_name:ident, $value:ty, $access:ident, default $default:literal;
    )*) => {
        impl AttrId {
            $(
                $(#[doc = $doc])*
                pub const $const_name: AttrId = AttrId($id);
            )*
        }

        /// Every attribute, in id order: the table the typed keys are generated from.
        pub const ATTRIBUTES: &[AttrInfo] = &[
            $(AttrInfo {
                id: AttrId($id),
                name: stringify!($const_name),
                width: <$value as AttrValue>::WIDTH,
                access: attributes!(@access $access),
                default: $default,
            },)*
        ];

        $(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("Id ", stringify!($id), ", `", stringify!($const_name), "`, value `", stringify!($value), "`, access `", stringify!($access), "`.")]
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
            pub struct $key;

            impl key_sealed::Sealed for $key {}
            impl Attribute for $key {
                const ID: AttrId = AttrId($id);
                type Value = $value;
            }
            impl Readable for $key {}
            attributes!(@impl $access $key);
        )*
    };
    (@access rw) => { Access::ReadWrite };
    (@access r) => { Access::ReadOnly };
    (@access reset) => { Access::ResetOnly };
    (@impl rw $key:ident) => { impl Writable for $key {} };
    (@impl r $key:ident) => {};
    (@impl reset $key:ident) => { impl Resettable for $key {} };
}

attributes! {
    /// Reuse memory freed on another stream when the free is ordered before this
    /// stream's current position through recorded events and waits (chains included):
    /// rule c of the [reuse order](crate::contract::allocation).
    ReuseFollowEventDependencies = 1, REUSE_FOLLOW_EVENT_DEPENDENCIES, bool, rw, default 0;
    /// Reuse memory whose free has already executed on its stream when the allocation is
    /// made, even without any ordering. Timing-dependent by nature: rule d of the
    /// [reuse order](crate::contract::allocation).
    ReuseAllowOpportunistic = 2, REUSE_ALLOW_OPPORTUNISTIC, bool, rw, default 0;
    /// Reuse any cached block; the pool makes the allocating stream wait for the freeing
    /// stream to pass the free: rule e of the [reuse order](crate::contract::allocation).
    ReuseAllowInternalDependencies = 3, REUSE_ALLOW_INTERNAL_DEPENDENCIES, bool, rw, default 0;
    /// Bytes the pool keeps reserved at synchronization instead of releasing them (see
    /// [release and trim](crate::contract::release)); above the pool size is
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 507000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1).
    ReleaseThreshold = 4, RELEASE_THRESHOLD, u64, rw, default 0;
    /// Bytes the pool currently holds (live allocations plus cached blocks).
    ReservedMemCurrent = 5, RESERVED_MEM_CURRENT, u64, r, default 0;
    /// High-water mark of reserved bytes; reset writes 0 (the mark becomes 0 under Ascend's
    /// rules, the current RESERVED under CUDA's).
    ReservedMemHigh = 6, RESERVED_MEM_HIGH, u64, reset, default 0;
    /// Bytes of live allocations (rounded to the granularity).
    UsedMemCurrent = 7, USED_MEM_CURRENT, u64, r, default 0;
    /// High-water mark of used bytes; reset writes 0 (the mark becomes 0 under Ascend's
    /// rules, the current USED under CUDA's).
    UsedMemHigh = 8, USED_MEM_HIGH, u64, reset, default 0;
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

    /// Every rule of a raw write (contract §3), one case each, for a pool of 100 bytes.
    #[rstest]
    #[case::flag_nonzero_stores_true(1, RawAttrValue::U32(5), Ok(AttrWrite::Flag(AttrId(1), true)))]
    #[case::flag_zero_stores_false(2, RawAttrValue::U32(0), Ok(AttrWrite::Flag(AttrId(2), false)))]
    #[case::flag_of_the_wrong_width(1, RawAttrValue::U64(1), Err((ErrorKind::InvalidParam, 107_000)))]
    #[case::threshold_equal_to_the_pool(4, RawAttrValue::U64(100), Ok(AttrWrite::ReleaseThreshold(100)))]
    #[case::threshold_above_the_pool(4, RawAttrValue::U64(101), Err((ErrorKind::InvalidParam, 507_000)))]
    #[case::reserved_current_is_read_only(5, RawAttrValue::U64(0), Err((ErrorKind::ReadOnly, 107_000)))]
    #[case::used_current_is_read_only(7, RawAttrValue::U64(1), Err((ErrorKind::ReadOnly, 107_000)))]
    #[case::high_mark_takes_only_zero(6, RawAttrValue::U64(100), Err((ErrorKind::InvalidParam, 507_000)))]
    #[case::high_mark_reset(8, RawAttrValue::U64(0), Ok(AttrWrite::ResetHigh(AttrId(8))))]
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
