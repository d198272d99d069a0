//! Rows for the queries: device information, status, utilization, resource limits, the
//! priority range, peer access, package versions, the base helpers, the current default
//! stream, stream getters and configuration handles.

use super::*;

const SETUP: aclError = ACL_ERROR_RT_DEV_SETUP_ERROR;
const UNSUPPORTED: aclError = ACL_ERROR_FEATURE_UNSUPPORTED;

pub(super) fn query_rows(t: &mut Table) {
    t.add("aclrtGetDeviceInfo", "null value", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetDeviceInfo(0, 201, null_mut()) }
    });
    for (input, device, attr, want) in [
        ("device 2", 2u32, 201, RT_PARAM),
        ("device u32::MAX", u32::MAX, 201, RT_PARAM),
        ("attribute 0", 0, 0, RT_PARAM),
        ("attribute 999", 0, 999, RT_PARAM),
        ("attribute -1", 0, -1, RT_PARAM),
        ("a SIMT attribute (202)", 0, 202, FEATURE),
    ] {
        t.add("aclrtGetDeviceInfo", input, want, move |_| {
            let mut v = SENTINEL as i64;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtGetDeviceInfo(device, attr, &mut v) }, v as usize)
        });
    }
    t.add("aclrtQueryDeviceStatus", "null status", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtQueryDeviceStatus(0, null_mut()) }
    });
    for device in [2, -1, i32::MAX] {
        t.add("aclrtQueryDeviceStatus", format!("device {device}"), DEVICE_ID, move |_| {
            let mut st = 7;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { aclrtQueryDeviceStatus(device, &mut st) };
            if st == 7 { rc } else { OK - 1 }
        });
    }
    t.add("aclrtGetDeviceUtilizationRate", "null info", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetDeviceUtilizationRate(0, null_mut()) }
    });
    t.add("aclrtGetDeviceUtilizationRate", "a non-NULL utilizationExtend", PARAM, |f| {
        let mut u = aclrtUtilizationInfo {
            cubeUtilization: 5,
            vectorUtilization: 5,
            aicpuUtilization: 5,
            memoryUtilization: 5,
            utilizationExtend: sv(f.buf),
        };
        // SAFETY: a valid info (its extension is never read).
        unsafe { aclrtGetDeviceUtilizationRate(0, &mut u) }
    });
    t.add("aclrtGetDeviceUtilizationRate", "device 2 (every field -1, as on CANN)", OK, |_| {
        let mut u = aclrtUtilizationInfo {
            cubeUtilization: 5,
            vectorUtilization: 5,
            aicpuUtilization: 5,
            memoryUtilization: 5,
            utilizationExtend: null_mut(),
        };
        // SAFETY: a valid info.
        let rc = unsafe { aclrtGetDeviceUtilizationRate(2, &mut u) };
        let all = [u.cubeUtilization, u.vectorUtilization, u.aicpuUtilization, u.memoryUtilization];
        if all == [-1; 4] { rc } else { OK - 1 }
    });
    t.add("aclrtGetDeviceResLimit", "null value", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, null_mut()) }
    });
    for (input, device, kind, want) in [
        ("device -1", -1, 0, DEVICE_ID),
        ("device 2", 2, 0, DEVICE_ID),
        ("type 2", 0, 2, RT_PARAM),
        ("type -1", 0, -1, RT_PARAM),
    ] {
        t.add("aclrtGetDeviceResLimit", input, want, move |_| {
            let mut v = 5u32;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { aclrtGetDeviceResLimit(device, kind, &mut v) };
            if v == 5 { rc } else { OK - 1 }
        });
        t.add("aclrtSetDeviceResLimit", input, want, move |_| {
            // SAFETY: no pointer arguments.
            unsafe { aclrtSetDeviceResLimit(device, kind, 1) }
        });
    }
    t.add("aclrtSetDeviceResLimit", "above the device's vector cores", RT_PARAM, |_| {
        // SAFETY: no pointer arguments.
        unsafe { aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 49) }
    });
    t.add("aclrtSetDeviceResLimit", "u32::MAX cube cores", RT_PARAM, |_| {
        // SAFETY: no pointer arguments.
        unsafe { aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, u32::MAX) }
    });
    for device in [-1, 2, i32::MIN] {
        t.add("aclrtResetDeviceResLimit", format!("device {device}"), DEVICE_ID, move |_| {
            // SAFETY: no pointer arguments.
            unsafe { aclrtResetDeviceResLimit(device) }
        });
    }
    t.fresh("aclrtGetDeviceResLimit", "a device never set, on another thread", SETUP, |_| {
        let mut v = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtGetDeviceResLimit(1, ACL_RT_DEV_RES_CUBE_CORE, &mut v) }
    });
    t.add("aclrtGetResInCurrentThread", "null value", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, null_mut()) }
    });
    t.add("aclrtGetResInCurrentThread", "type 7", RT_PARAM, |_| {
        let mut v = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtGetResInCurrentThread(7, &mut v) }
    });
    t.fresh("aclrtGetResInCurrentThread", "without a current device", NO_CONTEXT, |_| {
        let mut v = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &mut v) }
    });
    t.add("aclrtDeviceGetStreamPriorityRange", "both null (nothing written)", OK, |_| {
        // SAFETY: null pointers are not written.
        unsafe { aclrtDeviceGetStreamPriorityRange(null_mut(), null_mut()) }
    });

    t.add("aclrtDeviceCanAccessPeer", "a device with itself", PARAM, |_| {
        let mut can = 5;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 0) }
    });
    t.add("aclrtDeviceCanAccessPeer", "null canAccessPeer", RT_PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtDeviceCanAccessPeer(null_mut(), 0, 1) }
    });
    for (device, peer) in [(0, 2), (2, 0), (-1, 0), (0, i32::MAX)] {
        t.add("aclrtDeviceCanAccessPeer", format!("devices {device} and {peer}"), DEVICE_ID, move |_| {
            let mut can = 5;
            // SAFETY: a valid out-pointer.
            unsafe { aclrtDeviceCanAccessPeer(&mut can, device, peer) }
        });
    }
    t.fresh("aclrtDeviceCanAccessPeer", "without a current device", NO_CONTEXT, |_| {
        let mut can = 5;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 1) }
    });
    t.add("aclrtDeviceEnablePeerAccess", "flags 1", UNSUPPORTED, |_| {
        // SAFETY: no pointer arguments.
        unsafe { aclrtDeviceEnablePeerAccess(1, 1) }
    });
    for (entry, enable) in [("aclrtDeviceEnablePeerAccess", true), ("aclrtDeviceDisablePeerAccess", false)] {
        let call = move |peer: i32| {
            // SAFETY: no pointer arguments.
            unsafe { if enable { aclrtDeviceEnablePeerAccess(peer, 0) } else { aclrtDeviceDisablePeerAccess(peer) } }
        };
        t.add(entry, "the current device itself", PARAM, move |_| call(0));
        t.add(entry, "device 2", DEVICE_ID, move |_| call(2));
        t.add(entry, "device -1", DEVICE_ID, move |_| call(-1));
        t.fresh(entry, "without a current device", NO_CONTEXT, move |_| call(1));
    }
    t.add("aclrtDeviceDisablePeerAccess", "access never enabled", code::ACL_ERROR_RT_DRV_INTERNAL_ERROR, |_| {
        // SAFETY: no pointer arguments.
        unsafe { aclrtDeviceDisablePeerAccess(1) }
    });
    t.add(
        "aclrtMemcpy",
        "device 1's memory from device 0 without peer access",
        code::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
        |f| {
            let mut p = null_mut();
            // SAFETY: valid pointers; the copy is refused before it touches memory.
            unsafe {
                check(aclrtSetDevice(1), "aclrtSetDevice(1)");
                check(aclrtMalloc(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc on device 1");
                check(aclrtSetDevice(0), "aclrtSetDevice(0)");
                let rc = aclrtMemcpy(sv(f.d), 64, p, 64, ACL_MEMCPY_DEVICE_TO_DEVICE);
                check(aclrtFree(p), "aclrtFree");
                rc
            }
        },
    );

    for (entry, str_form) in [("aclsysGetVersionStr", true), ("aclsysGetVersionNum", false)] {
        let call = move |name: *mut std::ffi::c_char, out: bool| {
            let mut buf = [0 as std::ffi::c_char; 128];
            let mut n = 0i32;
            // SAFETY: a NUL-terminated name or null; outputs of the sizes the calls write.
            unsafe {
                if str_form {
                    aclsysGetVersionStr(name, if out { buf.as_mut_ptr() } else { null_mut() })
                } else {
                    aclsysGetVersionNum(name, if out { &mut n } else { null_mut() })
                }
            }
        };
        t.add(entry, "null pkgName", PARAM, move |_| call(null_mut(), true));
        t.add(entry, "null output", PARAM, move |_| call(c"runtime".as_ptr().cast_mut(), false));
        t.add(entry, "an unknown package", INVALID_FILE, move |_| call(c"no-such-package".as_ptr().cast_mut(), true));
    }
    // The helpers answer values, not codes: each row is OK when the value is CANN's.
    let value = |ok: bool| if ok { OK } else { OK - 1 };
    t.add("aclDataTypeSize", "an unknown type (8, as on CANN)", OK, move |_| {
        // SAFETY: no pointer arguments.
        value(unsafe { aclDataTypeSize(12345) } == 8 && unsafe { aclDataTypeSize(-7) } == 8)
    });
    t.add("aclFloatToFloat16", "NaN and infinities (saturated to 65504)", OK, move |_| {
        // SAFETY: no pointer arguments.
        let (n, i) = unsafe { (aclFloatToFloat16(f32::NAN), aclFloatToFloat16(f32::NEG_INFINITY)) };
        value(n & 0x7FFF == 0x7BFF && i == 0xFBFF)
    });
    t.add("aclFloat16ToFloat", "+Inf's and NaN's bits (65536 and 98304, as on CANN)", OK, move |_| {
        // SAFETY: no pointer arguments.
        value(unsafe { aclFloat16ToFloat(0x7C00) } == 65536.0 && unsafe { aclFloat16ToFloat(0x7E00) } == 98304.0)
    });

    t.add("aclrtCtxGetCurrentDefaultStream", "null stream", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCtxGetCurrentDefaultStream(null_mut()) }
    });
    t.fresh("aclrtCtxGetCurrentDefaultStream", "without a current device", NO_CONTEXT, |_| {
        let mut s = SENTINEL as aclrtStream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCtxGetCurrentDefaultStream(&mut s) }, s as usize)
    });
    t.add("aclrtDestroyStream", "the handle of the default stream", RT_PARAM, |_| {
        let mut s = null_mut();
        // SAFETY: a valid out-pointer; the handle is the library's.
        unsafe {
            check(aclrtCtxGetCurrentDefaultStream(&mut s), "aclrtCtxGetCurrentDefaultStream");
            aclrtDestroyStream(s)
        }
    });
    for (entry, which) in [("aclrtStreamGetFlags", 0), ("aclrtStreamGetPriority", 1), ("aclrtStreamGetId", 2)] {
        let call = move |s: usize, out: bool| {
            let mut v = 0u32;
            let mut id = 0i32;
            // SAFETY: handles are looked up, never dereferenced; valid or null outputs.
            unsafe {
                match which {
                    0 => aclrtStreamGetFlags(sv(s), if out { &mut v } else { null_mut() }),
                    1 => aclrtStreamGetPriority(sv(s), if out { &mut v } else { null_mut() }),
                    _ => aclrtStreamGetId(sv(s), if out { &mut id } else { null_mut() }),
                }
            }
        };
        t.add(entry, "null out-pointer", PARAM, move |f| call(f.s, false));
        for (input, h) in bad_handles(Kind::Stream) {
            t.add(entry, input, HANDLE, move |f| call(f.h(h), true));
        }
        t.fresh(entry, "null (the default stream), without a current device", NO_CONTEXT, move |_| call(0, true));
    }
    t.add("aclrtCreateStreamConfigHandle", "made and destroyed", OK, |_| {
        // SAFETY: the handle the library made.
        unsafe { aclrtDestroyStreamConfigHandle(aclrtCreateStreamConfigHandle()) }
    });
    for (input, h) in [("null", 0usize), ("a garbage handle", GARBAGE[0]), ("the stack", 1)] {
        t.add("aclrtDestroyStreamConfigHandle", input, PARAM, move |f| {
            let h = if h == 1 { f.stack } else { h };
            // SAFETY: the handle is looked up, never dereferenced unless the library made it.
            unsafe { aclrtDestroyStreamConfigHandle(h as *mut aclrtStreamConfigHandle) }
        });
        t.add("aclrtSetStreamConfigOpt", input, PARAM, move |f| {
            let h = if h == 1 { f.stack } else { h };
            let v = 1usize;
            // SAFETY: as above; the value is 8 readable bytes.
            unsafe { aclrtSetStreamConfigOpt(h as *mut aclrtStreamConfigHandle, 2, (&raw const v).cast(), 8) }
        });
        t.add("aclrtCreateStreamV2", input, if h == 0 { OK } else { PARAM }, move |f| {
            let h = if h == 1 { f.stack } else { h };
            let mut s = null_mut();
            // SAFETY: a valid out-pointer; the handle is looked up first.
            let rc = unsafe { aclrtCreateStreamV2(&mut s, h as *const aclrtStreamConfigHandle) };
            if rc == OK {
                // SAFETY: the stream the call made.
                check(unsafe { aclrtDestroyStream(s) }, "aclrtDestroyStream");
            }
            rc
        });
    }
    t.add("aclrtCreateStreamV2", "null stream", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateStreamV2(null_mut(), std::ptr::null()) }
    });
    for (input, attr, size, value) in [
        ("attribute 4", 4, 8usize, 0u64),
        ("the flag as 2 bytes", 2, 2, 0),
        ("the priority as 8 bytes", 3, 8, 0),
        ("priority 8", 3, 4, 8),
        ("null value", 2, 8, u64::MAX),
    ] {
        t.add("aclrtSetStreamConfigOpt", input, PARAM, move |_| {
            // SAFETY: the handle the library made; the value is 8 readable bytes (or null).
            unsafe {
                let h = aclrtCreateStreamConfigHandle();
                let p: *const c_void = if value == u64::MAX { std::ptr::null() } else { (&raw const value).cast() };
                let rc = aclrtSetStreamConfigOpt(h, attr, p, size);
                check(aclrtDestroyStreamConfigHandle(h), "aclrtDestroyStreamConfigHandle");
                rc
            }
        });
    }
}
