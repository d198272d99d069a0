//! Rows for host registration (contract §15): `aclrtHostRegister`, `aclrtHostRegisterV2`,
//! `aclrtHostUnregister`. A row that registers unregisters before it returns, so every
//! row starts from no registration.

use super::*;

const ALREADY: aclError = code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED;
const NOT_REGISTERED: aclError = code::ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED;

/// Registers `BUF_LEN` bytes of the fixture's buffer (V2, MAPPED), runs `call`, and
/// unregisters the buffer again; `call`'s code.
fn with_buf_registered(fx: &Fx, call: impl FnOnce(&Fx) -> aclError) -> aclError {
    // SAFETY: the buffer is BUF_LEN bytes of heap memory the test owns for the whole run;
    // no copy is queued on it.
    unsafe {
        check(aclrtHostRegisterV2(sv(fx.buf), BUF_LEN as u64, ACL_HOST_REG_MAPPED), "registering the buffer");
        let rc = call(fx);
        check(aclrtHostUnregister(sv(fx.buf)), "unregistering the buffer");
        rc
    }
}

pub(super) fn host_register_rows(t: &mut Table) {
    const R: &str = "aclrtHostRegister";
    t.add(R, "null ptr", PARAM, |_| {
        let mut d = SENTINEL as *mut c_void;
        // SAFETY: refused before anything is read or written.
        untouched(unsafe { aclrtHostRegister(null_mut(), 16, 0, &mut d) }, d as usize)
    });
    t.add(R, "null devPtr", PARAM, |f| {
        // SAFETY: refused before anything is written.
        unsafe { aclrtHostRegister(sv(f.buf), 16, 0, null_mut()) }
    });
    t.add(R, "size 0", PARAM, |f| {
        let mut d = SENTINEL as *mut c_void;
        // SAFETY: refused before anything is recorded.
        untouched(unsafe { aclrtHostRegister(sv(f.buf), 0, 0, &mut d) }, d as usize)
    });
    for ty in [1, 2, 0x10, -1] {
        t.add(R, format!("type {ty:#x} (bits other than IOMEMORY and READONLY)"), FEATURE, move |f| {
            let mut d = SENTINEL as *mut c_void;
            // SAFETY: refused before anything is recorded.
            untouched(unsafe { aclrtHostRegister(sv(f.buf), 16, ty, &mut d) }, d as usize)
        });
    }
    t.add(R, "size u64::MAX (wraps the address space)", RT_PARAM, |f| {
        let mut d = SENTINEL as *mut c_void;
        // SAFETY: refused before anything is recorded.
        untouched(unsafe { aclrtHostRegister(sv(f.buf), u64::MAX, 0, &mut d) }, d as usize)
    });
    for (input, p) in [("a live pool allocation", Ptr::A(0)), ("aclrtMalloc memory", Ptr::D(0))] {
        t.add(R, format!("{input} (device memory)"), RT_PARAM, move |f| {
            let mut d = SENTINEL as *mut c_void;
            // SAFETY: device memory is refused before anything is recorded.
            untouched(unsafe { aclrtHostRegister(sv(f.ptr(p)), 16, 0, &mut d) }, d as usize)
        });
    }
    t.add(R, "aclrtMallocHost memory (page-locked already)", ALREADY, |f| {
        let mut d = SENTINEL as *mut c_void;
        // SAFETY: refused: it overlaps the library's own page-locked memory.
        untouched(unsafe { aclrtHostRegister(sv(f.ptr(Ptr::Host(0))), 16, 0, &mut d) }, d as usize)
    });
    t.add(R, "a range overlapping a registered one", ALREADY, |f| {
        with_buf_registered(f, |f| {
            let mut d = SENTINEL as *mut c_void;
            // SAFETY: refused: it overlaps the registered buffer.
            untouched(unsafe { aclrtHostRegister(sv(f.buf + 8), 16, 0, &mut d) }, d as usize)
        })
    });
    t.add(R, "the heap buffer, mapped read-only, then unregistered", OK, |f| {
        let mut d: *mut c_void = null_mut();
        // SAFETY: the buffer is the test's for the whole run; unregistered at once.
        unsafe {
            let rc = aclrtHostRegister(sv(f.buf), BUF_LEN as u64, ACL_HOST_REGISTER_READONLY, &mut d);
            assert_eq!(d as usize, f.buf, "the device address is the host address");
            check(aclrtHostUnregister(sv(f.buf)), "unregistering it");
            rc
        }
    });
    t.fresh(R, "without a current device", NO_CONTEXT, |f| {
        let mut d = SENTINEL as *mut c_void;
        // SAFETY: refused before anything is recorded.
        untouched(unsafe { aclrtHostRegister(sv(f.buf), 16, 0, &mut d) }, d as usize)
    });

    const V2: &str = "aclrtHostRegisterV2";
    t.add(V2, "null ptr", PARAM, |_| {
        // SAFETY: refused before anything is read.
        unsafe { aclrtHostRegisterV2(null_mut(), 16, ACL_HOST_REG_MAPPED) }
    });
    t.add(V2, "size 0", PARAM, |f| {
        // SAFETY: refused before anything is recorded.
        unsafe { aclrtHostRegisterV2(sv(f.buf), 0, ACL_HOST_REG_MAPPED) }
    });
    for flag in [0, 1, 0x20, ACL_HOST_REG_MAPPED | 0x100, u32::MAX] {
        t.add(V2, format!("flag {flag:#x}"), RT_PARAM, move |f| {
            // SAFETY: refused before anything is recorded.
            unsafe { aclrtHostRegisterV2(sv(f.buf), 16, flag) }
        });
    }
    t.add(V2, "size u64::MAX (wraps the address space)", RT_PARAM, |f| {
        // SAFETY: refused before anything is recorded.
        unsafe { aclrtHostRegisterV2(sv(f.buf), u64::MAX, ACL_HOST_REG_PINNED) }
    });
    t.add(V2, "a live pool allocation (device memory)", RT_PARAM, |f| {
        // SAFETY: device memory is refused before anything is recorded.
        unsafe { aclrtHostRegisterV2(sv(f.ptr(Ptr::A(0))), 16, ACL_HOST_REG_MAPPED) }
    });
    t.add(V2, "aclrtMallocHost memory, PINNED (page-locked already)", ALREADY, |f| {
        // SAFETY: refused: it overlaps the library's own page-locked memory.
        unsafe { aclrtHostRegisterV2(sv(f.ptr(Ptr::Host(8))), 16, ACL_HOST_REG_PINNED) }
    });
    t.add(V2, "the registered buffer again", ALREADY, |f| {
        // SAFETY: refused: the same range is registered.
        with_buf_registered(f, |f| unsafe { aclrtHostRegisterV2(sv(f.buf), BUF_LEN as u64, ACL_HOST_REG_MAPPED) })
    });
    t.add(V2, "the heap buffer, every flag, then unregistered", OK, |f| {
        let all = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
        // SAFETY: the buffer is the test's for the whole run; unregistered at once.
        unsafe {
            let rc = aclrtHostRegisterV2(sv(f.buf), BUF_LEN as u64, all);
            check(aclrtHostUnregister(sv(f.buf)), "unregistering it");
            rc
        }
    });
    t.fresh(V2, "without a current device", NO_CONTEXT, |f| {
        // SAFETY: refused before anything is recorded.
        unsafe { aclrtHostRegisterV2(sv(f.buf), 16, ACL_HOST_REG_MAPPED) }
    });

    const U: &str = "aclrtHostUnregister";
    t.add(U, "null", PARAM, |_| {
        // SAFETY: pointers are only looked up.
        unsafe { aclrtHostUnregister(null_mut()) }
    });
    let mut never: Vec<(String, Ptr)> = GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Ptr::Raw(g))).collect();
    never.extend([
        ("the stack".to_string(), Ptr::Stack),
        ("the heap buffer, never registered".to_string(), Ptr::Buf),
        ("aclrtMallocHost memory".to_string(), Ptr::Host(0)),
        ("a live pool allocation".to_string(), Ptr::A(0)),
    ]);
    for (input, p) in never {
        t.add(U, input, NOT_REGISTERED, move |f| {
            // SAFETY: pointers are only looked up.
            unsafe { aclrtHostUnregister(sv(f.ptr(p))) }
        });
    }
    t.add(U, "an interior pointer of a registered range", NOT_REGISTERED, |f| {
        // SAFETY: pointers are only looked up.
        with_buf_registered(f, |f| unsafe { aclrtHostUnregister(sv(f.buf + 16)) })
    });
    t.add(U, "a range unregistered already", NOT_REGISTERED, |f| {
        // SAFETY: the buffer is the test's; registered and unregistered, then looked up.
        unsafe {
            check(aclrtHostRegisterV2(sv(f.buf), 64, ACL_HOST_REG_PINNED), "registering");
            check(aclrtHostUnregister(sv(f.buf)), "unregistering");
            aclrtHostUnregister(sv(f.buf))
        }
    });
    t.fresh(U, "without a current device", NO_CONTEXT, |f| {
        // SAFETY: refused before the lookup.
        unsafe { aclrtHostUnregister(sv(f.buf)) }
    });
}
