//! Rows for host registration (contract §15): `cuMemHostRegister_v2`, its legacy name
//! `cuMemHostRegister`, `cuMemHostUnregister`, `cuMemHostGetDevicePointer_v2`. A row that
//! registers unregisters before it returns, so every row starts from no registration.

use super::*;

const ALREADY: CUresult = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
const NOT_REGISTERED: CUresult = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;

/// Both exported names of the register call.
type Register = unsafe extern "C" fn(*mut c_void, usize, std::ffi::c_uint) -> CUresult;
const REGISTER: [(&str, Register); 2] =
    [("cuMemHostRegister_v2", cuMemHostRegister_v2), ("cuMemHostRegister", cuMemHostRegister)];

/// Registers the fixture's heap buffer, runs `call`, and unregisters it; `call`'s code.
fn with_buf_registered(fx: &Fx, call: impl FnOnce(&Fx) -> CUresult) -> CUresult {
    // SAFETY: the buffer is HOST_LEN bytes of heap memory the test owns for the whole run;
    // no copy is queued on it.
    unsafe {
        check(cuMemHostRegister_v2(fx.buf as *mut c_void, HOST_LEN, 0), "registering the buffer");
        let rc = call(fx);
        check(cuMemHostUnregister(fx.buf as *mut c_void), "unregistering the buffer");
        rc
    }
}

pub(super) fn host_register_rows(t: &mut Table) {
    for (name, register) in REGISTER {
        t.add(name, "null p", VALUE, move |_| {
            // SAFETY: refused before anything is recorded.
            unsafe { register(null_mut(), 16, 0) }
        });
        t.add(name, "bytesize 0", VALUE, move |f| {
            // SAFETY: refused before anything is recorded.
            unsafe { register(f.buf as *mut c_void, 0, 0) }
        });
        for flags in [0x10, 0x8000_0000, u32::MAX] {
            t.add(name, format!("Flags {flags:#x}"), VALUE, move |f| {
                // SAFETY: refused before anything is recorded.
                unsafe { register(f.buf as *mut c_void, 16, flags) }
            });
        }
        t.add(name, "CU_MEMHOSTREGISTER_IOMEMORY", SUPPORT, move |f| {
            // SAFETY: refused before anything is recorded.
            unsafe { register(f.buf as *mut c_void, 16, CU_MEMHOSTREGISTER_IOMEMORY) }
        });
        t.add(name, "bytesize SIZE_MAX (wraps the address space)", VALUE, move |f| {
            // SAFETY: refused before anything is recorded.
            unsafe { register(f.buf as *mut c_void, usize::MAX, 0) }
        });
        t.add(name, "device memory", VALUE, move |f| {
            // SAFETY: device memory is refused before anything is recorded.
            unsafe { register(f.a as *mut c_void, 16, 0) }
        });
        t.add(name, "cuMemAllocHost memory (page-locked already)", ALREADY, move |f| {
            // SAFETY: refused: it overlaps the library's own page-locked memory.
            unsafe { register(f.host as *mut c_void, 16, 0) }
        });
        t.add(name, "a range overlapping a registered one", ALREADY, move |f| {
            // SAFETY: refused: it overlaps the registered buffer.
            with_buf_registered(f, |f| unsafe { register((f.buf + HOST_LEN - 1) as *mut c_void, 2, 0) })
        });
        t.add(name, "the heap buffer, every supported flag, then unregistered", OK, move |f| {
            let flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_READ_ONLY;
            // SAFETY: the buffer is the test's for the whole run; unregistered at once.
            unsafe {
                let rc = register(f.buf as *mut c_void, HOST_LEN, flags);
                check(cuMemHostUnregister(f.buf as *mut c_void), "unregistering it");
                rc
            }
        });
        t.fresh(name, "without a current context", CONTEXT, move |f| {
            // SAFETY: refused before anything is recorded.
            unsafe { register(f.buf as *mut c_void, 16, 0) }
        });
    }

    const U: &str = "cuMemHostUnregister";
    type HostAddr = fn(&Fx) -> usize;
    let never: [(&str, HostAddr, CUresult); 7] = [
        ("null", |_| 0, VALUE),
        ("garbage 0x1234", |_| 0x1234, NOT_REGISTERED),
        ("garbage usize::MAX", |_| usize::MAX, NOT_REGISTERED),
        ("the heap buffer, never registered", |f| f.buf, NOT_REGISTERED),
        ("device memory", |f| f.a as usize, NOT_REGISTERED),
        ("cuMemAllocHost memory", |f| f.host, VALUE),
        ("an interior pointer of cuMemAllocHost memory", |f| f.host + 8, VALUE),
    ];
    for (input, addr, want) in never {
        t.add(U, input, want, move |f| {
            // SAFETY: the address is only looked up.
            unsafe { cuMemHostUnregister(addr(f) as *mut c_void) }
        });
    }
    t.add(U, "an interior pointer of a registered range", VALUE, |f| {
        // SAFETY: the address is only looked up.
        with_buf_registered(f, |f| unsafe { cuMemHostUnregister((f.buf + 16) as *mut c_void) })
    });
    t.add(U, "a range unregistered already", NOT_REGISTERED, |f| {
        // SAFETY: the buffer is the test's; registered, unregistered, then looked up.
        unsafe {
            check(cuMemHostRegister_v2(f.buf as *mut c_void, 64, 0), "registering");
            check(cuMemHostUnregister(f.buf as *mut c_void), "unregistering");
            cuMemHostUnregister(f.buf as *mut c_void)
        }
    });
    t.add(U, "a registered range, from a thread without a current context (needs none)", OK, |f| {
        let ptr = f.buf;
        // SAFETY: the buffer is the test's; registered with this thread's context, then
        // unregistered by a thread that has none.
        unsafe { check(cuMemHostRegister_v2(ptr as *mut c_void, 64, 0), "registering") };
        std::thread::spawn(move || {
            // SAFETY: the address is only looked up.
            unsafe { cuMemHostUnregister(ptr as *mut c_void) }
        })
        .join()
        .expect("the unregistering thread")
    });

    const G: &str = "cuMemHostGetDevicePointer_v2";
    t.add(G, "null pdptr", VALUE, |f| {
        // SAFETY: refused before any write.
        unsafe { cuMemHostGetDevicePointer_v2(null_mut(), f.host as *mut c_void, 0) }
    });
    type Lookup = (&'static str, HostAddr, std::ffi::c_uint);
    let bad: [Lookup; 5] = [
        ("null p", |_| 0, 0),
        ("Flags 1", |f| f.host, 1),
        ("the heap buffer, not registered", |f| f.buf, 0),
        ("device memory", |f| f.a as usize, 0),
        ("garbage 0x1234", |_| 0x1234, 0),
    ];
    for (input, addr, flags) in bad {
        t.add(G, input, VALUE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer; the address is only looked up.
            untouched(unsafe { cuMemHostGetDevicePointer_v2(&mut d, addr(f) as *mut c_void, flags) }, d as usize)
        });
    }
    t.add(G, "an interior pointer of cuMemAllocHost memory: itself", OK, |f| {
        let mut d: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { cuMemHostGetDevicePointer_v2(&mut d, (f.host + 8) as *mut c_void, 0) };
        assert_eq!(d as usize, f.host + 8, "the device address is the host address");
        rc
    });
    t.add(G, "an interior pointer of a registered range: itself", OK, |f| {
        with_buf_registered(f, |f| {
            let mut d: CUdeviceptr = 0;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuMemHostGetDevicePointer_v2(&mut d, (f.buf + 8) as *mut c_void, 0) };
            assert_eq!(d as usize, f.buf + 8, "the device address is the host address");
            rc
        })
    });
    t.fresh(G, "without a current context", CONTEXT, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuMemHostGetDevicePointer_v2(&mut d, f.host as *mut c_void, 0) }, d as usize)
    });
}
