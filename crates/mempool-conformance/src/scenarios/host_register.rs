//! Host registration scenarios ([contract §15](mempool_hal::contract::host_register)),
//! for a backend whose device implements [`HostRegistration`]: a registered host range is
//! reachable by copies through the device address answered, both ways, until it is
//! unregistered; registering an overlapping range and unregistering anything but a
//! registered range's start are refused with the runtime's codes (ACL: 507910 and 507911;
//! CUDA: 712 and 713, 1 for an interior pointer), told apart by the error's vendor.
//!
//! Run through [`host_register_scenarios`](crate::host_register_scenarios) and
//! [`host_register_trials`](crate::host_register_trials).

use super::{free, new_pool};
use crate::{Failure, Harness, ScenarioResult, ensure};
use mempool_hal::{Device, DevicePtr, ErrorKind, HostBuffer, HostRegisterFlags, HostRegistration, MemPool, Vendor};
use std::fmt;

/// The host page size the registrations are aligned to (CANN asks for page-aligned
/// ranges).
const PAGE: usize = 4096;

/// Host memory the scenario owns, `pages` pages from a page-aligned start.
struct HostPages {
    buf: Vec<u8>,
    start: usize,
}

impl HostPages {
    fn new(pages: usize) -> HostPages {
        let buf = vec![0u8; (pages + 1) * PAGE];
        let start = (buf.as_ptr() as usize).next_multiple_of(PAGE) - buf.as_ptr() as usize;
        HostPages { buf, start }
    }

    /// The address `offset` bytes into the range.
    fn at(&mut self, offset: usize) -> *mut u8 {
        self.buf[self.start + offset..].as_mut_ptr()
    }

    /// The bytes `[offset, offset + len)`.
    fn bytes(&self, offset: usize, len: usize) -> &[u8] {
        &self.buf[self.start + offset..self.start + offset + len]
    }
}

/// Registers `len` bytes at `p` with default flags.
fn register<D: HostRegistration>(dev: &D, p: *mut u8, len: usize) -> mempool_hal::Result<DevicePtr> {
    // SAFETY: every pointer the scenarios pass lies in a `HostPages` that outlives the
    // registration: each scenario unregisters what it registered, and synchronizes the
    // copies queued on it, before its pages drop.
    unsafe { dev.register_host(p, len, HostRegisterFlags::default()) }
}

/// What a runtime answers for one mistake: the kind and code of an ACL error, then of a
/// CUDA one.
type Answer = ((ErrorKind, i32), (ErrorKind, i32));

/// Registering a range that overlaps a registered one (ACL 507910, CUDA 712).
const ALREADY: Answer = ((ErrorKind::InvalidParam, 507_910), (ErrorKind::InvalidParam, 712));
/// Unregistering an address no registration holds (ACL 507911, CUDA 713).
const NOT_REGISTERED: Answer = ((ErrorKind::InvalidPointer, 507_911), (ErrorKind::InvalidPointer, 713));
/// Unregistering an interior address (ACL 507911, CUDA `CUDA_ERROR_INVALID_VALUE`).
const INTERIOR: Answer = ((ErrorKind::InvalidPointer, 507_911), (ErrorKind::InvalidParam, 1));

/// Expects `r` to be refused as `answer` says for the error's vendor.
#[track_caller]
fn refused<T: fmt::Debug>(r: mempool_hal::Result<T>, answer: Answer, what: impl fmt::Display) -> ScenarioResult {
    match r {
        Ok(v) => Err(Failure::new(format!("{what}: expected a refusal, but the call succeeded with {v:?}"))),
        Err(e) => {
            let (kind, code) = if e.vendor() == Vendor::Cuda { answer.1 } else { answer.0 };
            ensure!(e.kind() == kind && e.code() == code, "{what}: expected ({kind}, code {code}), got {e}");
            Ok(())
        }
    }
}

/// Host registration scenario 1: a registered range is reached by copies through its
/// device address, from device memory into it and from it into device memory, queued on a
/// stream; unregistering it succeeds.
pub fn h01_registered_range_copies_both_ways<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: HostRegistration,
{
    let dev = h.device()?;
    let pool = new_pool(&dev, 4)?;
    let s = dev.create_stream()?;
    let n = 2 * PAGE;
    let mut host = HostPages::new(2);
    let d = register(&dev, host.at(0), n)?;
    let a = pool.malloc_async(n as u64, &s)?;
    dev.memset_async(a, 0x5A, n as u64, &s)?;
    dev.memcpy_d2d_async(d, a, n as u64, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(host.bytes(0, n).iter().all(|&b| b == 0x5A), "the copy into the registered range wrote its bytes");

    let pattern: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    // SAFETY: the range holds `n` bytes and no copy queued on it is pending (synchronized).
    unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), host.at(0), n) };
    dev.memcpy_d2d_async(a, d, n as u64, &s)?;
    let out = HostBuffer::new(n);
    dev.memcpy_d2h_async(&out, a, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(out.to_vec() == pattern, "the copy out of the registered range read its bytes");

    dev.unregister_host(host.at(0))?;
    free(&pool, a, &s)?;
    dev.synchronize_stream(&s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Host registration scenario 2: a range that overlaps a registered one (the same range,
/// its last byte, one around it) is refused; a range beside it is registered.
pub fn h02_overlapping_registration_refused<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: HostRegistration,
{
    let dev = h.device()?;
    let mut host = HostPages::new(4);
    register(&dev, host.at(PAGE), 2 * PAGE)?;
    refused(register(&dev, host.at(PAGE), 2 * PAGE), ALREADY, "the same range twice")?;
    refused(register(&dev, host.at(2 * PAGE), PAGE), ALREADY, "its last page")?;
    refused(register(&dev, host.at(0), 4 * PAGE), ALREADY, "a range around it")?;
    register(&dev, host.at(3 * PAGE), PAGE)?;
    register(&dev, host.at(0), PAGE)?;
    for p in [0, PAGE, 3 * PAGE] {
        dev.unregister_host(host.at(p))?;
    }
    Ok(())
}

/// Host registration scenario 3: unregistering names a registered range's start; an
/// interior address, an address never registered and a second unregister are refused.
pub fn h03_unregister_names_the_start<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: HostRegistration,
{
    let dev = h.device()?;
    let mut host = HostPages::new(3);
    register(&dev, host.at(0), 2 * PAGE)?;
    refused(dev.unregister_host(host.at(PAGE)), INTERIOR, "an interior address")?;
    refused(dev.unregister_host(host.at(2 * PAGE)), NOT_REGISTERED, "never registered")?;
    dev.unregister_host(host.at(0))?;
    refused(dev.unregister_host(host.at(0)), NOT_REGISTERED, "a second unregister")?;
    Ok(())
}

/// Host registration scenario 4: an unregistered range may be registered again, with
/// another length, which then covers what it overlaps.
pub fn h04_register_again_after_unregister<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: HostRegistration,
{
    let dev = h.device()?;
    let mut host = HostPages::new(2);
    register(&dev, host.at(0), PAGE)?;
    dev.unregister_host(host.at(0))?;
    register(&dev, host.at(0), 2 * PAGE)?;
    refused(register(&dev, host.at(PAGE), PAGE), ALREADY, "inside the longer range")?;
    dev.unregister_host(host.at(0))?;
    Ok(())
}
