//! [`HostRegistration`] for [`Ascend`] ([contract §15](mempool_hal::contract::host_register)):
//! `aclrtHostRegister` / `aclrtHostUnregister` in the instance's context (CANN needs a
//! current context for both). The runtime's codes come back unchanged: 100000 for a null
//! pointer or size 0, 507910 for a range overlapping a registered one, 507911 for an
//! address that is not a registered range's start.

use super::Ascend;
use crate::result;
use mempool_backend_kit::context::InstanceContext;
use mempool_hal::{DevicePtr, HostRegisterFlags, HostRegistration, Result};

impl HostRegistration for Ascend {
    #[allow(unsafe_code)]
    unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr> {
        self.shared.enter_checked()?;
        let d = result::host_register::register(&self.shared.rt, ptr.cast(), len as u64, flags.read_only)?;
        Ok(DevicePtr::from_addr(d as u64))
    }

    fn unregister_host(&self, ptr: *mut u8) -> Result<()> {
        self.shared.enter_checked()?;
        result::host_register::unregister(&self.shared.rt, ptr.cast())
    }
}
