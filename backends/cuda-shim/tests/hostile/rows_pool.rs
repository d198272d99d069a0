//! Rows for pools: create and destroy, attributes, allocation and free, and the default
//! and current pools of a device.

use super::*;

pub(super) fn pool_rows(t: &mut Table) {
    const C: &str = "cuMemPoolCreate";
    t.add(C, "null pool", VALUE, |_| {
        let props = CUmemPoolProps::device(0, POOL_SIZE);
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemPoolCreate(null_mut(), &props) }
    });
    t.add(C, "null props", VALUE, |_| {
        let mut p = SENTINEL as CUmemoryPool;
        // SAFETY: null props are refused before any read.
        untouched(unsafe { cuMemPoolCreate(&mut p, std::ptr::null()) }, p as usize)
    });
    let base = CUmemPoolProps::device(0, POOL_SIZE);
    let mut cases: Vec<(String, CUmemPoolProps, CUresult)> = Vec::new();
    for v in [0, 2, -1] {
        cases.push((format!("allocType {v}"), CUmemPoolProps { allocType: v, ..base }, VALUE));
    }
    for v in [2, 4, 8, -1] {
        cases.push((format!("handleTypes {v}"), CUmemPoolProps { handleTypes: v, ..base }, VALUE));
    }
    for v in [0, 2, -1] {
        cases.push((
            format!("location.type {v}"),
            CUmemPoolProps { location: CUmemLocation { type_: v, id: 0 }, ..base },
            VALUE,
        ));
    }
    for v in [3, -1, i32::MAX] {
        cases.push((format!("location.id {v}"), CUmemPoolProps::device(v, POOL_SIZE), DEVICE));
    }
    cases.push(("usage 1".into(), CUmemPoolProps { usage: 1, ..base }, VALUE));
    for i in [0, 53] {
        let mut pr = base;
        pr.reserved[i] = 1;
        cases.push((format!("reserved[{i}] not zero"), pr, VALUE));
    }
    cases.push(("maxSize above the device's memory".into(), CUmemPoolProps::device(0, DEVICE_MEMORY + 1), VALUE));
    cases.push(("maxSize SIZE_MAX".into(), CUmemPoolProps::device(0, usize::MAX), VALUE));
    cases.push((
        "handleTypes POSIX_FILE_DESCRIPTOR, accepted".into(),
        CUmemPoolProps { handleTypes: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, ..base },
        OK,
    ));
    cases.push((
        "win32SecurityAttributes set, ignored".into(),
        CUmemPoolProps { win32SecurityAttributes: 0x1234 as *mut c_void, ..base },
        OK,
    ));
    cases.push(("maxSize 1 (one granule)".into(), CUmemPoolProps::device(0, 1), OK));
    cases.push(("a pool of device 1".into(), CUmemPoolProps::device(1, POOL_SIZE), OK));
    for (input, props, want) in cases {
        let props = SendProps(props);
        t.add(C, input, want, move |_| {
            let props = props;
            let mut p = SENTINEL as CUmemoryPool;
            // SAFETY: a valid out-pointer and props struct; a pool created is destroyed.
            let rc = unsafe { cuMemPoolCreate(&mut p, &props.0) };
            if rc == OK {
                // SAFETY: the pool just created.
                check(unsafe { cuMemPoolDestroy(p) }, "destroying it again");
            }
            untouched(rc, p as usize)
        });
    }
    t.fresh(C, "without a current context", OK, |_| {
        let props = CUmemPoolProps::device(0, POOL_SIZE);
        let mut p: CUmemoryPool = null_mut();
        // SAFETY: a valid out-pointer and props; the pool is destroyed again.
        unsafe {
            let rc = cuMemPoolCreate(&mut p, &props);
            check(cuMemPoolDestroy(p), "destroying it");
            rc
        }
    });

    const D: &str = "cuMemPoolDestroy";
    let mut handles = bad_handles(Kind::Pool);
    handles.insert(0, ("null".into(), H::Null));
    for (input, h) in handles {
        t.add(D, input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuMemPoolDestroy(pl(f.h(h))) }
        });
        t.add("cuMemPoolTrimTo", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemPoolTrimTo(pl(f.h(h)), 0) }
        });
        t.add("cuMemPoolSetAttribute", input.clone(), HANDLE, move |f| {
            let v = 0u64;
            // SAFETY: as above; the value is a readable `cuuint64_t`.
            unsafe { cuMemPoolSetAttribute(pl(f.h(h)), 4, (&raw const v).cast_mut().cast()) }
        });
        t.add("cuMemPoolGetAttribute", input.clone(), HANDLE, move |f| {
            let mut v = SENTINEL as u64;
            // SAFETY: as above; the value is a writable `cuuint64_t`.
            untouched(unsafe { cuMemPoolGetAttribute(pl(f.h(h)), 5, (&raw mut v).cast()) }, v as usize)
        });
        t.add("cuMemAllocFromPoolAsync", format!("pool: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer; handles are looked up.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.h(h)), st(f.s)) }, d as usize)
        });
        t.add("cuDeviceSetMemPool", format!("pool: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuDeviceSetMemPool(0, pl(f.h(h))) }
        });
    }
    t.add(D, "device 0's default pool", VALUE, |f| {
        // SAFETY: a live handle; the default pool is refused.
        unsafe { cuMemPoolDestroy(pl(f.default_pool)) }
    });

    let set = |pool: usize, attr: i32, value: Option<u64>| {
        mempool_hostile::with_value(value, |ptr| {
            // SAFETY: `ptr` is null or points to a `cuuint64_t`, as wide as any attribute's
            // value (an `int` is read from its first four bytes: little endian).
            unsafe { cuMemPoolSetAttribute(pl(pool), attr, ptr) }
        })
    };
    let get = |pool: usize, attr: i32, out: bool| {
        let (rc, v) = mempool_hostile::with_out(out, |ptr| {
            // SAFETY: `ptr` is null or points to a `cuuint64_t`, room for any value.
            unsafe { cuMemPoolGetAttribute(pl(pool), attr, ptr) }
        });
        untouched(rc, v)
    };
    for attr in [0, 9, -1, 100] {
        t.add("cuMemPoolSetAttribute", format!("attribute {attr}"), VALUE, move |f| set(f.p, attr, Some(0)));
        t.add("cuMemPoolGetAttribute", format!("attribute {attr}"), VALUE, move |f| get(f.p, attr, true));
    }
    t.add("cuMemPoolSetAttribute", "null value", VALUE, move |f| set(f.p, 4, None));
    t.add("cuMemPoolGetAttribute", "null value", VALUE, move |f| get(f.p, 7, false));
    for (attr, v) in [(5, 0), (5, 1), (7, 0), (6, 1), (8, 1), (8, u64::MAX)] {
        t.add("cuMemPoolSetAttribute", format!("attribute {attr} = {v}"), VALUE, move |f| set(f.p, attr, Some(v)));
    }
    t.fresh("cuMemPoolGetAttribute", "without a current context", OK, move |f| get(f.p, 5, true));
    t.add("cuMemPoolTrimTo", "to SIZE_MAX (nothing to release)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuMemPoolTrimTo(pl(f.p), usize::MAX) }
    });

    const A: &str = "cuMemAllocFromPoolAsync";
    t.add(A, "null dptr", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocFromPoolAsync(null_mut(), 16, pl(f.p), st(f.s)) }
    });
    for (input, size, want) in
        [("size 0", 0, VALUE), ("size SIZE_MAX", usize::MAX, OOM), ("larger than the pool", POOL_SIZE + 1, OOM)]
    {
        t.add(A, input, want, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer, live handles.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, size, pl(f.p), st(f.s)) }, d as usize)
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(A, format!("stream: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: a valid out-pointer; handles are looked up.
            untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), st(f.h(h))) }, d as usize)
        });
        t.add("cuMemAllocAsync", format!("stream: {input}"), HANDLE, move |f| {
            let mut d = SENTINEL as CUdeviceptr;
            // SAFETY: as above.
            untouched(unsafe { cuMemAllocAsync(&mut d, 16, st(f.h(h))) }, d as usize)
        });
        t.add("cuMemFreeAsync", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up; nothing is freed.
            unsafe { cuMemFreeAsync(f.a, st(f.h(h))) }
        });
    }
    t.add(A, "a stream of device 1, a pool of device 0", CONTEXT, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, live handles.
        untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), st(f.s1)) }, d as usize)
    });
    t.fresh(A, "NULL stream without a current context", CONTEXT, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, a live pool.
        untouched(unsafe { cuMemAllocFromPoolAsync(&mut d, 16, pl(f.p), null_mut()) }, d as usize)
    });
    t.add("cuMemAllocAsync", "null dptr", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocAsync(null_mut(), 16, st(f.s)) }
    });
    t.add("cuMemAllocAsync", "size 0", VALUE, |f| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer, a live stream.
        untouched(unsafe { cuMemAllocAsync(&mut d, 0, st(f.s)) }, d as usize)
    });
    t.fresh("cuMemAllocAsync", "NULL stream without a current context", CONTEXT, |_| {
        let mut d = SENTINEL as CUdeviceptr;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuMemAllocAsync(&mut d, 16, null_mut()) }, d as usize)
    });
    t.add("cuMemFreeAsync", "0", VALUE, |f| {
        // SAFETY: refused: a null device pointer.
        unsafe { cuMemFreeAsync(0, st(f.s)) }
    });
    for (input, addr) in bad_device_pointers(true) {
        t.add("cuMemFreeAsync", input, VALUE, move |f| {
            // SAFETY: the emulator looks the address up; nothing is freed.
            unsafe { cuMemFreeAsync(addr(f), st(f.s)) }
        });
    }
    t.add("cuMemFreeAsync", "a stream of device 1, memory of device 0", CONTEXT, |f| {
        // SAFETY: live handles; the free is refused.
        unsafe { cuMemFreeAsync(f.a, st(f.s1)) }
    });

    for (entry, name) in [("cuDeviceGetDefaultMemPool", "pool_out"), ("cuDeviceGetMemPool", "pool")] {
        let call = move |out: *mut CUmemoryPool, dev: CUdevice| {
            // SAFETY: `out` is null or a writable `CUmemoryPool`.
            unsafe {
                if entry == "cuDeviceGetMemPool" {
                    cuDeviceGetMemPool(out, dev)
                } else {
                    cuDeviceGetDefaultMemPool(out, dev)
                }
            }
        };
        t.add(entry, format!("null {name}"), VALUE, move |_| call(null_mut(), 0));
        for dev in [-1, 3] {
            t.add(entry, format!("device {dev}"), DEVICE, move |_| {
                let mut p = SENTINEL as CUmemoryPool;
                untouched(call(&mut p, dev), p as usize)
            });
        }
    }
    t.add("cuDeviceSetMemPool", "device 3", DEVICE, |f| {
        // SAFETY: a live pool; the device is refused.
        unsafe { cuDeviceSetMemPool(3, pl(f.p)) }
    });
    t.add("cuDeviceSetMemPool", "a pool of device 1 for device 0", VALUE, |f| {
        // SAFETY: live handles; refused.
        unsafe { cuDeviceSetMemPool(0, pl(f.p1)) }
    });
}
/// Props travel into the row closures (its raw pointer field makes it neither `Send`
/// nor `Sync`).
#[derive(Clone, Copy)]
struct SendProps(CUmemPoolProps);
// SAFETY: the pointer field is never dereferenced (the library ignores it).
unsafe impl Send for SendProps {}
// SAFETY: as above.
unsafe impl Sync for SendProps {}
