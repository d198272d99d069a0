//! [`HostRegistration`] for the [`Emulator`], and the lookup the drop-in libraries use
//! ([`Emulator::registered_host`]).

use crate::cabi::HostRange;
use crate::device::Emulator;
use mempool_hal::{DevicePtr, Error, ErrorKind, HostRegisterFlags, HostRegistration, Result, code};

impl Emulator {
    /// Where `[addr, addr + len)` lies among the host ranges registered on this platform
    /// ([`HostRegistration::register_host`]): inside one ([`HostRange::Pinned`], with a
    /// block that keeps nothing allocated: the memory is the program's), starting inside one
    /// and running past its end ([`HostRange::Overrun`]), or in none
    /// ([`HostRange::Pageable`]). The drop-in libraries treat the first as page-locked
    /// memory.
    pub fn registered_host(&self, addr: usize, len: usize) -> HostRange {
        match self.platform.registry.hosts.find(addr, len) {
            None => HostRange::Pageable,
            Some(f) if f.overrun => HostRange::Overrun { base: f.block.addr(), size: f.block.size() },
            Some(f) => HostRange::Pinned(f.block),
        }
    }
}

impl HostRegistration for Emulator {
    /// Registers `[ptr, ptr + len)` and answers `ptr` as its device address.
    ///
    /// # Errors
    ///
    /// A null `ptr` or `len` 0: `InvalidParam` (100000); a range that wraps the address
    /// space or is larger than the host can address, or that lies in device memory (a
    /// pool's): `InvalidParam` (107000); a range that overlaps a registered one:
    /// `InvalidParam` (507910).
    #[allow(unsafe_code)]
    unsafe fn register_host(&self, ptr: *mut u8, len: usize, flags: HostRegisterFlags) -> Result<DevicePtr> {
        const OP: &str = "register_host";
        if ptr.is_null() {
            return Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, "null host pointer"));
        }
        if len == 0 {
            return Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        let addr = ptr as usize;
        let layout = addr
            .checked_add(len)
            .and_then(|_| std::alloc::Layout::from_size_align(len, 1).ok())
            .ok_or_else(|| Error::invalid_param(OP, format!("[{addr:#x}, +{len}) is no host range")))?;
        if self.is_pool_address(DevicePtr::from_addr(addr as u64)) {
            return Err(Error::invalid_param(OP, format!("{ptr:p} is device memory, not host memory")));
        }
        self.platform.registry.hosts.insert(addr, layout, flags.read_only).map_err(|(b, n)| {
            Error::new(
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED,
                OP,
                format!("[{addr:#x}, +{len}) overlaps the registered range [{b:#x}, +{n})"),
            )
        })?;
        Ok(DevicePtr::from_addr(addr as u64))
    }

    /// Unregisters the range registered at `ptr`; a copy queued on it still runs (module
    /// docs).
    ///
    /// # Errors
    ///
    /// A null `ptr`: `InvalidParam` (100000); an address that is not the start of a
    /// registered range (never registered, interior, unregistered already):
    /// `InvalidPointer` (507911).
    fn unregister_host(&self, ptr: *mut u8) -> Result<()> {
        const OP: &str = "unregister_host";
        if ptr.is_null() {
            return Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, OP, "null host pointer"));
        }
        self.platform.registry.hosts.remove(ptr as usize).map_err(|inside| {
            let why = match inside {
                Some(b) => format!("{ptr:p} lies inside the range registered at {b:#x}, not at its start"),
                None => format!("{ptr:p} is not the start of a registered host range"),
            };
            Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED, OP, why)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::HostRegistrations;

    #[test]
    fn the_table_refuses_overlap_and_unregisters_by_start_only() {
        let t = HostRegistrations::default();
        let l = |n| std::alloc::Layout::from_size_align(n, 1).expect("layout");
        assert_eq!(t.insert(0x1000, l(0x100), false), Ok(()));
        assert_eq!(t.insert(0x1000, l(0x100), false), Err((0x1000, 0x100)), "the same range");
        assert_eq!(t.insert(0x10ff, l(1), false), Err((0x1000, 0x100)), "its last byte");
        assert_eq!(t.insert(0x0f00, l(0x101), false), Err((0x1000, 0x100)), "its first byte");
        assert_eq!(t.insert(0x0800, l(0x1000), false), Err((0x1000, 0x100)), "around it");
        assert_eq!(t.insert(0x1100, l(0x10), true), Ok(()), "adjacent, sharing a page");
        assert_eq!(t.insert(0x0f00, l(0x100), false), Ok(()), "adjacent below");
        let f = t.find(0x1100, 0x10).expect("registered");
        assert!(f.read_only && !f.overrun);
        assert!(t.find(0x10f0, 0x20).is_some_and(|f| f.overrun && f.block.addr() == 0x1000));
        assert!(t.find(0x1110, 1).is_none());
        assert_eq!(t.remove(0x1010), Err(Some(0x1000)), "interior");
        assert_eq!(t.remove(0x5000), Err(None));
        assert_eq!(t.remove(0x1000), Ok(()));
        assert_eq!(t.remove(0x1000), Err(None), "twice");
        assert!(t.find(0x1000, 1).is_none());
    }
}

#[cfg(test)]
mod emulator_tests {
    use crate::config::ExecutionMode;
    use crate::device::Emulator;
    use mempool_hal::{Device, ErrorKind, HostBuffer, HostRegisterFlags, HostRegistration, MemPool, PoolProps};

    fn deferred() -> (Emulator, crate::EmuStream, crate::EmuPool) {
        let emu = Emulator::builder().mode(ExecutionMode::Deferred).build().expect("emulator");
        let s = emu.create_stream().expect("stream");
        let pool = emu.create_pool(&PoolProps::builder().max_size(64 << 20).build()).expect("pool");
        (emu, s, pool)
    }

    #[test]
    fn copies_through_a_registered_range_are_queued_both_ways() {
        let (emu, s, pool) = deferred();
        let mut host = vec![7u8; 4096];
        // SAFETY: `host` outlives the registration and every copy on it (run below).
        let d = unsafe { emu.register_host(host.as_mut_ptr(), host.len(), HostRegisterFlags::default()) }
            .expect("register");
        assert_eq!(d.addr(), host.as_ptr() as u64, "the device address is the pointer itself");
        let dev = pool.malloc_async(4096, &s).expect("malloc");
        emu.memset_async(dev, 0xAB, 4096, &s).expect("memset");
        emu.memcpy_d2d_async(d, dev, 4096, &s).expect("device to registered");
        assert!(host.iter().all(|&b| b == 7), "queued, not run: the copy is asynchronous");
        emu.run_pending(&s).expect("run");
        assert!(host.iter().all(|&b| b == 0xAB));
        host[..4].copy_from_slice(&[1, 2, 3, 4]);
        emu.memcpy_d2d_async(dev, d, 4096, &s).expect("registered to device");
        let out = HostBuffer::new(4);
        emu.memcpy_d2h_async(&out, dev, &s).expect("read back");
        emu.synchronize_stream(&s).expect("sync");
        assert_eq!(out.to_vec(), [1, 2, 3, 4]);
        emu.unregister_host(host.as_mut_ptr()).expect("unregister");
        let e = emu.memcpy_d2d_async(d, dev, 16, &s).expect_err("pageable again: no device address");
        assert_eq!(e.kind(), ErrorKind::InvalidPointer);
        pool.free(dev, &s).expect("free");
    }

    #[test]
    fn unregistering_under_a_queued_copy_leaves_the_copy_its_bytes() {
        let (emu, s, pool) = deferred();
        let mut host = vec![0u8; 256];
        // SAFETY: `host` outlives the registration and the queued copy (run below).
        let d = unsafe { emu.register_host(host.as_mut_ptr(), host.len(), HostRegisterFlags::default()) }
            .expect("register");
        let dev = pool.malloc_async(256, &s).expect("malloc");
        emu.memset_async(dev, 0x5A, 256, &s).expect("memset");
        emu.memcpy_d2d_async(d, dev, 256, &s).expect("queued copy");
        emu.unregister_host(host.as_mut_ptr()).expect("unregistered at once");
        emu.synchronize_stream(&s).expect("the copy runs");
        assert!(host.iter().all(|&b| b == 0x5A));
        pool.free(dev, &s).expect("free");
    }

    #[test]
    fn misuse_is_answered_with_the_runtime_codes() {
        let (emu, s, pool) = deferred();
        let mut host = vec![0u8; 8192];
        let p = host.as_mut_ptr();
        let ro = HostRegisterFlags { read_only: true };
        // SAFETY: every range lies in `host`, which outlives the registrations.
        unsafe {
            assert_eq!(emu.register_host(std::ptr::null_mut(), 8, ro).expect_err("null").code(), 100_000);
            assert_eq!(emu.register_host(p, 0, ro).expect_err("empty").code(), 100_000);
            assert_eq!(emu.register_host(p, usize::MAX, ro).expect_err("wraps").code(), 107_000);
            emu.register_host(p, 4096, ro).expect("read-only");
            for (at, n) in [(0, 4096), (100, 8), (4095, 2)] {
                let e = emu.register_host(p.add(at), n, ro).expect_err("overlap");
                assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidParam, 507_910), "{at} {n}");
            }
            emu.register_host(p.add(4096), 4096, HostRegisterFlags::default()).expect("adjacent");
        }
        let dev = pool.malloc_async(4096, &s).expect("malloc");
        // SAFETY: a device range is refused before anything is registered.
        let e = unsafe { emu.register_host(dev.addr() as *mut u8, 64, ro) }.expect_err("device memory");
        assert_eq!(e.code(), 107_000);
        let d = mempool_hal::DevicePtr::from_addr(p as u64);
        emu.memcpy_d2d_async(dev, d, 4096, &s).expect("a read-only range may be read");
        assert_eq!(emu.memcpy_d2d_async(d, dev, 64, &s).expect_err("written").code(), 107_000);
        assert_eq!(emu.memcpy_d2d_async(dev, d, 4097 + 4096, &s).expect_err("past the end").code(), 107_000);
        for q in [p.wrapping_add(1), p.wrapping_add(8192)] {
            let e = emu.unregister_host(q).expect_err("not a start");
            assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidPointer, 507_911));
        }
        assert_eq!(emu.unregister_host(std::ptr::null_mut()).expect_err("null").code(), 100_000);
        emu.unregister_host(p).expect("unregister");
        assert_eq!(emu.unregister_host(p).expect_err("twice").code(), 507_911);
        emu.unregister_host(p.wrapping_add(4096)).expect("the other");
        emu.synchronize_stream(&s).expect("sync");
        pool.free(dev, &s).expect("free");
        drop(host);
    }
}
