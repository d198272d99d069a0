//! Virtual memory on the emulator (contract §14): reserved ranges, physical chunks backed
//! by real memory, mappings, access, the device's memory, and the checker's reports.

use mempool_emu::{CopySide, Emulator, Profile};
use mempool_hal::{
    Access, Device, DevicePtr, ErrorKind, Granularity, HostBuffer, Mapping, MemPool, PoolProps, Result, VirtualMemory,
    code,
};

const G: u64 = 2 << 20;

fn emu(profile: Profile) -> Emulator {
    Emulator::builder().device_memory(16 * G).profile(profile).build().expect("valid config")
}

/// `(kind, code)` of an error.
fn kc<T: std::fmt::Debug>(r: Result<T>) -> (ErrorKind, i32) {
    let e = r.expect_err("an error");
    (e.kind(), e.code())
}

#[test]
fn granularity_is_the_platforms() -> Result<()> {
    let emu = emu(Profile::Documented);
    assert_eq!(emu.granularity(Granularity::Minimum)?, G);
    assert_eq!(emu.granularity(Granularity::Recommended)?, G);
    Ok(())
}

#[test]
fn reserve_map_copy_unmap_release() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let r = emu.reserve(8 * G, 0, None)?;
    assert_eq!(r.base.addr() % G, 0, "aligned to the granularity");
    assert_eq!(emu.reserved_at(DevicePtr::from_addr(r.base.addr() + 5 * G)), Some(r));
    let c = emu.create_physical(2 * G)?;
    let m = emu.map(r.base, 2 * G, 0, c)?;
    assert_eq!(m, Mapping { at: r.base, size: 2 * G });
    assert_eq!(emu.mapping_at(DevicePtr::from_addr(r.base.addr() + G)), Some((m, c)));
    assert_eq!(emu.access_at(r.base), Some(Access::ReadWrite), "Ascend maps with read-write");
    assert!(emu.is_pool_address(r.base) && emu.is_device_memory(r.base, 2 * G));
    assert!(!emu.is_device_memory(r.base, 2 * G + 1), "past the mapping");
    let data: Vec<u8> = (0..2 * G).map(|i| (i % 251) as u8).collect();
    emu.memcpy_h2d_async(r.base, &data, &s)?;
    let out = HostBuffer::new(data.len());
    emu.memcpy_d2h_async(&out, r.base, &s)?;
    emu.synchronize_stream(&s)?;
    assert!(out.to_vec() == data);
    emu.unmap(m)?;
    assert_eq!(emu.mapping_at(r.base), None);
    emu.release_physical(c)?;
    emu.release_reserved(r)?;
    assert_eq!(emu.reserved_at(r.base), None);
    assert_eq!(emu.mem_info()?.free, 16 * G, "the chunk's memory is back");
    Ok(())
}

#[test]
fn a_chunk_mapped_twice_shows_the_same_bytes() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let r = emu.reserve(4 * G, 0, None)?;
    let c = emu.create_physical(G)?;
    let a = emu.map(r.base, G, 0, c)?;
    let b = emu.map(DevicePtr::from_addr(r.base.addr() + 3 * G), G, 0, c)?;
    emu.memset_async(a.at, 0x5a, 4096, &s)?;
    let out = HostBuffer::new(4096);
    emu.memcpy_d2h_async(&out, b.at, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), vec![0x5a; 4096]);
    // The host sees it too: device addresses are host addresses.
    // SAFETY: both mappings are read-write (Ascend) and nothing else writes them now.
    unsafe {
        *(b.at.addr() as *mut u8).add(7) = 9;
        assert_eq!(*(a.at.addr() as *const u8).add(7), 9);
    }
    emu.unmap(a)?;
    emu.unmap(b)?;
    emu.release_physical(c)?;
    emu.release_reserved(r)
}

#[test]
fn chunks_count_against_the_device() -> Result<()> {
    let emu = emu(Profile::Documented);
    let pool = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    let s = emu.create_stream()?;
    let p = pool.malloc_async(4 * G, &s)?;
    let big = emu.create_physical(12 * G)?;
    assert_eq!(emu.mem_info()?.free, 0);
    assert_eq!(kc(emu.create_physical(G)), (ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION));
    assert_eq!(pool.malloc_async(6 * G, &s).map_err(|e| e.kind()), Err(ErrorKind::OutOfMemory));
    emu.release_physical(big)?;
    assert_eq!(emu.mem_info()?.free, 12 * G);
    // An injected host failure: the same error, and nothing counted.
    emu.inject_commit_failures(1);
    assert_eq!(kc(emu.create_physical(G)), (ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION));
    assert_eq!(emu.mem_info()?.free, 12 * G);
    emu.release_physical(emu.create_physical(G)?)?;
    // SAFETY: `p` was allocated on `s` and nothing uses it.
    unsafe { pool.free_async(p, &s)? };
    Ok(())
}

#[test]
fn a_released_chunk_lives_until_its_last_unmapping() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let r = emu.reserve(2 * G, 0, None)?;
    let c = emu.create_physical(G)?;
    let m = emu.map(r.base, G, 0, c)?;
    emu.memset_async(m.at, 3, G, &s)?;
    emu.release_physical(c)?;
    assert_eq!(kc(emu.release_physical(c)), (ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID), "released");
    assert_eq!(emu.physical(c.handle), None);
    assert_eq!(emu.mem_info()?.free, 15 * G, "still mapped");
    let out = HostBuffer::new(16);
    emu.memcpy_d2h_async(&out, DevicePtr::from_addr(m.at.addr() + G - 16), &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), vec![3; 16]);
    emu.unmap(m)?;
    assert_eq!(emu.mem_info()?.free, 16 * G);
    emu.release_reserved(r)
}

#[test]
fn misuse_is_answered_with_codes() -> Result<()> {
    let emu = emu(Profile::Documented);
    let (p, d, acl) =
        (code::ACL_ERROR_RT_PARAM_INVALID, code::ACL_ERROR_RT_DRV_INTERNAL_ERROR, code::ACL_ERROR_INVALID_PARAM);
    let inv = ErrorKind::InvalidParam;
    assert_eq!(kc(emu.reserve(0, 0, None)), (inv, acl));
    assert_eq!(kc(emu.reserve(G + 4096, 0, None)), (inv, p));
    assert_eq!(kc(emu.reserve(G, 3 * G, None)), (inv, p), "alignment not a power of two");
    assert_eq!(kc(emu.create_physical(G / 2)), (inv, d));
    let r = emu.reserve(4 * G, 0, None)?;
    let c = emu.create_physical(2 * G)?;
    let at = |off: u64| DevicePtr::from_addr(r.base.addr() + off);
    assert_eq!(kc(emu.map(at(4096), G, 0, c)), (inv, d), "misaligned");
    assert_eq!(kc(emu.map(at(3 * G), 2 * G, 0, c)), (inv, d), "past the range");
    assert_eq!(kc(emu.map(at(0), 4 * G, 0, c)), (inv, d), "past the chunk");
    assert_eq!(kc(emu.map(at(0), G, G, c)), (inv, p), "offset");
    assert_eq!(kc(emu.map(DevicePtr::from_addr(G), G, 0, c)), (inv, d), "outside any range");
    let m = emu.map(at(G), 2 * G, 0, c)?;
    assert_eq!(kc(emu.map(at(0), 2 * G, 0, c)), (inv, d), "over a mapping");
    assert_eq!(kc(emu.release_reserved(r)), (inv, p), "still mapped");
    assert_eq!(kc(emu.unmap(Mapping { at: at(0), size: G })), (inv, d), "nothing mapped");
    assert_eq!(kc(emu.unmap(Mapping { at: at(G), size: G })), (inv, d), "part of a mapping");
    assert_eq!(kc(emu.set_access(at(G), 2 * G, Access::Read)), (ErrorKind::NotSupported, 207_000));
    emu.set_access(at(G), 2 * G, Access::ReadWrite)?;
    assert_eq!(kc(emu.set_access(at(0), 2 * G, Access::ReadWrite)), (inv, p), "not wholly mapped");
    assert_eq!(kc(emu.release_physical(mempool_hal::Physical { handle: 0xdead_beef, size: G })), (inv, p));
    emu.unmap(m)?;
    emu.release_physical(c)?;
    emu.release_reserved(r)?;
    assert_eq!(kc(emu.release_reserved(r)), (inv, p), "released twice");
    Ok(())
}

#[test]
fn cuda_maps_without_access_until_it_is_set() -> Result<()> {
    let emu = emu(Profile::Cuda);
    let s = emu.create_stream()?;
    let r = emu.reserve(4 * G, 0, None)?;
    let (c1, c2) = (emu.create_physical(G)?, emu.create_physical(G)?);
    let m1 = emu.map(r.base, G, 0, c1)?;
    let m2 = emu.map(DevicePtr::from_addr(r.base.addr() + G), G, 0, c2)?;
    assert_eq!((m1.at.addr() + G, m2.size), (m2.at.addr(), G));
    assert_eq!(emu.access_at(r.base), Some(Access::None));
    let e = emu.memset_async(r.base, 1, 64, &s).expect_err("no access yet");
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation);
    assert!(e.message().contains(&format!("{:#x}", r.base.addr())), "{e}");
    // One call over both mappings.
    emu.set_access(r.base, 2 * G, Access::Read)?;
    let e = emu.memset_async(r.base, 1, 64, &s).expect_err("read only");
    assert!(e.message().contains("Read"), "{e}");
    emu.set_access(r.base, 2 * G, Access::ReadWrite)?;
    // A copy spanning the two mappings.
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
    let across = DevicePtr::from_addr(r.base.addr() + G - 4096);
    emu.memcpy_h2d_async(across, &data, &s)?;
    let out = HostBuffer::new(data.len());
    emu.memcpy_d2h_async(&out, across, &s)?;
    emu.synchronize_stream(&s)?;
    assert!(out.to_vec() == data);
    // One unmapping of both.
    emu.unmap(Mapping { at: r.base, size: 2 * G })?;
    for c in [c1, c2] {
        emu.release_physical(c)?;
    }
    emu.release_reserved(r)
}

#[test]
fn unmapped_ranges_are_checker_reports_never_faults() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let r = emu.reserve(4 * G, 0, None)?;
    let c = emu.create_physical(G)?;
    let m = emu.map(r.base, G, 0, c)?;
    let past = DevicePtr::from_addr(r.base.addr() + G - 16);
    let e = emu.memcpy_h2d_async(past, &[1; 32], &s).expect_err("runs into the unmapped part");
    assert_eq!((e.kind(), e.code()), (ErrorKind::StreamOrderViolation, code::ACL_ERROR_RT_PARAM_INVALID));
    assert!(e.message().contains(&format!("{:#x}", r.base.addr() + G)), "{e}");
    let far = DevicePtr::from_addr(r.base.addr() + 3 * G);
    assert!(emu.memcpy_d2d_async(far, m.at, 16, &s).is_err());
    let mut host = [0u8; 16];
    // SAFETY: `host` is valid for 16 bytes for the duration of the call.
    let e =
        unsafe { emu.memcpy_raw(CopySide::Host(host.as_mut_ptr()), CopySide::Device(far), 16) }.expect_err("unmapped");
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation);
    assert!(emu.memset_now(far, 0, 16).is_err());
    emu.unmap(m)?;
    assert!(emu.memset_async(m.at, 0, 16, &s).is_err(), "queued after the unmapping");
    emu.synchronize_stream(&s)?;
    // Without the checker: invalid pointers.
    let plain = Emulator::builder().checker(false).build()?;
    let r2 = plain.reserve(G, 0, None)?;
    let s2 = plain.create_stream()?;
    assert_eq!(
        kc(plain.memset_async(r2.base, 0, 16, &s2)),
        (ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID)
    );
    plain.release_reserved(r2)?;
    emu.release_physical(c)?;
    emu.release_reserved(r)
}

#[test]
fn a_free_hint_is_honoured() -> Result<()> {
    let emu = emu(Profile::Documented);
    // Find free address space: map some, give it back, and ask for its aligned middle.
    // SAFETY: a fresh inaccessible mapping at an address of the kernel's choosing.
    let probe = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            (8 * G) as usize,
            rustix::mm::ProtFlags::empty(),
            rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::NORESERVE,
        )
    }
    .expect("address space");
    // SAFETY: the mapping just made, which nothing refers to.
    unsafe { rustix::mm::munmap(probe, (8 * G) as usize) }.expect("munmap");
    let hint = DevicePtr::from_addr((probe as u64).next_multiple_of(G) + 2 * G);
    let r = emu.reserve(2 * G, 0, Some(hint))?;
    assert_eq!(r.base, hint, "a free hint");
    let taken = emu.reserve(2 * G, 0, Some(hint))?;
    assert_ne!(taken.base, hint, "a taken hint: anywhere else");
    let e = emu.reserve(G, 0, Some(DevicePtr::from_addr(hint.addr() + 4096))).expect_err("Ascend: misaligned");
    assert_eq!(e.kind(), ErrorKind::InvalidParam);
    let cuda = self::emu(Profile::Cuda);
    let anywhere = cuda.reserve(G, 0, Some(DevicePtr::from_addr(hint.addr() + 4096)))?;
    assert_eq!(anywhere.base.addr() % G, 0, "CUDA: a misaligned hint is only a hint");
    cuda.release_reserved(anywhere)?;
    emu.release_reserved(r)?;
    emu.release_reserved(taken)
}

/// The permissions `/proc/self/maps` gives the page at `addr` ("rw-s", "---p", ...).
fn perms(addr: u64) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    maps.lines()
        .find_map(|l| {
            let (range, rest) = l.split_once(' ')?;
            let (lo, hi) = range.split_once('-')?;
            let (lo, hi) = (u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?);
            (lo <= addr && addr < hi).then(|| rest[..4].to_string())
        })
        .expect("the address is mapped")
}

#[test]
fn host_protections_follow_mappings_access_and_drained_unmappings() -> Result<()> {
    let emu = Emulator::builder().device_memory(16 * G).profile(Profile::Cuda).deferred().build()?;
    let s = emu.create_stream()?;
    let r = emu.reserve(4 * G, 0, None)?;
    assert_eq!(perms(r.base.addr()), "---p", "reserved, nothing behind it");
    let c = emu.create_physical(G)?;
    let m = emu.map(r.base, G, 0, c)?;
    assert_eq!(perms(r.base.addr()), "---s", "CUDA: mapped without access");
    emu.set_access(r.base, G, Access::Read)?;
    assert_eq!(perms(r.base.addr()), "r--s");
    emu.set_access(r.base, G, Access::ReadWrite)?;
    assert_eq!(perms(r.base.addr()), "rw-s");
    assert_eq!(perms(r.base.addr() + G), "---p", "the rest of the range");
    // Deferred: a copy queued before the unmapping has not run; the pages stay.
    emu.memset_async(r.base, 1, 64, &s)?;
    emu.unmap(m)?;
    assert_eq!(perms(r.base.addr()), "rw-s", "kept for the queued work");
    emu.synchronize_stream(&s)?;
    assert_eq!(perms(r.base.addr()), "---p", "drained: inaccessible reservation again");
    // With nothing queued, an unmapping takes effect at once.
    let m = emu.map(r.base, G, 0, c)?;
    emu.unmap(m)?;
    assert_eq!(perms(r.base.addr()), "---p");
    emu.release_physical(c)?;
    emu.release_reserved(r)
}

#[test]
fn a_copy_queued_before_an_unmapping_reads_the_old_chunk_after_a_remap() -> Result<()> {
    let emu = Emulator::builder().device_memory(16 * G).deferred().build()?;
    let s = emu.create_stream()?;
    let r = emu.reserve(2 * G, 0, None)?;
    let (old, new) = (emu.create_physical(G)?, emu.create_physical(G)?);
    let m = emu.map(r.base, G, 0, old)?;
    emu.memset_now(r.base, 0xaa, G)?;
    let out = HostBuffer::new(4096);
    emu.memcpy_d2h_async(&out, DevicePtr::from_addr(r.base.addr() + G - 4096), &s)?;
    emu.unmap(m)?;
    emu.release_physical(old)?;
    let m = emu.map(r.base, G, 0, new)?;
    emu.memset_now(r.base, 0xbb, G)?;
    assert_eq!(emu.mem_info()?.free, 14 * G, "the old chunk is held by the queued copy");
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), vec![0xaa; 4096], "the chunk the copy was queued on");
    assert_eq!(emu.mem_info()?.free, 15 * G);
    // SAFETY: mapped read-write (Ascend), nothing else touches it now.
    assert_eq!(unsafe { *(r.base.addr() as *const u8) }, 0xbb, "the draining did not touch the new mapping");
    emu.unmap(m)?;
    emu.release_physical(new)?;
    emu.release_reserved(r)
}

#[test]
fn kernels_read_and_write_across_mappings() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let r = emu.reserve(2 * G, 0, None)?;
    let (c1, c2) = (emu.create_physical(G)?, emu.create_physical(G)?);
    emu.map(r.base, G, 0, c1)?;
    emu.map(DevicePtr::from_addr(r.base.addr() + G), G, 0, c2)?;
    let x = DevicePtr::from_addr(r.base.addr() + G - 100);
    emu.launch_kernel(&s, &[mempool_emu::KernelAccess::Write(x, 200)], move |mem| {
        let data: Vec<u8> = (0..200u8).collect();
        mem.write(x, &data)?;
        assert_eq!(mem.read(x, 200)?, data);
        Ok(())
    })?;
    let out = HostBuffer::new(200);
    emu.memcpy_d2h_async(&out, x, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), (0..200u8).collect::<Vec<_>>());
    emu.unmap(Mapping { at: r.base, size: 2 * G })?;
    assert!(emu.launch_kernel(&s, &[mempool_emu::KernelAccess::Read(x, 1)], |_| Ok(())).is_err());
    emu.release_physical(c1)?;
    emu.release_physical(c2)?;
    emu.release_reserved(r)
}

#[test]
fn hostile_arguments_are_errors_not_faults() -> Result<()> {
    let emu = emu(Profile::Documented);
    let s = emu.create_stream()?;
    let huge = u64::MAX / G * G;
    assert_eq!(kc(emu.reserve(huge, 0, None)), (ErrorKind::OutOfMemory, code::ACL_ERROR_RT_MEMORY_ALLOCATION));
    assert!(emu.reserve(G, 1 << 63, None).is_err());
    assert!(emu.reserve(G, 0, Some(DevicePtr::from_addr(huge))).is_ok_and(|r| emu.release_reserved(r).is_ok()));
    assert_eq!(kc(emu.create_physical(huge)).0, ErrorKind::OutOfMemory);
    let r = emu.reserve(2 * G, 0, None)?;
    let c = emu.create_physical(G)?;
    assert!(emu.map(r.base, huge, 0, c).is_err());
    assert!(emu.map(DevicePtr::from_addr(huge), G, 0, c).is_err());
    assert!(emu.map(r.base, G, 0, mempool_hal::Physical { handle: u64::MAX, size: G }).is_err());
    let m = emu.map(r.base, G, 0, c)?;
    assert!(emu.unmap(Mapping { at: r.base, size: u64::MAX }).is_err());
    assert!(emu.unmap(Mapping { at: DevicePtr::from_addr(u64::MAX), size: G }).is_err());
    assert!(emu.set_access(r.base, huge, Access::ReadWrite).is_err());
    assert!(emu.set_access(DevicePtr::from_addr(huge), G, Access::ReadWrite).is_err());
    assert!(emu.memset_async(DevicePtr::from_addr(r.base.addr() + 1), 0, u64::MAX, &s).is_err());
    assert!(emu.memcpy_d2d_async(r.base, DevicePtr::from_addr(r.base.addr() + 8), u64::MAX - 4, &s).is_err());
    assert!(emu.release_reserved(mempool_hal::Reserved { base: DevicePtr::from_addr(8), size: G }).is_err());
    assert!(emu.release_reserved(mempool_hal::Reserved { base: r.base, size: G }).is_err(), "the wrong size");
    assert!(emu.retain_physical_at(DevicePtr::from_addr(r.base.addr() + G)).is_err(), "not mapped");
    emu.synchronize_stream(&s)?;
    emu.unmap(m)?;
    emu.release_physical(c)?;
    emu.release_reserved(r)
}

#[test]
fn chunks_belong_to_their_device() -> Result<()> {
    let emu = Emulator::builder().devices(2).device_memory(4 * G).build()?;
    let one = emu.device(1)?;
    let c = one.create_physical(G)?;
    assert_eq!((emu.mem_info()?.free, one.mem_info()?.free), (4 * G, 3 * G));
    assert_eq!(emu.physical(c.handle), Some((c, 1)));
    let r = emu.reserve(G, 0, None)?;
    assert_eq!(kc(emu.map(r.base, G, 0, c)), (ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(kc(emu.release_physical(c)).0, ErrorKind::InvalidParam);
    let m = one.map(r.base, G, 0, c)?;
    // Retained at an address: the same handle, one more reference.
    assert_eq!(one.retain_physical_at(DevicePtr::from_addr(r.base.addr() + 64))?, c);
    one.release_physical(c)?;
    one.release_physical(c)?;
    assert_eq!(one.physical(c.handle), None);
    assert_eq!(one.retain_physical_at(r.base)?, c, "released while mapped: live again");
    one.release_physical(c)?;
    one.unmap(m)?;
    assert_eq!(one.mem_info()?.free, 4 * G);
    emu.release_reserved(r)
}

#[test]
fn threads_grow_and_shrink_their_own_ranges_at_once() -> Result<()> {
    let emu = Emulator::builder().device_memory(64 * G).build()?;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u8)
            .map(|t| {
                let emu = emu.clone();
                scope.spawn(move || -> Result<()> {
                    let s = emu.create_stream()?;
                    let r = emu.reserve(16 * G, 0, None)?;
                    let mut maps = Vec::new();
                    for i in 0..8 {
                        let c = emu.create_physical(G)?;
                        let m = emu.map(DevicePtr::from_addr(r.base.addr() + i * G), G, 0, c)?;
                        emu.memset_async(m.at, t * 16 + i as u8, G, &s)?;
                        maps.push((c, m));
                    }
                    let out = HostBuffer::new((8 * G) as usize);
                    emu.memcpy_d2h_async(&out, r.base, &s)?;
                    for (c, m) in maps {
                        emu.unmap(m)?;
                        emu.release_physical(c)?;
                    }
                    emu.release_reserved(r)?;
                    emu.synchronize_stream(&s)?;
                    let bytes = out.to_vec();
                    for i in 0..8u64 {
                        let chunk = &bytes[(i * G) as usize..((i + 1) * G) as usize];
                        assert!(chunk.iter().all(|&b| b == t * 16 + i as u8), "thread {t}, chunk {i}");
                    }
                    emu.destroy_stream(&s)
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().expect("no panic"))
    })?;
    // An unmapping may have left its last step on another thread's stream: drain them all.
    emu.synchronize_device()?;
    assert_eq!(emu.mem_info()?.free, 64 * G, "every chunk went back");
    Ok(())
}
