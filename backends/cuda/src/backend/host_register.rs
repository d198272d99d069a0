//! [`HostRegistration`] for [`Cuda`] ([contract §15](mempool_hal::contract::host_register)):
//! `cuMemHostRegister_v2` then `cuMemHostGetDevicePointer_v2` in the device's primary
//! context (both need a current context), and `cuMemHostUnregister`. The driver's codes
//! come back unchanged: 1 for a null pointer, size 0 or an interior pointer, 712 for a
//! range overlapping a registered one, 713 for a pointer no registration knows.

use super::Cuda;
use crate::result;
use mempool_backend_kit::context::InstanceContext;
use mempool_hal::{DevicePtr, HostRegisterFlags, HostRegistration, Result};

impl HostRegistration for Cuda {
    #[allow(unsafe_code)]
    unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr> {
        self.shared.enter_checked()?;
        let rt = &self.shared.rt;
        result::host_register::register(rt, ptr.cast(), len, flags.read_only)?;
        match result::host_register::device_pointer(rt, ptr.cast()) {
            Ok(d) => Ok(DevicePtr::from_addr(d)),
            Err(e) => {
                // Registered but unusable: undo it, and report why.
                let _ = result::host_register::unregister(rt, ptr.cast());
                Err(e)
            }
        }
    }

    fn unregister_host(&self, ptr: *mut u8) -> Result<()> {
        self.shared.enter_checked()?;
        result::host_register::unregister(&self.shared.rt, ptr.cast())
    }
}
