//! Rows for the external-allocator registry (`aclrtAllocator*`, contract §16): every check
//! answers 100000 as on CANN, a stream handle that is not a live stream is 107017 at
//! registration, and no call needs a current device. Each row makes and destroys its own
//! descriptors and leaves no stream registered.

use super::*;

/// The allocator object the rows register: a plain value, never dereferenced.
const OBJ: usize = 0x0b1e_c700;

extern "C" fn no_alloc(_: *mut c_void, _: usize) -> *mut c_void {
    null_mut()
}
extern "C" fn no_free(_: *mut c_void, _: *mut c_void) {}
extern "C" fn no_advise(_: *mut c_void, _: usize, _: *mut c_void) -> *mut c_void {
    null_mut()
}
extern "C" fn same_addr(block: *mut c_void) -> *mut c_void {
    block
}

/// Which fields a row's descriptor gets.
#[derive(Clone, Copy)]
struct Set {
    obj: bool,
    alloc: bool,
    free: bool,
    advise: bool,
    addr: bool,
}

const ALL: Set = Set { obj: true, alloc: true, free: true, advise: true, addr: true };

/// A descriptor with the fields of `set`.
fn desc(set: Set) -> aclrtAllocatorDesc {
    // SAFETY: takes no arguments; the setters get the live descriptor just made and
    // plain values the library stores.
    unsafe {
        let d = aclrtAllocatorCreateDesc();
        assert!(!d.is_null(), "aclrtAllocatorCreateDesc: {}", message());
        if set.obj {
            check(aclrtAllocatorSetObjToDesc(d, sv(OBJ)), "the object");
        }
        if set.alloc {
            check(aclrtAllocatorSetAllocFuncToDesc(d, Some(no_alloc)), "the alloc callback");
        }
        if set.free {
            check(aclrtAllocatorSetFreeFuncToDesc(d, Some(no_free)), "the free callback");
        }
        if set.advise {
            check(aclrtAllocatorSetAllocAdviseFuncToDesc(d, Some(no_advise)), "the advise callback");
        }
        if set.addr {
            check(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, Some(same_addr)), "the getAddr callback");
        }
        d
    }
}

fn destroy(d: aclrtAllocatorDesc) {
    // SAFETY: a live descriptor of the row.
    check(unsafe { aclrtAllocatorDestroyDesc(d) }, "destroying the row's descriptor");
}

/// A destroyed descriptor's value.
fn dead_desc() -> aclrtAllocatorDesc {
    let d = desc(ALL);
    destroy(d);
    d
}

/// What stream `s` has registered: the code, and the descriptor and object written.
fn fetch(s: usize) -> (aclError, usize, usize) {
    let (mut d, mut o) = (SENTINEL as aclrtAllocatorDesc, SENTINEL as aclrtAllocator);
    // SAFETY: valid out-pointers; the other outputs may be NULL.
    let rc =
        unsafe { aclrtAllocatorGetByStream(sv(s), &mut d, &mut o, null_mut(), null_mut(), null_mut(), null_mut()) };
    (untouched(rc, d as usize), d as usize, o as usize)
}

/// Registers a full descriptor on `s` (asserting success), runs `body`, then unregisters
/// and destroys it; returns `body`'s code.
fn registered(s: usize, body: impl FnOnce(aclrtAllocatorDesc) -> aclError) -> aclError {
    let d = desc(ALL);
    // SAFETY: a live stream and descriptor.
    check(unsafe { aclrtAllocatorRegister(sv(s), d) }, "registering the row's descriptor");
    let rc = body(d);
    // SAFETY: a stream handle (unregistering takes any).
    check(unsafe { aclrtAllocatorUnregister(sv(s)) }, "unregistering");
    destroy(d);
    rc
}

/// Makes a descriptor value for a row.
type MakeDesc = Box<dyn Fn(&Fx) -> usize + Send + Sync>;

/// Descriptor values that are not live descriptors (NULL apart): garbage, a destroyed
/// one, handles of other kinds.
fn bad_descs() -> Vec<(String, MakeDesc)> {
    let mut v: Vec<(String, MakeDesc)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g) as MakeDesc)).collect();
    v.push(("a destroyed descriptor".into(), Box::new(|_: &Fx| dead_desc() as usize)));
    v.push(("a stream handle".into(), Box::new(|f: &Fx| f.s)));
    v.push(("a pool handle".into(), Box::new(|f: &Fx| f.p)));
    v.push(("an event handle".into(), Box::new(|f: &Fx| f.e)));
    v
}

/// The five setters.
const SETTERS: [&str; 5] = [
    "aclrtAllocatorSetObjToDesc",
    "aclrtAllocatorSetAllocFuncToDesc",
    "aclrtAllocatorSetFreeFuncToDesc",
    "aclrtAllocatorSetAllocAdviseFuncToDesc",
    "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
];

/// Calls setter `entry` on `d` with a value, or NULL when `!set`.
fn set_value(entry: &str, d: aclrtAllocatorDesc, set: bool) -> aclError {
    // SAFETY: the descriptor is looked up in the library's registry, never dereferenced;
    // the values are stored, never called.
    unsafe {
        match entry {
            "aclrtAllocatorSetObjToDesc" => aclrtAllocatorSetObjToDesc(d, sv(if set { OBJ } else { 0 })),
            "aclrtAllocatorSetAllocFuncToDesc" => aclrtAllocatorSetAllocFuncToDesc(d, set.then_some(no_alloc as _)),
            "aclrtAllocatorSetFreeFuncToDesc" => aclrtAllocatorSetFreeFuncToDesc(d, set.then_some(no_free as _)),
            "aclrtAllocatorSetAllocAdviseFuncToDesc" => {
                aclrtAllocatorSetAllocAdviseFuncToDesc(d, set.then_some(no_advise as _))
            }
            _ => aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, set.then_some(same_addr as _)),
        }
    }
}

pub(super) fn allocator_rows(t: &mut Table) {
    desc_rows(t);
    register_rows(t);
    fetch_rows(t);
}

fn desc_rows(t: &mut Table) {
    for entry in ["aclrtAllocatorCreateDesc", "aclrtAllocatorDestroyDesc"] {
        t.add(entry, "a new descriptor, destroyed again", OK, |_| {
            // SAFETY: takes no arguments.
            let d = unsafe { aclrtAllocatorCreateDesc() };
            assert!(!d.is_null(), "no descriptor: {}", message());
            // SAFETY: the live descriptor just made.
            unsafe { aclrtAllocatorDestroyDesc(d) }
        });
        t.fresh(entry, "without a current device (none needed)", OK, |_| {
            // SAFETY: takes no arguments.
            let d = unsafe { aclrtAllocatorCreateDesc() };
            assert!(!d.is_null(), "no descriptor: {}", message());
            // SAFETY: the live descriptor just made.
            unsafe { aclrtAllocatorDestroyDesc(d) }
        });
    }
    t.add("aclrtAllocatorDestroyDesc", "null", PARAM, |_| {
        // SAFETY: NULL is refused before any lookup.
        unsafe { aclrtAllocatorDestroyDesc(null_mut()) }
    });
    t.add("aclrtAllocatorDestroyDesc", "a descriptor still registered (the registration stays)", OK, |f| {
        let d = desc(ALL);
        // SAFETY: a live stream and descriptor; then the descriptor is destroyed.
        unsafe {
            check(aclrtAllocatorRegister(sv(f.s), d), "registering");
            let rc = aclrtAllocatorDestroyDesc(d);
            let (got, dd, o) = fetch(f.s);
            assert_eq!((got, dd, o), (OK, d as usize, OBJ), "the registration after destroying its descriptor");
            check(aclrtAllocatorUnregister(sv(f.s)), "unregistering");
            rc
        }
    });
    for (input, bad) in bad_descs() {
        t.add("aclrtAllocatorDestroyDesc", input.clone(), PARAM, move |f| {
            // SAFETY: descriptors are looked up in the library's registry, never dereferenced.
            unsafe { aclrtAllocatorDestroyDesc(sv(bad(f))) }
        });
    }
    let nothing = Set { obj: false, alloc: false, free: false, advise: false, addr: false };
    for entry in SETTERS {
        t.add(entry, "null descriptor", PARAM, move |_| set_value(entry, null_mut(), true));
        t.add(entry, "null value", PARAM, move |_| {
            let d = desc(nothing);
            let rc = set_value(entry, d, false);
            destroy(d);
            rc
        });
        t.add(entry, "null descriptor and null value", PARAM, move |_| set_value(entry, null_mut(), false));
        t.fresh(entry, "a live descriptor, without a current device", OK, move |_| {
            let d = desc(nothing);
            let rc = set_value(entry, d, true);
            destroy(d);
            rc
        });
        for (input, bad) in bad_descs() {
            t.add(entry, input, PARAM, move |f| set_value(entry, sv(bad(f)), true));
        }
    }
}

fn register_rows(t: &mut Table) {
    const R: &str = "aclrtAllocatorRegister";
    const U: &str = "aclrtAllocatorUnregister";
    t.add(R, "null stream", PARAM, |_| {
        let d = desc(ALL);
        // SAFETY: NULL is refused first.
        let rc = unsafe { aclrtAllocatorRegister(null_mut(), d) };
        destroy(d);
        rc
    });
    t.add(R, "null descriptor", PARAM, |f| {
        // SAFETY: NULL is refused before any lookup.
        unsafe { aclrtAllocatorRegister(sv(f.s), null_mut()) }
    });
    let none = Set { obj: true, alloc: true, free: true, advise: false, addr: true };
    for (input, set) in [
        ("a descriptor without its object", Set { obj: false, ..ALL }),
        ("a descriptor without its alloc callback", Set { alloc: false, ..ALL }),
        ("a descriptor without its free callback", Set { free: false, ..ALL }),
        ("a descriptor without its getAddrFromBlock callback", Set { addr: false, ..ALL }),
        ("a descriptor with nothing set", Set { obj: false, alloc: false, free: false, advise: false, addr: false }),
    ] {
        t.add(R, input, PARAM, move |f| {
            let d = desc(set);
            // SAFETY: a live stream and descriptor.
            let first = unsafe { aclrtAllocatorRegister(sv(f.s), d) };
            assert_eq!(fetch(f.s).0, PARAM, "a refused registration left one behind");
            // Again, so that the row's message is the registration's.
            // SAFETY: as above.
            let rc = unsafe { aclrtAllocatorRegister(sv(f.s), d) };
            assert_eq!(rc, first, "the same answer twice");
            destroy(d);
            rc
        });
    }
    t.add(R, "a descriptor without the optional advise callback", OK, move |f| {
        let d = desc(none);
        // SAFETY: a live stream and descriptor.
        let rc = unsafe { aclrtAllocatorRegister(sv(f.s), d) };
        // SAFETY: a stream handle.
        check(unsafe { aclrtAllocatorUnregister(sv(f.s)) }, "unregistering");
        destroy(d);
        rc
    });
    for (input, bad) in bad_descs() {
        t.add(R, input, PARAM, move |f| {
            // SAFETY: descriptors are looked up in the library's registry, never dereferenced.
            unsafe { aclrtAllocatorRegister(sv(f.s), sv(bad(f))) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(R, input, HANDLE, move |f| {
            let d = desc(ALL);
            // SAFETY: stream handles are looked up in the library's registry.
            let rc = unsafe { aclrtAllocatorRegister(sv(f.h(h)), d) };
            destroy(d);
            rc
        });
    }
    t.add(R, "twice on a stream (the last wins)", OK, |f| {
        registered(f.s, |first| {
            let d = desc(ALL);
            // SAFETY: a live stream and descriptor.
            let rc = unsafe { aclrtAllocatorRegister(sv(f.s), d) };
            let got = fetch(f.s);
            assert_eq!(got, (OK, d as usize, OBJ), "the second registration replaces the first ({first:?})");
            destroy(d);
            rc
        })
    });
    t.add(R, "a stream of another device (no context check)", OK, |f| registered(f.s1, |_| OK));
    t.fresh(R, "without a current device (none needed)", OK, |f| registered(f.s, |_| OK));
    t.add(R, "a stream destroyed afterwards (its registration goes with it)", OK, |_| {
        let mut s: aclrtStream = null_mut();
        let d = desc(ALL);
        // SAFETY: a valid out-pointer; then the live stream and descriptor.
        let rc = unsafe {
            check(aclrtCreateStream(&mut s), "a row stream");
            let rc = aclrtAllocatorRegister(s, d);
            check(aclrtDestroyStream(s), "destroying the row stream");
            rc
        };
        assert_eq!(fetch(s as usize).0, PARAM, "a destroyed stream keeps its registration");
        destroy(d);
        rc
    });
    t.add(U, "null", PARAM, |_| {
        // SAFETY: NULL is refused.
        unsafe { aclrtAllocatorUnregister(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(U, format!("{input} (nothing registered: success, as CANN)"), OK, move |f| {
            // SAFETY: the value is only a key of the registrations.
            unsafe { aclrtAllocatorUnregister(sv(f.h(h))) }
        });
    }
    t.add(U, "a live stream with nothing registered", OK, |f| {
        // SAFETY: a live stream.
        unsafe { aclrtAllocatorUnregister(sv(f.s)) }
    });
    t.fresh(U, "a registered stream, without a current device", OK, |f| {
        let d = desc(ALL);
        // SAFETY: a live stream and descriptor.
        let rc = unsafe {
            check(aclrtAllocatorRegister(sv(f.s), d), "registering");
            aclrtAllocatorUnregister(sv(f.s))
        };
        assert_eq!(fetch(f.s).0, PARAM, "still registered after unregistering");
        destroy(d);
        rc
    });
}

fn fetch_rows(t: &mut Table) {
    const G: &str = "aclrtAllocatorGetByStream";
    t.add(G, "null allocatorDesc (checked before the stream)", PARAM, |_| {
        // SAFETY: NULL is refused first.
        unsafe {
            aclrtAllocatorGetByStream(
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        }
    });
    t.add(G, "null stream", PARAM, |_| {
        let mut d = SENTINEL as aclrtAllocatorDesc;
        // SAFETY: a valid out-pointer; NULL stream refused.
        let rc = unsafe {
            aclrtAllocatorGetByStream(null_mut(), &mut d, null_mut(), null_mut(), null_mut(), null_mut(), null_mut())
        };
        untouched(rc, d as usize)
    });
    t.add(G, "a live stream with nothing registered", PARAM, |f| fetch(f.s).0);
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(G, input, PARAM, move |f| fetch(f.h(h)).0);
    }
    t.add(G, "a registered stream, every output", OK, |f| {
        registered(f.s, |d| {
            let (mut dd, mut o) = (null_mut(), null_mut());
            let (mut a, mut fr, mut ad, mut g) = (None, None, None, None);
            // SAFETY: valid out-pointers.
            let rc = unsafe { aclrtAllocatorGetByStream(sv(f.s), &mut dd, &mut o, &mut a, &mut fr, &mut ad, &mut g) };
            assert_eq!((dd, o as usize), (d, OBJ));
            let addr = |f: Option<usize>| f.unwrap_or(0);
            assert_eq!(addr(a.map(|f| f as usize)), no_alloc as *const () as usize, "alloc as set");
            assert_eq!(addr(fr.map(|f| f as usize)), no_free as *const () as usize, "free as set");
            assert_eq!(addr(ad.map(|f| f as usize)), no_advise as *const () as usize, "advise as set");
            assert_eq!(addr(g.map(|f| f as usize)), same_addr as *const () as usize, "getAddr as set");
            rc
        })
    });
    t.add(G, "a registered stream, only allocatorDesc", OK, |f| registered(f.s, |_| fetch(f.s).0));
    t.fresh(G, "a registered stream, without a current device", OK, |f| registered(f.s, |_| fetch(f.s).0));
    t.add(G, "setters after registering do not change the registration", OK, |f| {
        registered(f.s, |d| {
            // SAFETY: the live descriptor; a plain value.
            check(unsafe { aclrtAllocatorSetObjToDesc(d, sv(OBJ + 16)) }, "a new object");
            let got = fetch(f.s);
            assert_eq!(got.2, OBJ, "the registration took a copy at aclrtAllocatorRegister");
            got.0
        })
    });
}
