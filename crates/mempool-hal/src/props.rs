//! Pool properties (the [property contract](crate::contract::properties)), one field per
//! field of `aclrtMemPoolProps`, in ACL's numbering; the CUDA backend renumbers them into
//! the driver's `CUmemPoolProps`.

use crate::error::{Error, ErrorKind, Result, code};

/// `aclrtMemAllocationType` (CUDA's `CUmemAllocationType`). Only [`AllocationType::PINNED`]
/// is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllocationType(pub i32);

impl AllocationType {
    /// Pinned device memory (ACL's 0; CUDA's `CU_MEM_ALLOCATION_TYPE_PINNED` is 1), the only
    /// supported type.
    pub const PINNED: AllocationType = AllocationType(0);
}

/// `aclrtMemHandleType` (CUDA's `CUmemAllocationHandleType`). On Ascend accepted and
/// otherwise ignored; the CUDA backend passes [`HandleType::POSIX`] to the driver and
/// refuses it on a device that cannot share pools
/// ([`NotSupported`](crate::ErrorKind::NotSupported), `CUDA_ERROR_NOT_SUPPORTED`, 801).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandleType(pub i32);

impl HandleType {
    /// No shareable handle (0).
    pub const NONE: HandleType = HandleType(0);
    /// A POSIX file descriptor (ACL's 2; CUDA's `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`
    /// is 1).
    pub const POSIX: HandleType = HandleType(2);
}

/// `aclrtMemLocationType`. Only [`LocationType::DEVICE`] is valid for a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocationType(pub i32);

impl LocationType {
    /// Host memory (0): not valid for a pool.
    pub const HOST: LocationType = LocationType(0);
    /// Device memory (1).
    pub const DEVICE: LocationType = LocationType(1);
}

/// `aclrtMemLocation`: `{ uint32 id; int type }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// The device id.
    pub id: u32,
    /// The location type; must be [`LocationType::DEVICE`].
    pub kind: LocationType,
}

/// The properties a pool is created with, mapping one-to-one onto the 56-byte C struct
/// `aclrtMemPoolProps` (allocation type @0, handle type @4, location @8, max size @16,
/// reserved @24). The CUDA backend renumbers them into the driver's 88-byte
/// `CUmemPoolProps` (`mempool_cuda::sys::CUmemPoolProps::from_portable`) after
/// [`PoolProps::validate`] has accepted them.
///
/// Fields are public and unchecked, so a test can build invalid properties; the backend
/// validates them at creation (see [`PoolProps::validate`] and the
/// [property contract](crate::contract::properties)).
///
/// ```
/// use mempool_hal::PoolProps;
/// let props = PoolProps::builder().device(0).max_size(64 << 20).build();
/// assert_eq!(props.location.id, 0);
/// assert_eq!(props.max_size, 64 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PoolProps {
    /// `allocType` @0.
    pub alloc_type: AllocationType,
    /// `handleType` @4.
    pub handle_type: HandleType,
    /// `location` @8.
    pub location: Location,
    /// `maxSize` @16: 0 means the whole device (rounded down to the granularity);
    /// otherwise rounded up to the granularity.
    pub max_size: u64,
    /// `reserved` @24: must be all zero.
    pub reserved: [u8; 32],
}

impl Default for PoolProps {
    fn default() -> Self {
        PoolProps {
            alloc_type: AllocationType::PINNED,
            handle_type: HandleType::NONE,
            location: Location { id: 0, kind: LocationType::DEVICE },
            max_size: 0,
            reserved: [0; 32],
        }
    }
}

impl PoolProps {
    /// A builder starting from valid defaults: pinned, no handle, device 0, whole device.
    pub fn builder() -> PoolPropsBuilder {
        PoolPropsBuilder { props: PoolProps::default() }
    }

    /// Checks the properties against a device with `device_count` devices of
    /// `device_memory` bytes and a pool granularity of `granularity` bytes (a power of
    /// two), and returns the pool size in bytes after rounding.
    ///
    /// # Errors
    ///
    /// The errors carry ACL numbers, whatever the backend. The emulator reports them as they
    /// are; the CUDA backend, which calls this before `cuMemPoolCreate`, stamps its own code
    /// at its boundary (`mempool_cuda::result::code_of`). The Ascend backend leaves the
    /// checks to the runtime.
    ///
    /// | problem | kind | ACL code | CUDA backend (`CUresult`) |
    /// |---|---|---|---|
    /// | allocation type not PINNED, handle type not NONE/POSIX, location not DEVICE, non-zero reserved byte | [`InvalidParam`](crate::ErrorKind::InvalidParam) | 100000 | 1 (`CUDA_ERROR_INVALID_VALUE`) |
    /// | device id out of range | [`InvalidDevice`](crate::ErrorKind::InvalidDevice) | 107001 | 101 (`CUDA_ERROR_INVALID_DEVICE`) |
    /// | max size above the device's memory, or overflowing when rounded | [`InvalidParam`](crate::ErrorKind::InvalidParam) | 107000 | 1 |
    pub fn validate(&self, device_count: u32, device_memory: u64, granularity: u64) -> Result<u64> {
        const OP: &str = "create_pool";
        let bad = |msg: String| Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, msg));
        if self.alloc_type != AllocationType::PINNED {
            return bad(format!("allocation type {} is not PINNED (0)", self.alloc_type.0));
        }
        if self.handle_type != HandleType::NONE && self.handle_type != HandleType::POSIX {
            return bad(format!("handle type {} is neither NONE (0) nor POSIX (2)", self.handle_type.0));
        }
        if self.location.kind != LocationType::DEVICE {
            return bad(format!("location type {} is not DEVICE (1)", self.location.kind.0));
        }
        if let Some(i) = self.reserved.iter().position(|&b| b != 0) {
            return bad(format!("reserved byte {i} is not zero"));
        }
        if self.location.id >= device_count {
            return Err(Error::new(
                ErrorKind::InvalidDevice,
                code::ACL_ERROR_RT_INVALID_DEVICEID,
                OP,
                format!("device {} does not exist ({} device(s))", self.location.id, device_count),
            ));
        }
        let too_big = |msg: String| Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID, OP, msg));
        let size = if self.max_size == 0 {
            round_down(device_memory, granularity)
        } else {
            match round_up(self.max_size, granularity) {
                Some(s) => s,
                None => return too_big(format!("max size {} overflows when rounded", self.max_size)),
            }
        };
        if size > device_memory {
            return too_big(format!("max size {} is larger than the device's {} bytes", self.max_size, device_memory));
        }
        if size == 0 {
            return too_big("the device has less memory than one granule".to_string());
        }
        Ok(size)
    }
}

/// Builds a [`PoolProps`]; every setter maps onto one C field.
#[derive(Debug, Clone, Copy)]
pub struct PoolPropsBuilder {
    props: PoolProps,
}

impl PoolPropsBuilder {
    /// `allocType`.
    pub fn alloc_type(mut self, t: AllocationType) -> Self {
        self.props.alloc_type = t;
        self
    }
    /// `handleType`.
    pub fn handle_type(mut self, t: HandleType) -> Self {
        self.props.handle_type = t;
        self
    }
    /// `location.id`, with `location.type` = DEVICE.
    pub fn device(mut self, id: u32) -> Self {
        self.props.location = Location { id, kind: LocationType::DEVICE };
        self
    }
    /// `location` as given.
    pub fn location(mut self, location: Location) -> Self {
        self.props.location = location;
        self
    }
    /// `maxSize` in bytes (0 = the whole device).
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.props.max_size = bytes;
        self
    }
    /// `reserved` bytes (must be zero to be valid).
    pub fn reserved(mut self, reserved: [u8; 32]) -> Self {
        self.props.reserved = reserved;
        self
    }
    /// The finished properties (not validated: the backend validates at creation).
    pub fn build(self) -> PoolProps {
        self.props
    }
}

/// Rounds `size` up to a multiple of `granularity` (a power of two); `None` on overflow.
pub fn round_up(size: u64, granularity: u64) -> Option<u64> {
    debug_assert!(granularity.is_power_of_two());
    size.checked_add(granularity - 1).map(|s| s & !(granularity - 1))
}

/// Rounds `size` down to a multiple of `granularity` (a power of two).
pub fn round_down(size: u64, granularity: u64) -> u64 {
    debug_assert!(granularity.is_power_of_two());
    size & !(granularity - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 2 << 20;

    #[test]
    fn rounding() {
        assert_eq!(round_up(1, G), Some(G));
        assert_eq!(round_up(G, G), Some(G));
        assert_eq!(round_up(u64::MAX, G), None);
        assert_eq!(round_down(3 * G - 1, G), 2 * G);
    }

    #[test]
    fn validate_sizes() {
        let p = PoolProps::builder().build();
        assert_eq!(p.validate(1, 10 * G + 5, G), Ok(10 * G));
        let p = PoolProps::builder().max_size(G - 1).build();
        assert_eq!(p.validate(1, 10 * G, G), Ok(G));
        let p = PoolProps::builder().max_size(11 * G).build();
        assert_eq!(p.validate(1, 10 * G, G).unwrap_err().code(), code::ACL_ERROR_RT_PARAM_INVALID);
        let p = PoolProps::builder().max_size(u64::MAX).build();
        assert_eq!(p.validate(1, 10 * G, G).unwrap_err().code(), code::ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn validate_fields() {
        let check = |p: PoolProps, c: i32| assert_eq!(p.validate(1, 10 * G, G).unwrap_err().code(), c);
        check(PoolProps::builder().alloc_type(AllocationType(1)).build(), code::ACL_ERROR_INVALID_PARAM);
        check(PoolProps::builder().handle_type(HandleType(7)).build(), code::ACL_ERROR_INVALID_PARAM);
        check(
            PoolProps::builder().location(Location { id: 0, kind: LocationType::HOST }).build(),
            code::ACL_ERROR_INVALID_PARAM,
        );
        let mut r = [0; 32];
        r[31] = 1;
        check(PoolProps::builder().reserved(r).build(), code::ACL_ERROR_INVALID_PARAM);
        check(PoolProps::builder().device(1).build(), code::ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(PoolProps::builder().handle_type(HandleType::POSIX).build().validate(1, G, G).is_ok());
    }
}
