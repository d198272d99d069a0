//! The mock of [`HostRegistration`]: code generic over a registering device is tested
//! with expectations, the runtime's answers injected.

use mempool_hal::{DevicePtr, Error, ErrorKind, HostRegisterFlags, HostRegistration, Result, code};
use mempool_mock::MockDevice;
use mempool_mock::mockall::Sequence;

/// The code under test: registers `buf`, runs `work` with its device address, and
/// unregisters whatever `work` answered; a failed registration runs nothing.
fn with_registered<D: HostRegistration>(
    dev: &D,
    buf: &mut [u8],
    work: impl FnOnce(DevicePtr) -> Result<()>,
) -> Result<()> {
    // SAFETY: `buf` outlives the registration, which ends before this returns.
    let d = unsafe { dev.register_host(buf.as_mut_ptr(), buf.len(), HostRegisterFlags::default()) }?;
    let r = work(d);
    dev.unregister_host(buf.as_mut_ptr())?;
    r
}

#[test]
fn a_registration_is_undone_after_the_work_even_when_it_fails() {
    let mut buf = vec![0u8; 64];
    let addr = buf.as_mut_ptr() as usize;
    let mut dev = MockDevice::new();
    let mut seq = Sequence::new();
    dev.expect_register_host()
        .withf(move |p, len, flags| *p as usize == addr && *len == 64 && !flags.read_only)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|p, _, _| Ok(DevicePtr::from_addr(p as u64)));
    dev.expect_unregister_host()
        .withf(move |p| *p as usize == addr)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(()));
    let e = with_registered(&dev, &mut buf, |d| {
        assert_eq!(d.addr(), addr as u64);
        Err(Error::invalid_pointer("copy", "injected"))
    })
    .expect_err("the work's failure");
    assert_eq!(e.kind(), ErrorKind::InvalidPointer);
}

#[test]
fn an_overlapping_registration_runs_nothing() {
    let mut buf = vec![0u8; 64];
    let mut dev = MockDevice::new();
    dev.expect_register_host().times(1).returning(|_, _, _| {
        Err(Error::new(
            ErrorKind::InvalidParam,
            code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED,
            "register_host",
            "overlaps",
        ))
    });
    dev.expect_unregister_host().never();
    let e = with_registered(&dev, &mut buf, |_| panic!("no work without a registration")).expect_err("refused");
    assert_eq!(e.code(), 507_910);
    dev.checkpoint();
    dev.expect_unregister_host().withf(|p| p.is_null()).times(1).returning(|_| {
        Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, "unregister_host", "null"))
    });
    assert_eq!(dev.unregister_host(std::ptr::null_mut()).expect_err("null").code(), 100_000);
}
