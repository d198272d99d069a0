//! Rows for devices, contexts, host functions and the remaining entry points.

use super::*;

pub(super) fn device_rows(t: &mut Table) {
    for dev in [-1, 2, i32::MAX, i32::MIN] {
        t.add("aclrtSetDevice", format!("device {dev}"), DEVICE_ID, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtSetDevice(dev) }
        });
        t.add("aclrtResetDevice", format!("device {dev}"), DEVICE_ID, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtResetDevice(dev) }
        });
        t.add("aclrtResetDeviceForce", format!("device {dev}"), DEVICE_ID, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtResetDeviceForce(dev) }
        });
    }
    t.fresh("aclrtSetDevice", "device 1, without a current device", OK, |_| {
        // SAFETY: takes an integer only.
        unsafe { aclrtSetDevice(1) }
    });
    // The set counts are process-wide: these rows use device 1, which only the fixture's
    // helper thread set, and leave it set once more than they found it at most.
    t.fresh("aclrtResetDevice", "device 1, set once on this thread", OK, |_| {
        // SAFETY: takes integers only.
        unsafe {
            check(aclrtSetDevice(1), "device 1");
            aclrtResetDevice(1)
        }
    });
    t.fresh("aclrtResetDeviceForce", "device 1, set twice on this thread", OK, |_| {
        // SAFETY: takes integers only.
        unsafe {
            check(aclrtSetDevice(1), "device 1");
            check(aclrtSetDevice(1), "device 1 again");
            aclrtResetDeviceForce(1)
        }
    });
    t.fresh("aclrtResetDevice", "device 1 after aclrtResetDeviceForce (not set)", CONTEXT_RELEASE, |_| {
        // SAFETY: takes integers only.
        unsafe {
            check(aclrtSetDevice(1), "device 1");
            check(aclrtResetDeviceForce(1), "force");
            aclrtResetDevice(1)
        }
    });
    t.fresh("aclrtResetDeviceForce", "device 1, not set", CONTEXT_RELEASE, |_| {
        // SAFETY: takes an integer only.
        unsafe { aclrtResetDeviceForce(1) }
    });
    t.add("aclrtGetDeviceCount", "null count", PARAM, |_| {
        // SAFETY: a null out-pointer, which the shim refuses before writing.
        unsafe { aclrtGetDeviceCount(null_mut()) }
    });
    t.fresh("aclrtGetDeviceCount", "without a current device", OK, |_| {
        let mut n = 0u32;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtGetDeviceCount(&mut n) };
        assert_eq!(n, 2, "two devices were configured");
        rc
    });
}

pub(super) fn context_rows(t: &mut Table) {
    t.add("aclrtCreateContext", "null context", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateContext(null_mut(), 0) }
    });
    for dev in [-1, 2, i32::MAX, i32::MIN] {
        t.add("aclrtCreateContext", format!("device {dev}"), DEVICE_ID, move |_| {
            let mut c = SENTINEL as aclrtContext;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtCreateContext(&mut c, dev) }, c as usize)
        });
    }
    t.fresh("aclrtCreateContext", "device 0, without a current device", OK, |_| {
        let mut c: aclrtContext = null_mut();
        // SAFETY: a valid out-pointer; the new context is destroyed again.
        unsafe {
            let rc = aclrtCreateContext(&mut c, 0);
            check(aclrtDestroyContext(c), "destroying it");
            rc
        }
    });
    t.add("aclrtDestroyContext", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyContext(null_mut()) }
    });
    t.add("aclrtSetCurrentContext", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSetCurrentContext(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Context) {
        t.add("aclrtDestroyContext", input.clone(), NO_CONTEXT, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyContext(sv(f.h(h))) }
        });
        t.add("aclrtSetCurrentContext", input, RT_PARAM, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSetCurrentContext(sv(f.h(h))) }
        });
    }
    t.add("aclrtDestroyContext", "device 0's default context", NO_CONTEXT, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtDestroyContext(sv(f.default_ctx)) }
    });
    t.fresh("aclrtDestroyContext", "a live context, without a current device", OK, |_| {
        let mut c: aclrtContext = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            check(aclrtCreateContext(&mut c, 0), "a context to destroy");
            check(aclrtSetDevice(0), "device 0");
            check(aclrtResetDevice(0), "no current device again");
            aclrtDestroyContext(c)
        }
    });
    t.fresh("aclrtSetCurrentContext", "a live context, without a current device", OK, |f| {
        // SAFETY: a live context handle.
        unsafe { aclrtSetCurrentContext(sv(f.ctx)) }
    });
    t.add("aclrtGetCurrentContext", "null context", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetCurrentContext(null_mut()) }
    });
    t.fresh("aclrtGetCurrentContext", "without a current device", NO_CONTEXT, |_| {
        let mut c = SENTINEL as aclrtContext;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtGetCurrentContext(&mut c) }, c as usize)
    });
}

pub(super) fn misc_rows(t: &mut Table) {
    const L: &str = "aclrtLaunchHostFunc";
    let launch = |stream: usize, func: aclrtHostFunc, args: usize| {
        // SAFETY: the function ignores its argument, so any `args` value is fine; handles
        // are looked up, never dereferenced.
        unsafe { aclrtLaunchHostFunc(sv(stream), func, sv(args)) }
    };
    t.add(L, "null fn", RT_PARAM, move |f| launch(f.s, None, 0));
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(L, format!("stream: {input}"), HANDLE, move |f| launch(f.h(h), Some(ignore_args), 0));
    }
    t.add(L, "a stream of another device", STREAM_CONTEXT, move |f| launch(f.s1, Some(ignore_args), 0));
    // On a stream of its own: a stream that ran a host function takes no callbacks.
    t.add(L, "garbage args (passed through untouched)", OK, move |_| {
        let mut s: aclrtStream = null_mut();
        // SAFETY: a valid out-pointer, then the stream it received.
        unsafe {
            check(aclrtCreateStream(&mut s), "creating a stream");
            let rc = launch(s as usize, Some(ignore_args), 0xdead_beef);
            check(aclrtDestroyStream(s), "destroying it (its work runs first)");
            rc
        }
    });
    for entry in ["aclrtSubscribeReport", "aclrtLaunchCallback"] {
        t.add(entry, "a stream that ran aclrtLaunchHostFunc (107011, as CANN)", STREAM_SUBSCRIBE, move |_| {
            let mut s: aclrtStream = null_mut();
            // SAFETY: a valid out-pointer, then the stream it received; the callback is
            // never launched.
            unsafe {
                check(aclrtCreateStream(&mut s), "creating a stream");
                check(launch(s as usize, Some(ignore_args), 0), "a host function");
                let rc = if entry == "aclrtSubscribeReport" {
                    aclrtSubscribeReport(7, s)
                } else {
                    aclrtLaunchCallback(Some(ignore_args), null_mut(), ACL_CALLBACK_NO_BLOCK, s)
                };
                check(aclrtDestroyStream(s), "destroying it");
                rc
            }
        });
    }
    t.fresh(L, "the default stream, without a current device", NO_CONTEXT, move |_| launch(0, Some(ignore_args), 0));
    t.add(L, "a stream subscribed for callbacks (aclrtSubscribeReport)", STREAM_SUBSCRIBE, move |f| {
        // SAFETY: a live handle; thread ids are only compared.
        unsafe {
            check(aclrtSubscribeReport(u64::MAX, sv(f.s)), "subscribing");
            let rc = launch(f.s, Some(ignore_args), 0);
            check(aclrtUnSubscribeReport(u64::MAX, sv(f.s)), "unsubscribing");
            rc
        }
    });

    const M: &str = "aclrtGetMemInfo";
    t.add(M, "null free", PARAM, |_| {
        let mut total = SENTINEL;
        // SAFETY: one null and one valid out-pointer; refused before any write.
        untouched(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, null_mut(), &mut total) }, total)
    });
    t.add(M, "null total", PARAM, |_| {
        let mut free = SENTINEL;
        // SAFETY: one valid and one null out-pointer; refused before any write.
        untouched(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, null_mut()) }, free)
    });
    for attr in [0, 17] {
        t.add(M, format!("attribute {attr} (every attribute reports device memory)"), OK, move |_| {
            let (mut free, mut total) = (0, 0);
            // SAFETY: valid out-pointers.
            unsafe { aclrtGetMemInfo(attr, &mut free, &mut total) }
        });
    }
    for attr in [-1, 18, 99] {
        t.add(
            M,
            format!("attribute {attr} (outside 0-17: 107016, as CANN)"),
            ACL_ERROR_RT_INVALID_MEMORY_TYPE,
            move |_| {
                let (mut free, mut total) = (0, 0);
                // SAFETY: valid out-pointers.
                unsafe { aclrtGetMemInfo(attr, &mut free, &mut total) }
            },
        );
    }
    t.fresh(M, "without a current device", NO_CONTEXT, |_| {
        let (mut free, mut total) = (SENTINEL, SENTINEL);
        // SAFETY: valid out-pointers.
        let rc = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) };
        untouched(untouched(rc, free), total)
    });

    const R: &str = "aclGetRecentErrMsg";
    t.fresh(R, "on a thread with no error yet: NULL (CANN's nothing to report)", OK, |_| {
        // SAFETY: takes no arguments.
        assert!(unsafe { aclGetRecentErrMsg() }.is_null());
        OK
    });
    t.fresh(R, "after a refused call: the message names the entry point, then NULL (taken)", OK, |_| {
        // SAFETY: garbage handles are looked up, never dereferenced.
        assert_eq!(unsafe { aclrtSetCurrentContext(sv(0x1234)) }, RT_PARAM);
        let m = message();
        assert!(m.starts_with("aclrtSetCurrentContext: "), "{m}");
        // SAFETY: takes no arguments.
        assert!(unsafe { aclGetRecentErrMsg() }.is_null(), "read once, the message is cleared");
        OK
    });

    // The process is initialized (the test called aclInit once): a repeat is refused, a
    // finalize succeeds once, and the process can be initialized again after it.
    const I: &str = "aclInit";
    const FI: &str = "aclFinalize";
    t.add(I, "null config, again", REPEAT_INIT, |_| {
        // SAFETY: a null configuration path.
        unsafe { aclInit(std::ptr::null()) }
    });
    t.fresh(I, "a config file that does not exist, again, on another thread", REPEAT_INIT, |_| {
        // SAFETY: a NUL-terminated string.
        unsafe { aclInit(c"/nonexistent/acl.json".as_ptr()) }
    });
    t.fresh(FI, "without a current device (the shim keeps working afterwards)", OK, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclFinalize() }
    });
    t.add(FI, "twice", REPEAT_FINALIZE, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclFinalize() }
    });
    t.add(I, "a config file that does not exist", INVALID_FILE, |_| {
        // SAFETY: a NUL-terminated string.
        unsafe { aclInit(c"/nonexistent/acl.json".as_ptr()) }
    });
    t.add(I, "a directory as the config file", INVALID_FILE, |_| {
        // SAFETY: a NUL-terminated string.
        unsafe { aclInit(c"/".as_ptr()) }
    });
    t.add(I, "this crate's manifest as the config file (readable; not parsed)", OK, |_| {
        let path = std::ffi::CString::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        // SAFETY: a NUL-terminated string; then no arguments.
        unsafe {
            let rc = aclInit(path.as_ptr());
            check(aclFinalize(), "finalizing again");
            rc
        }
    });
    t.add(I, "null config, after aclFinalize", OK, |_| {
        // SAFETY: a null configuration path.
        unsafe { aclInit(std::ptr::null()) }
    });

    // The counted finalize: the process holds one reference (the aclInit just above).
    const FR: &str = "aclFinalizeReference";
    t.add(FR, "after a repeated aclInit: one reference of two taken, 1 left written", OK, |_| {
        let mut n = SENTINEL as u64;
        // SAFETY: a null configuration path; a valid out-pointer.
        unsafe {
            assert_eq!(aclInit(std::ptr::null()), REPEAT_INIT, "a repeated aclInit");
            let rc = aclFinalizeReference(&mut n);
            assert_eq!(n, 1, "the references left");
            rc
        }
    });
    t.fresh(FR, "null refCount, the last reference (finalizes), on another thread", OK, |_| {
        // SAFETY: a null refCount is allowed.
        unsafe { aclFinalizeReference(null_mut()) }
    });
    t.add(FR, "no reference left: refused, 0 written", REPEAT_FINALIZE, |_| {
        let mut n = SENTINEL as u64;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclFinalizeReference(&mut n) };
        assert_eq!(n, 0, "the references left");
        rc
    });
    t.add(FI, "after aclFinalizeReference took the last reference", REPEAT_FINALIZE, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclFinalize() }
    });
    t.add(FR, "after aclFinalize cleared every reference", REPEAT_FINALIZE, |_| {
        // SAFETY: a null configuration path, twice (2 references); no arguments; null refCount.
        unsafe {
            assert_eq!(aclInit(std::ptr::null()), OK, "aclInit");
            assert_eq!(aclInit(std::ptr::null()), REPEAT_INIT, "a repeated aclInit");
            assert_eq!(aclFinalize(), OK, "aclFinalize");
            aclFinalizeReference(null_mut())
        }
    });
    t.add(I, "null config, after aclFinalizeReference", OK, |_| {
        // SAFETY: a null configuration path.
        unsafe { aclInit(std::ptr::null()) }
    });
}
