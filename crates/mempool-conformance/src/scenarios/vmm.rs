//! Virtual memory ([contract §14](mempool_hal::contract::vmm)), for backends whose device
//! implements [`VirtualMemory`]: a reserved range with chunks mapped at offsets, copies
//! across mappings, one chunk seen at two addresses, a chunk freed while mapped, and misuse
//! answered with errors. Run by [`vmm_trials`](crate::vmm_trials).
//!
//! Every scenario reads the minimum granularity `g` from the device, uses a few granules,
//! and sets read-write access on each mapping on its own (CANN grants it at the mapping
//! and accepts the call only for exactly one mapping; CUDA needs it). Codes are CANN's:
//! 107000 where its driver library refuses, 507899 where its kernel module does; a CUDA
//! backend answers `CUDA_ERROR_INVALID_VALUE` for both.

use crate::{Capability, Failure, Harness, ScenarioResult, ensure, ensure_eq, ensure_ne, expect_error};
use mempool_hal::{
    Access, Device, DevicePtr, ErrorKind, Granularity, HostBuffer, Mapping, Physical, Reserved, VirtualMemory, code,
};

/// What a scenario works with: a fresh device, a stream of it, the minimum granularity.
type Setup<D> = (D, <D as Device>::Stream, u64);

/// `(device, stream, g)` for a scenario.
fn setup<H: Harness>(h: &H) -> Result<Setup<H::Device>, Failure>
where
    H::Device: VirtualMemory,
{
    let dev = h.device()?;
    let s = dev.create_stream()?;
    let g = dev.granularity(Granularity::Minimum)?;
    ensure!(g > 0 && g.is_power_of_two(), "granularity {g} is not a power of two");
    ensure!(dev.granularity(Granularity::Recommended)? % g == 0, "the recommended granularity is a multiple of {g}");
    Ok((dev, s, g))
}

/// `range.base + off`.
fn at(range: Reserved, off: u64) -> Result<DevicePtr, Failure> {
    super::offset(range.base, off)
}

/// Maps `chunk` (all of it) at `off` in `range` and sets read-write access there.
fn map_rw<D: VirtualMemory>(dev: &D, range: Reserved, off: u64, chunk: Physical) -> Result<Mapping, Failure> {
    let m = dev.map(at(range, off)?, chunk.size, 0, chunk)?;
    ensure_eq!((m.at, m.size), (at(range, off)?, chunk.size), "the mapping");
    dev.set_access(m.at, m.size, Access::ReadWrite)?;
    Ok(m)
}

fn pattern(len: u64, seed: u64) -> Vec<u8> {
    (0..len).map(|i| ((i * 13 + seed * 7) % 253) as u8).collect()
}

/// Reserve a range, map two chunks back to back, copy across their boundary, unmap,
/// release.
pub fn vmm01_round_trip<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: VirtualMemory,
{
    let (dev, s, g) = setup(h)?;
    let range = dev.reserve(8 * g, 0, None)?;
    ensure_eq!(range.size, 8 * g, "the reserved size");
    ensure_eq!(range.base.addr() % g, 0, "the base is aligned to the granularity");
    let (c1, c2) = (dev.create_physical(2 * g)?, dev.create_physical(2 * g)?);
    ensure_ne!(c1.handle, c2.handle, "two chunks have one handle");
    let m1 = map_rw(&dev, range, 0, c1)?;
    let m2 = map_rw(&dev, range, 2 * g, c2)?;
    // 2g bytes from the middle of the first mapping into the middle of the second.
    let data = pattern(2 * g, 1);
    let across = at(range, g)?;
    dev.memcpy_h2d_async(across, &data, &s)?;
    let back = HostBuffer::new(data.len());
    dev.memcpy_d2h_async(&back, across, &s)?;
    // And a device-to-device copy of the first mapping's first granule to the second's last.
    dev.memset_async(range.base, 0x3c, g, &s)?;
    dev.memcpy_d2d_async(at(range, 3 * g)?, range.base, g, &s)?;
    let last = HostBuffer::new(g as usize);
    dev.memcpy_d2h_async(&last, at(range, 3 * g)?, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(back.to_vec() == data, "the bytes copied across two mappings came back changed");
    ensure!(last.to_vec().iter().all(|&b| b == 0x3c), "the device-to-device copy");
    dev.unmap(m1)?;
    dev.unmap(m2)?;
    dev.release_physical(c1)?;
    dev.release_physical(c2)?;
    dev.release_reserved(range)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// One chunk mapped at two addresses: both show the same bytes.
pub fn vmm02_chunk_mapped_twice<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: VirtualMemory,
{
    let (dev, s, g) = setup(h)?;
    let range = dev.reserve(4 * g, 0, None)?;
    let c = dev.create_physical(g)?;
    let a = map_rw(&dev, range, 0, c)?;
    let b = map_rw(&dev, range, 3 * g, c)?;
    let data = pattern(g, 2);
    dev.memcpy_h2d_async(a.at, &data, &s)?;
    let seen = HostBuffer::new(g as usize);
    dev.memcpy_d2h_async(&seen, b.at, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(seen.to_vec() == data, "written through one mapping, read through the other");
    dev.memset_async(b.at, 0xa5, 64, &s)?;
    let head = HostBuffer::new(64);
    dev.memcpy_d2h_async(&head, a.at, &s)?;
    dev.synchronize_stream(&s)?;
    ensure_eq!(head.to_vec(), vec![0xa5; 64], "a memset through the second mapping, read through the first");
    dev.unmap(a)?;
    dev.unmap(b)?;
    dev.release_physical(c)?;
    dev.release_reserved(range)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// A chunk released while mapped keeps its memory until it is unmapped (rule 4).
pub fn vmm03_chunk_released_while_mapped<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: VirtualMemory,
{
    let (dev, s, g) = setup(h)?;
    let range = dev.reserve(2 * g, 0, None)?;
    let c = dev.create_physical(g)?;
    let m = map_rw(&dev, range, g, c)?;
    let data = pattern(g, 3);
    dev.memcpy_h2d_async(m.at, &data, &s)?;
    dev.synchronize_stream(&s)?;
    dev.release_physical(c)?;
    let back = HostBuffer::new(g as usize);
    dev.memcpy_d2h_async(&back, m.at, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(back.to_vec() == data, "the mapping of a released chunk lost its bytes");
    dev.unmap(m)?;
    dev.release_reserved(range)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Misuse answered with errors: sizes that are not multiples of the granularity, a mapping
/// over a mapping, releasing a range still mapped, unmapping nothing, and (with
/// [`Capability::CheckedFree`]: the real runtimes read freed memory there) releasing a
/// chunk twice.
pub fn vmm04_misuse_answered<H: Harness>(h: &H) -> ScenarioResult
where
    H::Device: VirtualMemory,
{
    let (dev, s, g) = setup(h)?;
    let (param, drv) = (code::ACL_ERROR_RT_PARAM_INVALID, code::ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    let inv = ErrorKind::InvalidParam;
    expect_error(dev.reserve(g + g / 2, 0, None), inv, param, "reserve of 1.5 granules")?;
    expect_error(dev.create_physical(g / 2), inv, drv, "a chunk of half a granule")?;
    let range = dev.reserve(4 * g, 0, None)?;
    let c = dev.create_physical(2 * g)?;
    let m = map_rw(&dev, range, g, c)?;
    expect_error(dev.map(range.base, 2 * g, 0, c), inv, drv, "a mapping over a mapping")?;
    expect_error(dev.map(at(range, 3 * g)?, 2 * g, 0, c), inv, drv, "a mapping past the range's end")?;
    let still = dev.release_reserved(range);
    ensure!(still.as_ref().is_err_and(|e| e.kind() == inv), "releasing a range still mapped: {still:?}");
    expect_error(dev.unmap(Mapping { at: range.base, size: g }), inv, drv, "unmapping what is not mapped")?;
    // The mapping is still there and whole.
    let data = pattern(2 * g, 4);
    dev.memcpy_h2d_async(m.at, &data, &s)?;
    let back = HostBuffer::new(data.len());
    dev.memcpy_d2h_async(&back, m.at, &s)?;
    dev.synchronize_stream(&s)?;
    ensure!(back.to_vec() == data, "the mapping after the refused calls");
    dev.unmap(m)?;
    expect_error(dev.unmap(m), inv, drv, "unmapping twice")?;
    dev.release_physical(c)?;
    if h.supports(Capability::CheckedFree) {
        expect_error(dev.release_physical(c), inv, param, "releasing a chunk twice")?;
    }
    dev.release_reserved(range)?;
    dev.destroy_stream(&s)?;
    Ok(())
}
