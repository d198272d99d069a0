//! Rows for synchronous memory, copies and memsets.

use super::*;

pub(super) fn sync_memory_rows(t: &mut Table) {
    const E: &str = "aclrtMalloc";
    t.add(E, "null devPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMalloc(null_mut(), 16, ACL_MEM_MALLOC_HUGE_FIRST) }
    });
    let mut sizes: Vec<(String, usize, aclError)> = vec![("size 0".into(), 0, PARAM)];
    sizes.extend(OVERFLOWING.iter().map(|&n| (format!("size {n:#x} (overflows when rounded)"), n, RT_PARAM)));
    sizes.push(("size 2^62 (more than the device: 207001, as CANN)".into(), 1 << 62, HOST_ALLOC));
    sizes.push(("size of the device + 1".into(), DEVICE_MEMORY + 1, HOST_ALLOC));
    for (input, size, want) in sizes {
        t.add(E, input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtMalloc(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
        });
    }
    for policy in [-1, 99] {
        t.add(E, format!("size 1, policy {policy} (the policy is not used)"), OK, move |_| {
            let mut p: *mut c_void = null_mut();
            // SAFETY: a valid out-pointer, then the address it received.
            unsafe {
                let rc = aclrtMalloc(&mut p, 1, policy);
                check(aclrtFree(p), "freeing it");
                rc
            }
        });
    }
    t.fresh(E, "without a current device", NO_CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMalloc(&mut p, 16, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
    });

    const F: &str = "aclrtFree";
    t.add(F, "null", PARAM, |_| {
        // SAFETY: pointers are looked up by the emulator, never dereferenced.
        unsafe { aclrtFree(null_mut()) }
    });
    let mut ptrs = bad_free_pointers();
    ptrs.extend([
        ("a live pool allocation (another pool's pointer)".to_string(), Ptr::A(0)),
        ("an interior pointer of aclrtMalloc memory".to_string(), Ptr::D(8)),
        ("an aclrtMalloc address already freed".to_string(), Ptr::DFreed),
    ]);
    for (input, p) in ptrs {
        t.add(F, input, RT_PARAM, move |f| {
            // SAFETY: pointers are looked up by the emulator, never dereferenced.
            unsafe { aclrtFree(sv(f.ptr(p))) }
        });
    }
    t.fresh(F, "live aclrtMalloc memory, without a current device (CANN needs none)", OK, |_| {
        let mut p: *mut c_void = null_mut();
        // SAFETY: a valid out-pointer, then the address it received.
        unsafe {
            check(aclrtSetDevice(0), "device 0");
            check(aclrtMalloc(&mut p, 16, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
            check(aclrtResetDevice(0), "no current device any more");
            aclrtFree(p)
        }
    });

    const MH: &str = "aclrtMallocHost";
    t.add(MH, "null hostPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMallocHost(null_mut(), 16) }
    });
    let mut sizes: Vec<(String, usize, aclError)> = vec![("size 0".into(), 0, PARAM)];
    sizes.extend(OVERFLOWING.iter().map(|&n| (format!("size {n:#x} (overflows when aligned)"), n, PARAM)));
    sizes.push(("size isize::MAX (overflows when aligned)".into(), isize::MAX as usize, PARAM));
    sizes.push(("size 2^62 (the host cannot)".into(), 1 << 62, HOST_ALLOC));
    for (input, size, want) in sizes {
        t.add(MH, input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtMallocHost(&mut p, size) }, p as usize)
        });
    }
    t.fresh(MH, "size 1, without a current device (CANN needs one)", NO_CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMallocHost(&mut p, 1) }, p as usize)
    });

    const FH: &str = "aclrtFreeHost";
    t.add(FH, "null", PARAM, |_| {
        // SAFETY: pointers are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtFreeHost(null_mut()) }
    });
    let mut ptrs: Vec<(String, Ptr)> = GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Ptr::Raw(g))).collect();
    ptrs.extend([
        ("an interior, misaligned pointer".to_string(), Ptr::Host(1)),
        ("a pointer already freed".to_string(), Ptr::HostFreed),
        ("device memory (a pool allocation)".to_string(), Ptr::A(0)),
        ("device memory (aclrtMalloc)".to_string(), Ptr::D(0)),
        ("a host stack address".to_string(), Ptr::Stack),
        ("a host heap address not from aclrtMallocHost".to_string(), Ptr::Buf),
    ]);
    for (input, p) in ptrs {
        // Device memory is 107000, as CANN (it asks the driver where the pointer lies).
        let want = if matches!(p, Ptr::A(_) | Ptr::D(_)) { RT_PARAM } else { PARAM };
        t.add(FH, input, want, move |f| {
            // SAFETY: pointers are looked up in the shim's registry and only freed when
            // found there.
            unsafe { aclrtFreeHost(sv(f.ptr(p))) }
        });
    }
}

/// The memcpy kinds and which sides they make device memory.
const DEVICE_SIDES: [(aclrtMemcpyKind, &str, bool, bool); 3] = [
    (ACL_MEMCPY_HOST_TO_DEVICE, "HOST_TO_DEVICE", true, false),
    (ACL_MEMCPY_DEVICE_TO_HOST, "DEVICE_TO_HOST", false, true),
    (ACL_MEMCPY_DEVICE_TO_DEVICE, "DEVICE_TO_DEVICE", true, true),
];

/// One copy, sync or async (on `stream`).
///
/// # Safety
///
/// Host sides must be valid for `count` bytes until the copy has run.
unsafe fn copy(
    is_async: bool,
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: usize,
) -> aclError {
    if is_async {
        // SAFETY: the caller's contract.
        unsafe { aclrtMemcpyAsync(sv(dst), dest_max, sv(src), count, kind, sv(stream)) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { aclrtMemcpy(sv(dst), dest_max, sv(src), count, kind) }
    }
}

pub(super) fn copy_rows(t: &mut Table) {
    for is_async in [false, true] {
        let entry = if is_async { "aclrtMemcpyAsync" } else { "aclrtMemcpy" };
        // Host sides are the fixture's buffer (BUF_LEN bytes) or aclrtMallocHost memory
        // (HOST_LEN bytes); device sides are `a` (a granule) unless the row says otherwise.
        t.add(entry, "null dst", PARAM, move |f| {
            // SAFETY: refused before any copy (null pointer).
            unsafe { copy(is_async, 0, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        t.add(entry, "null src", PARAM, move |f| {
            // SAFETY: refused before any copy (null pointer).
            unsafe { copy(is_async, f.buf, 16, 0, 16, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        t.add(entry, "null dst and src, count 0 (count 0 is checked first: nothing is done)", OK, move |f| {
            // SAFETY: nothing is copied (count 0).
            unsafe { copy(is_async, 0, 0, 0, 0, ACL_MEMCPY_HOST_TO_HOST, f.s) }
        });
        for (input, dest_max, count) in [
            ("count 16 > destMax 8", 8, 16),
            ("count 1 > destMax 0", 0, 1),
            ("count SIZE_MAX > destMax", BUF_LEN, usize::MAX),
        ] {
            for (kind, name, _, _) in DEVICE_SIDES {
                t.add(entry, format!("{input}, {name}"), RT_PARAM, move |f| {
                    let (d, s) = sides(f, kind);
                    // SAFETY: refused before any copy (count > destMax).
                    unsafe { copy(is_async, d, dest_max, s, count, kind, f.s) }
                });
            }
            t.add(entry, format!("{input}, HOST_TO_HOST"), RT_PARAM, move |f| {
                // SAFETY: refused before any copy (count > destMax).
                unsafe { copy(is_async, f.buf, dest_max, f.host, count, ACL_MEMCPY_HOST_TO_HOST, f.s) }
            });
        }
        for kind in [-1, 6, 99, i32::MAX, i32::MIN] {
            t.add(entry, format!("kind {kind}"), PARAM, move |f| {
                // SAFETY: refused before any copy (bad kind); both sides are valid anyway.
                unsafe { copy(is_async, f.buf, BUF_LEN, f.host, 16, kind, f.s) }
            });
        }
        t.add(entry, "kind 5 (HOST_TO_BUF_TO_DEVICE, done as HOST_TO_DEVICE)", OK, move |f| {
            // SAFETY: the host side holds 16 bytes; `a` is live device memory; an async
            // copy is synchronized before the buffers could go away.
            unsafe {
                let rc = copy(is_async, f.a, 16, f.buf, 16, 5, f.s);
                check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                rc
            }
        });
        t.add(entry, "HOST_TO_DEVICE from aclrtMallocHost memory", OK, move |f| {
            // SAFETY: the host side holds HOST_LEN bytes; `a` is live device memory; an
            // async copy is synchronized before the buffers could go away.
            unsafe {
                let rc = copy(is_async, f.a, 16, f.host, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.s);
                check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                rc
            }
        });
        t.add(entry, "DEVICE_TO_HOST into aclrtMallocHost memory, past its end", RT_PARAM, move |f| {
            // SAFETY: refused before any copy (the host range runs past its allocation).
            unsafe { copy(is_async, f.host + HOST_LEN - 8, 16, f.a, 16, ACL_MEMCPY_DEVICE_TO_HOST, f.s) }
        });
        t.add(entry, "count 0 with kind 99 (count 0 is checked first: nothing is done)", OK, move |f| {
            // SAFETY: nothing is copied (count 0).
            unsafe { copy(is_async, f.buf, 0, f.host, 0, 99, f.s) }
        });
        t.add(entry, "count 0 with a garbage device side", OK, move |f| {
            // SAFETY: nothing is copied (count 0).
            unsafe { copy(is_async, 0x1234, 0, f.host, 0, ACL_MEMCPY_HOST_TO_DEVICE, f.s) }
        });
        for (kind, name, dst_dev, src_dev) in DEVICE_SIDES {
            for (what, p) in bad_device_pointers() {
                let mut cases = Vec::new();
                if dst_dev {
                    cases.push(("dst", true));
                }
                if src_dev {
                    cases.push(("src", false));
                }
                for (side, is_dst) in cases {
                    // An async copy's kind is corrected from the addresses, as on CANN:
                    // aclrtMallocHost memory named as device is host memory there, so the
                    // copy is host-to-host (refused, 207000) or a plain copy to or from
                    // the device.
                    let want = match (is_async, p) {
                        (true, Ptr::Host(_)) if kind == ACL_MEMCPY_DEVICE_TO_DEVICE => OK,
                        (true, Ptr::Host(_)) => FEATURE,
                        _ => RT_PARAM,
                    };
                    t.add(entry, format!("{name}, {side}: {what}"), want, move |f| {
                        let (mut d, mut s) = sides(f, kind);
                        if is_dst {
                            d = f.ptr(p);
                        } else {
                            s = f.ptr(p);
                        }
                        // SAFETY: the host side (if any) is a valid buffer of 16 bytes or
                        // more; the bad device side is refused before anything is copied.
                        unsafe { copy(is_async, d, 16, s, 16, kind, f.s) }
                    });
                }
            }
            t.add(entry, format!("{name}, a range past the end of the allocation"), RT_PARAM, move |f| {
                let (mut d, mut s) = sides(f, kind);
                let end = f.a + GRAN - 8;
                if dst_dev {
                    d = end;
                } else {
                    s = end;
                }
                // SAFETY: the host side (if any) holds 16 bytes; the device range is
                // refused before anything is copied.
                unsafe { copy(is_async, d, 16, s, 16, kind, f.s) }
            });
            t.add(entry, format!("{name}, count and destMax SIZE_MAX"), RT_PARAM, move |f| {
                let (d, s) = sides(f, kind);
                // SAFETY: the device range [a, a + SIZE_MAX) is refused before anything
                // is copied.
                unsafe { copy(is_async, d, usize::MAX, s, usize::MAX, kind, f.s) }
            });
            t.add(entry, format!("{name}, misaligned device address inside the allocation"), OK, move |f| {
                let (mut d, mut s) = sides(f, kind);
                if dst_dev {
                    d = f.a + 3;
                }
                if src_dev {
                    s = f.a + 3;
                }
                // SAFETY: host sides hold 16 bytes; device sides lie inside `a`; an async
                // copy is synchronized before the buffers could go away.
                unsafe {
                    let rc = copy(is_async, d, 16, s, 16, kind, f.s);
                    check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                    rc
                }
            });
        }
        t.add(entry, "DEFAULT, dst a freed pool address (found as device memory, refused)", RT_PARAM, move |f| {
            // SAFETY: the device side is refused before anything is copied.
            unsafe { copy(is_async, f.freed, 16, f.buf, 16, ACL_MEMCPY_DEFAULT, f.s) }
        });
        t.add(entry, "HOST_TO_DEVICE, dst a pointer of another pool (allowed)", OK, move |f| {
            // SAFETY: the host side holds 16 bytes; `b` is live device memory; an async
            // copy is synchronized before the buffers could go away.
            unsafe {
                let rc = copy(is_async, f.b, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.s);
                check(aclrtSynchronizeStream(sv(f.s)), "synchronizing the copy");
                rc
            }
        });
        if is_async {
            for (input, h) in bad_handles(Kind::Stream) {
                t.add(entry, format!("stream: {input}"), HANDLE, move |f| {
                    // SAFETY: refused before any copy (the stream is checked first).
                    unsafe { copy(true, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.h(h)) }
                });
            }
            t.add(entry, "a stream of another device", STREAM_CONTEXT, |f| {
                // SAFETY: refused before any copy (the stream is checked first).
                unsafe { copy(true, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, f.s1) }
            });
            t.add(entry, "count 0 with a destroyed stream (nothing is done)", OK, |f| {
                // SAFETY: nothing is copied (count 0).
                unsafe { copy(true, f.a, 16, f.buf, 0, ACL_MEMCPY_HOST_TO_DEVICE, f.dead_stream) }
            });
            t.fresh(entry, "HOST_TO_HOST on the default stream, without a current device", NO_CONTEXT, |f| {
                // SAFETY: refused before any copy (no current device for the stream).
                unsafe { copy(true, f.buf, 16, f.host, 16, ACL_MEMCPY_HOST_TO_HOST, 0) }
            });
        } else {
            t.fresh(entry, "HOST_TO_DEVICE, without a current device", NO_CONTEXT, |f| {
                // SAFETY: refused before any copy (no current device).
                unsafe { copy(false, f.a, 16, f.buf, 16, ACL_MEMCPY_HOST_TO_DEVICE, 0) }
            });
            t.fresh(entry, "HOST_TO_HOST, without a current device (CANN asks for one)", NO_CONTEXT, |f| {
                // SAFETY: refused before any copy (no current device).
                unsafe { copy(false, f.buf, 16, f.host, 16, ACL_MEMCPY_HOST_TO_HOST, 0) }
            });
        }
    }
}

/// Valid (dst, src) for a device kind: `a` on the device sides, host memory elsewhere.
fn sides(f: &Fx, kind: aclrtMemcpyKind) -> (usize, usize) {
    match kind {
        ACL_MEMCPY_HOST_TO_DEVICE => (f.a, f.buf),
        ACL_MEMCPY_DEVICE_TO_HOST => (f.buf, f.a),
        _ => (f.a, f.a + 64),
    }
}

pub(super) fn memset_rows(t: &mut Table) {
    for is_async in [false, true] {
        let entry = if is_async { "aclrtMemsetAsync" } else { "aclrtMemset" };
        let set = move |p: usize, max: usize, value: i32, count: usize, stream: usize| {
            // SAFETY: device pointers are checked by the emulator before anything is
            // written; handles are looked up, never dereferenced.
            unsafe {
                if is_async {
                    aclrtMemsetAsync(sv(p), max, value, count, sv(stream))
                } else {
                    aclrtMemset(sv(p), max, value, count)
                }
            }
        };
        t.add(entry, "null devPtr", PARAM, move |f| set(0, 16, 0, 16, f.s));
        t.add(entry, "count 16 > maxCount 8", RT_PARAM, move |f| set(f.a, 8, 0, 16, f.s));
        t.add(entry, "count SIZE_MAX > maxCount", RT_PARAM, move |f| set(f.a, GRAN, 0, usize::MAX, f.s));
        t.add(entry, "count 0 with a garbage pointer (nothing is done)", OK, move |f| set(0x1234, 0, 0, 0, f.s));
        t.add(entry, "count 0 with a null pointer (nothing is done)", OK, move |f| set(0, 0, 0, 0, f.s));
        for (what, p) in bad_device_pointers().into_iter().filter(|(_, p)| !matches!(p, Ptr::Host(_))) {
            t.add(entry, what, RT_PARAM, move |f| set(f.ptr(p), 16, 0, 16, f.s));
        }
        t.add(entry, "a host heap address not from aclrtMallocHost", RT_PARAM, move |f| set(f.buf, 16, 0, 16, f.s));
        t.add(entry, "aclrtMallocHost memory (host memory the runtime knows)", OK, move |f| {
            let rc = set(f.host + 1, 16, 0x5a, 16, f.s);
            // SAFETY: a live stream.
            check(unsafe { aclrtSynchronizeStream(sv(f.s)) }, "synchronizing");
            rc
        });
        t.add(entry, "aclrtMallocHost memory, past its end", RT_PARAM, move |f| {
            set(f.host + HOST_LEN - 8, 16, 0, 16, f.s)
        });
        t.add(entry, "a range past the end of the allocation", RT_PARAM, move |f| set(f.a + GRAN - 8, 16, 0, 16, f.s));
        t.add(entry, "count and maxCount SIZE_MAX", RT_PARAM, move |f| set(f.a, usize::MAX, 0, usize::MAX, f.s));
        for value in [-1, i32::MAX, i32::MIN] {
            t.add(
                entry,
                format!("value {value}, misaligned inside the allocation (the low byte is used)"),
                OK,
                move |f| {
                    let rc = set(f.a + 1, 16, value, 16, f.s);
                    // SAFETY: a live stream.
                    check(unsafe { aclrtSynchronizeStream(sv(f.s)) }, "synchronizing");
                    rc
                },
            );
        }
        if is_async {
            for (input, h) in bad_handles(Kind::Stream) {
                t.add(entry, format!("stream: {input}"), HANDLE, move |f| set(f.a, 16, 0, 16, f.h(h)));
            }
            t.add(entry, "a stream of another device", STREAM_CONTEXT, move |f| set(f.a, 16, 0, 16, f.s1));
            t.add(entry, "count 0 with a destroyed stream (nothing is done)", OK, move |f| {
                set(f.a, 16, 0, 0, f.dead_stream)
            });
        }
        t.fresh(entry, "live memory, without a current device", NO_CONTEXT, move |f| set(f.a, 16, 0, 16, 0));
    }
}
