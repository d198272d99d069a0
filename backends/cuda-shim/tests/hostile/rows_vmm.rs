//! Rows of `tests/hostile/main.rs` for the virtual-memory calls: null pointers, sizes 0, 1 and
//! `SIZE_MAX`, flags, every property field, garbage and released handles, addresses
//! outside a reservation, inside one, misaligned, mapped and unmapped, access
//! descriptors, granularity options. `CUDA_ERROR_INVALID_VALUE` for all of them but a
//! device that does not exist (`CUDA_ERROR_INVALID_DEVICE` where the driver lists it), a
//! fabric handle (`CUDA_ERROR_NOT_SUPPORTED`) and memory the device does not have
//! (`CUDA_ERROR_OUT_OF_MEMORY`).
//!
//! The rows share a fixture of their own, made at the first row that needs it: a range of
//! four granules with one chunk mapped (read-write) at its start, a spare chunk, a handle
//! already released and a range already freed.

use super::*;
use std::ffi::c_int;
use std::sync::OnceLock;

const G: usize = GRAN;

/// An address a row computes from the fixtures.
type At = Box<dyn Fn(&Fx) -> u64 + Send + Sync>;
/// An address and a size a row computes from the fixtures.
type Span = Box<dyn Fn(&Fx) -> (u64, usize) + Send + Sync>;
/// A handle value a row computes.
type Chunk = Box<dyn Fn() -> u64 + Send + Sync>;

struct Vfx {
    base: u64,
    chunk: u64,
    spare: u64,
    released: u64,
    freed_range: u64,
}

fn prop() -> CUmemAllocationProp {
    CUmemAllocationProp::device(0)
}

/// A props struct the rows can share between threads (its pointer field is null).
#[derive(Clone, Copy)]
struct P(CUmemAllocationProp);
// SAFETY: the pointer field is null or a made-up number, never dereferenced.
unsafe impl Send for P {}
// SAFETY: as above.
unsafe impl Sync for P {}

impl P {
    /// The props (a method, so a closure captures the whole `P`, not its field).
    fn get(&self) -> &CUmemAllocationProp {
        &self.0
    }
}

fn rw(device: i32) -> CUmemAccessDesc {
    CUmemAccessDesc::device(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
}

fn vfx() -> &'static Vfx {
    static V: OnceLock<Vfx> = OnceLock::new();
    V.get_or_init(|| {
        let p = prop();
        let [mut base, mut freed_range] = [0u64; 2];
        let [mut chunk, mut spare, mut released] = [0u64; 3];
        // SAFETY: valid out-pointers and props, and handles and addresses the library
        // returned.
        unsafe {
            check(cuMemAddressReserve(&mut base, 4 * G, 0, 0, 0), "reserving");
            check(cuMemCreate(&mut chunk, G, &p, 0), "a chunk");
            check(cuMemMap(base, G, 0, chunk, 0), "mapping it");
            check(cuMemSetAccess(base, G, &rw(0), 1), "its access");
            check(cuMemCreate(&mut spare, G, &p, 0), "a spare chunk");
            check(cuMemCreate(&mut released, G, &p, 0), "a chunk to release");
            check(cuMemRelease(released), "releasing it");
            check(cuMemAddressReserve(&mut freed_range, G, 0, 0, 0), "reserving");
            check(cuMemAddressFree(freed_range, G), "freeing it");
        }
        Vfx { base, chunk, spare, released, freed_range }
    })
}

/// Hostile properties and the code `cuMemCreate` answers (the granularity query: the same,
/// but `CUDA_ERROR_INVALID_VALUE` for a device that does not exist and success for the
/// fields it does not read, `gran`).
fn bad_props() -> Vec<(String, P, CUresult, CUresult)> {
    let with = |f: &dyn Fn(&mut CUmemAllocationProp)| {
        let mut p = prop();
        f(&mut p);
        P(p)
    };
    vec![
        ("type INVALID".into(), with(&|p| p.type_ = 0), VALUE, VALUE),
        ("type 2".into(), with(&|p| p.type_ = 2), VALUE, VALUE),
        ("location INVALID".into(), with(&|p| p.location.type_ = 0), VALUE, VALUE),
        ("location HOST".into(), with(&|p| p.location.type_ = 2), VALUE, VALUE),
        ("location -1".into(), with(&|p| p.location.type_ = -1), VALUE, VALUE),
        ("device 3 (of 3)".into(), with(&|p| p.location.id = 3), DEVICE, VALUE),
        ("device -1".into(), with(&|p| p.location.id = -1), DEVICE, VALUE),
        ("handle types WIN32".into(), with(&|p| p.requestedHandleTypes = 2), VALUE, OK),
        ("handle types 0x10".into(), with(&|p| p.requestedHandleTypes = 0x10), VALUE, OK),
        ("handle types FABRIC".into(), with(&|p| p.requestedHandleTypes = 8), SUPPORT, OK),
        ("win32HandleMetaData set".into(), with(&|p| p.win32HandleMetaData = 0x1234 as *mut c_void), VALUE, OK),
        ("compressionType GENERIC".into(), with(&|p| p.allocFlags.compressionType = 1), VALUE, OK),
        ("usage 0x8000".into(), with(&|p| p.allocFlags.usage = 0x8000), VALUE, OK),
        ("reserved bytes set".into(), with(&|p| p.allocFlags.reserved = [1, 0, 0, 0]), VALUE, OK),
    ]
}

/// Handles `cuMemRelease`, `cuMemMap` and the property query refuse.
fn bad_chunks() -> Vec<(String, Chunk)> {
    let mut v: Vec<(String, Chunk)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move || g as u64) as _)).collect();
    v.push(("0".into(), Box::new(|| 0)));
    v.push(("a handle already released".into(), Box::new(|| vfx().released)));
    v.push(("a mapped address".into(), Box::new(|| vfx().base)));
    v
}

/// Addresses that hold no reservation or mapping.
fn nowhere() -> Vec<(String, At)> {
    let mut v: Vec<(String, At)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g as u64) as _)).collect();
    v.push(("a range already freed".into(), Box::new(|_| vfx().freed_range)));
    v.push(("a pool allocation".into(), Box::new(|f| f.a)));
    v.push(("a heap buffer".into(), Box::new(|f| f.buf as u64)));
    v
}

pub(super) fn vmm_rows(t: &mut Table) {
    granularity_rows(t);
    reserve_rows(t);
    create_rows(t);
    map_rows(t);
    access_rows(t);
}

fn granularity_rows(t: &mut Table) {
    const E: &str = "cuMemGetAllocationGranularity";
    t.add(E, "null granularity", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemGetAllocationGranularity(null_mut(), &prop(), 0) }
    });
    t.add(E, "null prop", VALUE, |_| {
        let mut g = SENTINEL;
        // SAFETY: a null props pointer, refused before any read.
        untouched(unsafe { cuMemGetAllocationGranularity(&mut g, std::ptr::null(), 0) }, g)
    });
    let mut cases: Vec<(String, P, c_int, CUresult)> =
        bad_props().into_iter().map(|(input, p, _, want)| (input, p, 0, want)).collect();
    for option in [2, -1, 0xFFFF] {
        cases.push((format!("option {option}"), P(prop()), option, VALUE));
    }
    for (input, p, option, want) in cases {
        t.add(E, input, want, move |_| {
            let mut g = SENTINEL;
            // SAFETY: valid props and out-pointer.
            let rc = untouched(unsafe { cuMemGetAllocationGranularity(&mut g, p.get(), option) }, g);
            assert!(rc != OK || g == G, "granularity {g}");
            rc
        });
    }
    t.fresh(E, "recommended, without a current context", OK, |_| {
        let mut g = 0;
        // SAFETY: valid props and out-pointer.
        let rc = unsafe { cuMemGetAllocationGranularity(&mut g, &prop(), CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) };
        assert_eq!(g, G);
        rc
    });
}

fn reserve_rows(t: &mut Table) {
    const E: &str = "cuMemAddressReserve";
    t.add(E, "null ptr", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAddressReserve(null_mut(), G, 0, 0, 0) }
    });
    let cases: [(&str, usize, usize, u64, CUresult); 9] = [
        ("size 0", 0, 0, 0, VALUE),
        ("size 1", 1, 0, 0, VALUE),
        ("size granule + 1", G + 1, 0, 0, VALUE),
        ("size SIZE_MAX", usize::MAX, 0, 0, VALUE),
        ("size 2^62 (no such address space)", 1 << 62, 0, 0, OOM),
        ("flags 1", G, 0, 1, VALUE),
        ("alignment 3", G, 3, 0, VALUE),
        ("alignment SIZE_MAX", G, usize::MAX, 0, VALUE),
        ("alignment 2^62 (no such address space)", G, 1 << 62, 0, OOM),
    ];
    for (input, size, align, flags, want) in cases {
        t.add(E, input, want, move |_| {
            let mut p = SENTINEL as u64;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuMemAddressReserve(&mut p, size, align, 0, flags) }, p as usize)
        });
    }
    for (input, addr) in [("addr 0x1234 (a hint it cannot use: anywhere)", 0x1234u64), ("addr 0", 0)] {
        t.fresh(E, format!("{input}, without a current context"), OK, move |_| {
            let mut p = 0u64;
            // SAFETY: a valid out-pointer, then the range it received.
            unsafe {
                let rc = cuMemAddressReserve(&mut p, G, 4096, addr, 0);
                assert_eq!(p % G as u64, 0, "aligned to the granularity");
                check(cuMemAddressFree(p, G), "freeing it");
                rc
            }
        });
    }

    const F: &str = "cuMemAddressFree";
    let mut frees: Vec<(String, Span)> =
        nowhere().into_iter().map(|(n, a)| (n, Box::new(move |f: &Fx| (a(f), G)) as _)).collect();
    frees.push(("0".into(), Box::new(|_| (0, G))));
    frees.push(("a range still mapped".into(), Box::new(|_| (vfx().base, 4 * G))));
    frees.push(("not the whole size".into(), Box::new(|_| (vfx().base, G))));
    frees.push(("inside a range".into(), Box::new(|_| (vfx().base + G as u64, G))));
    frees.push(("size SIZE_MAX".into(), Box::new(|_| (vfx().base, usize::MAX))));
    for (input, a) in frees {
        t.add(F, input, VALUE, move |f| {
            let (p, size) = a(f);
            // SAFETY: addresses are looked up, never dereferenced.
            unsafe { cuMemAddressFree(p, size) }
        });
    }
}

fn create_rows(t: &mut Table) {
    const E: &str = "cuMemCreate";
    t.add(E, "null handle", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemCreate(null_mut(), G, &prop(), 0) }
    });
    t.add(E, "null prop", VALUE, |_| {
        let mut h = SENTINEL as u64;
        // SAFETY: a null props pointer, refused before any read.
        untouched(unsafe { cuMemCreate(&mut h, G, std::ptr::null(), 0) }, h as usize)
    });
    let mut cases: Vec<(String, P, usize, u64, CUresult)> = vec![
        ("size 0".into(), P(prop()), 0, 0, VALUE),
        ("size 1".into(), P(prop()), 1, 0, VALUE),
        ("size SIZE_MAX".into(), P(prop()), usize::MAX, 0, VALUE),
        ("size twice the device".into(), P(prop()), 2 * DEVICE_MEMORY, 0, OOM),
        ("flags 1".into(), P(prop()), G, 1, VALUE),
    ];
    cases.extend(bad_props().into_iter().map(|(input, p, want, _)| (input, p, G, 0, want)));
    for (input, p, size, flags, want) in cases {
        t.add(E, input, want, move |_| {
            let mut h = SENTINEL as u64;
            // SAFETY: a valid out-pointer and props.
            untouched(unsafe { cuMemCreate(&mut h, size, p.get(), flags) }, h as usize)
        });
    }
    t.fresh(E, "one granule of device 1, without a current context; its properties back", OK, |_| {
        let mut p = prop();
        p.location.id = 1;
        p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let mut h = 0u64;
        let mut back = CUmemAllocationProp::device(0);
        // SAFETY: a valid out-pointer and props, then the handle it received.
        unsafe {
            let rc = cuMemCreate(&mut h, G, &p, 0);
            check(cuMemGetAllocationPropertiesFromHandle(&mut back, h), "its properties");
            check(cuMemRelease(h), "releasing it");
            assert_eq!((back.location.id, back.requestedHandleTypes), (1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
            rc
        }
    });

    for (input, h) in bad_chunks() {
        t.add("cuMemRelease", input.clone(), VALUE, move |_| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuMemRelease(h()) }
        });
    }
    const Q: &str = "cuMemGetAllocationPropertiesFromHandle";
    t.add(Q, "null prop", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemGetAllocationPropertiesFromHandle(null_mut(), vfx().chunk) }
    });
    for (input, h) in bad_chunks() {
        t.add(Q, input, VALUE, move |_| {
            let mut p = CUmemAllocationProp::device(SENTINEL as i32);
            // SAFETY: a valid out-pointer; handles are looked up.
            let rc = unsafe { cuMemGetAllocationPropertiesFromHandle(&mut p, h()) };
            untouched(rc, p.location.id as usize)
        });
    }
}

fn map_rows(t: &mut Table) {
    const E: &str = "cuMemMap";
    let free_at = || vfx().base + G as u64;
    let cases: [(&str, usize, usize, u64, CUresult); 7] = [
        ("size 0", 0, 0, 0, VALUE),
        ("size 1", 1, 0, 0, VALUE),
        ("size SIZE_MAX", usize::MAX, 0, 0, VALUE),
        ("size two granules (past the chunk)", 2 * G, 0, 0, VALUE),
        ("offset one granule", G, G, 0, VALUE),
        ("offset SIZE_MAX", G, usize::MAX, 0, VALUE),
        ("flags 1", G, 0, 1, VALUE),
    ];
    for (input, size, offset, flags, want) in cases {
        t.add(E, input, want, move |_| {
            // SAFETY: addresses and handles are looked up, never dereferenced.
            unsafe { cuMemMap(free_at(), size, offset, vfx().spare, flags) }
        });
    }
    for (input, h) in bad_chunks() {
        t.add(E, format!("handle: {input}"), VALUE, move |_| {
            // SAFETY: as above.
            unsafe { cuMemMap(free_at(), G, 0, h(), 0) }
        });
    }
    let mut at = nowhere();
    at.push(("0".into(), Box::new(|_| 0)));
    at.push(("over the mapped chunk".into(), Box::new(|_| vfx().base)));
    at.push(("misaligned inside the range".into(), Box::new(|_| vfx().base + G as u64 + 4096)));
    for (input, a) in at {
        t.add(E, format!("at {input}"), VALUE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemMap(a(f), G, 0, vfx().spare, 0) }
        });
    }

    const U: &str = "cuMemUnmap";
    let mut unmaps: Vec<(String, Span)> =
        nowhere().into_iter().map(|(n, a)| (n, Box::new(move |f: &Fx| (a(f), G)) as _)).collect();
    unmaps.push(("0".into(), Box::new(|_| (0, G))));
    unmaps.push(("size 0".into(), Box::new(|_| (vfx().base, 0))));
    unmaps.push(("half the mapping".into(), Box::new(|_| (vfx().base, G / 2))));
    unmaps.push(("inside the mapping".into(), Box::new(|_| (vfx().base + 4096, G))));
    unmaps.push(("the mapping and an unmapped granule".into(), Box::new(|_| (vfx().base, 2 * G))));
    unmaps.push(("an unmapped granule of a range".into(), Box::new(|_| (vfx().base + G as u64, G))));
    unmaps.push(("size SIZE_MAX".into(), Box::new(|_| (vfx().base, usize::MAX))));
    for (input, a) in unmaps {
        t.add(U, input, VALUE, move |f| {
            let (p, size) = a(f);
            // SAFETY: addresses are looked up, never dereferenced.
            unsafe { cuMemUnmap(p, size) }
        });
    }
    t.fresh(U, "the whole mapping, without a current context; mapped again after", OK, |_| {
        let v = vfx();
        // SAFETY: the fixture's range and chunk.
        unsafe {
            let rc = cuMemUnmap(v.base, G);
            check(cuMemMap(v.base, G, 0, v.chunk, 0), "mapping it again");
            check(cuMemSetAccess(v.base, G, &rw(0), 1), "its access");
            rc
        }
    });

    const R: &str = "cuMemRetainAllocationHandle";
    t.add(R, "null handle", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemRetainAllocationHandle(null_mut(), vfx().base as *mut c_void) }
    });
    let mut addrs = nowhere();
    addrs.push(("0".into(), Box::new(|_| 0)));
    addrs.push(("an unmapped granule of a range".into(), Box::new(|_| vfx().base + G as u64)));
    for (input, a) in addrs {
        t.add(R, input, VALUE, move |f| {
            let mut h = SENTINEL as u64;
            // SAFETY: a valid out-pointer; addresses are looked up.
            untouched(unsafe { cuMemRetainAllocationHandle(&mut h, a(f) as *mut c_void) }, h as usize)
        });
    }
    t.add(R, "inside the mapping; released again", OK, |_| {
        let mut h = 0u64;
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            let rc = cuMemRetainAllocationHandle(&mut h, (vfx().base + 12345) as *mut c_void);
            assert_eq!(h, vfx().chunk);
            check(cuMemRelease(h), "releasing the retain");
            rc
        }
    });
}

fn access_rows(t: &mut Table) {
    const E: &str = "cuMemSetAccess";
    let base = || vfx().base;
    t.add(E, "null desc", VALUE, move |_| {
        // SAFETY: a null descriptor pointer, refused before any read.
        unsafe { cuMemSetAccess(base(), G, std::ptr::null(), 1) }
    });
    let d = |ty: c_int, id: c_int, flags: c_int| CUmemAccessDesc { location: CUmemLocation { type_: ty, id }, flags };
    let descs: [(&str, CUmemAccessDesc, usize, CUresult); 8] = [
        ("count 0", rw(0), 0, VALUE),
        ("flags 2", d(1, 0, 2), 1, VALUE),
        ("flags -1", d(1, 0, -1), 1, VALUE),
        ("location HOST", d(2, 0, 3), 1, VALUE),
        ("location INVALID", d(0, 0, 3), 1, VALUE),
        ("device 3 (of 3)", d(1, 3, 3), 1, DEVICE),
        ("device -1", d(1, -1, 3), 1, DEVICE),
        ("count SIZE_MAX, the first descriptor refused", d(1, 0, 7), usize::MAX, VALUE),
    ];
    for (input, desc, count, want) in descs {
        t.add(E, input, want, move |_| {
            // SAFETY: one readable descriptor; a larger count is refused at the first.
            unsafe { cuMemSetAccess(base(), G, &desc, count) }
        });
    }
    let mut ranges: Vec<(String, Span)> =
        nowhere().into_iter().map(|(n, a)| (n, Box::new(move |f: &Fx| (a(f), G)) as _)).collect();
    ranges.push(("0".into(), Box::new(|_| (0, G))));
    ranges.push(("size 0".into(), Box::new(|_| (vfx().base, 0))));
    ranges.push(("the mapping and an unmapped granule".into(), Box::new(|_| (vfx().base, 2 * G))));
    ranges.push(("half the mapping".into(), Box::new(|_| (vfx().base, G / 2))));
    ranges.push(("size SIZE_MAX".into(), Box::new(|_| (vfx().base, usize::MAX))));
    for (input, r) in ranges {
        t.add(E, input, VALUE, move |f| {
            let (p, size) = r(f);
            // SAFETY: one readable descriptor; addresses are looked up.
            unsafe { cuMemSetAccess(p, size, &rw(0), 1) }
        });
    }
    t.fresh(E, "exactly the mapping, read-write, without a current context", OK, move |_| {
        // SAFETY: one readable descriptor.
        unsafe { cuMemSetAccess(base(), G, &rw(0), 1) }
    });

    const A: &str = "cuMemGetAccess";
    let dev0 = CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 };
    t.add(A, "null flags", VALUE, move |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemGetAccess(null_mut(), &dev0, base()) }
    });
    t.add(A, "null location", VALUE, move |_| {
        let mut f = SENTINEL as u64;
        // SAFETY: a null location, refused before any read.
        untouched(unsafe { cuMemGetAccess(&mut f, std::ptr::null(), base()) }, f as usize)
    });
    let locations: [(&str, CUmemLocation, CUresult); 3] = [
        ("location HOST", CUmemLocation { type_: 2, id: 0 }, VALUE),
        ("device 3 (of 3)", CUmemLocation { type_: 1, id: 3 }, DEVICE),
        ("device -1", CUmemLocation { type_: 1, id: -1 }, DEVICE),
    ];
    for (input, l, want) in locations {
        t.add(A, input, want, move |_| {
            let mut f = SENTINEL as u64;
            // SAFETY: valid pointers; addresses are looked up.
            untouched(unsafe { cuMemGetAccess(&mut f, &l, base()) }, f as usize)
        });
    }
    let mut addrs = nowhere();
    addrs.push(("0".into(), Box::new(|_| 0)));
    addrs.push(("an unmapped granule of a range".into(), Box::new(|_| vfx().base + G as u64)));
    for (input, a) in addrs {
        t.add(A, input, VALUE, move |f| {
            let mut flags = SENTINEL as u64;
            // SAFETY: valid pointers; addresses are looked up.
            untouched(unsafe { cuMemGetAccess(&mut flags, &dev0, a(f)) }, flags as usize)
        });
    }
    t.fresh(A, "inside the mapping, without a current context: read-write", OK, move |_| {
        let mut flags = 0u64;
        // SAFETY: valid pointers; addresses are looked up.
        let rc = unsafe { cuMemGetAccess(&mut flags, &dev0, base() + 100) };
        assert_eq!(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u64);
        rc
    });
}
