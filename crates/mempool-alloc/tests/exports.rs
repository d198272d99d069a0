//! Every export, called in process as a framework calls it, over the emulator (two devices
//! of 1 GiB, the checker on): the protocol's happy path, host threads, and one trial per
//! hostile input, each checking the documented answer, a reason in `mempool_last_error()`,
//! and that nothing was lost (a live allocation stays usable and freeable).
//!
//! A libtest-mimic harness: `main` sets the environment before the first call (the library
//! reads it once per process).

use libtest_mimic::{Arguments, Failed, Trial};
use mempool_alloc::*;
use std::ffi::{CStr, c_int, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};

const MIB: usize = 1 << 20;

fn last() -> Option<String> {
    let p = mempool_last_error();
    // SAFETY: NULL or the thread's NUL-terminated message, valid until its next call.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn stats(device: c_int) -> Stats {
    let mut s = Stats::default();
    // SAFETY: a valid, sized `Stats`.
    assert_eq!(unsafe { mempool_stats(device, &mut s) }, 0, "{:?}", last());
    s
}

fn alloc(size: usize, device: c_int) -> *mut c_void {
    // SAFETY: NULL is the default stream.
    unsafe { mempool_alloc(size, device, null_mut()) }
}

fn free(p: *mut c_void, size: usize, device: c_int) {
    // SAFETY: NULL is the default stream.
    unsafe { mempool_free(p, size, device, null_mut()) }
}

/// Runs `bad` with a live allocation on device 1 beside it; `bad` returns whether the answer
/// was the documented one. Then: a reason was given (when `reason`), the allocation count is
/// unchanged, and the allocation is still usable and freeable.
fn hostile(reason: bool, bad: impl FnOnce(*mut c_void) -> bool) -> Result<(), Failed> {
    let keep = alloc(4096, 1);
    if keep.is_null() {
        return Err(format!("setup: {:?}", last()).into());
    }
    let before = stats(1).allocations;
    if !bad(keep) {
        return Err(format!("not the documented answer (last error {:?})", last()).into());
    }
    let why = last();
    if reason && why.is_none() {
        return Err("no reason in mempool_last_error()".into());
    }
    if stats(1).allocations != before {
        return Err("the allocation count changed".into());
    }
    // SAFETY: 4096 live bytes of host-addressable emulator memory.
    unsafe { std::ptr::write_bytes(keep.cast::<u8>(), 1, 4096) };
    free(keep, 4096, 1);
    if last().is_some() || stats(1).allocations != before - 1 {
        return Err(format!("the allocation was lost: {:?}", last()).into());
    }
    println!("    reason: {}", why.unwrap_or_else(|| "(none, as documented)".into()));
    Ok(())
}

/// A hostile row: its name, whether it leaves a reason, and the bad call (given a live
/// allocation), true when the answer was the documented one.
type Row = (&'static str, bool, fn(*mut c_void) -> bool);

fn rows() -> Vec<Row> {
    vec![
        ("free_garbage_pointer", true, |_| {
            free(0x1234_5678 as *mut c_void, 64, 1);
            true
        }),
        ("free_foreign_host_pointer", true, |_| {
            let mut local = [0u8; 64];
            free(local.as_mut_ptr().cast(), 64, 1);
            true
        }),
        ("free_interior_pointer", true, |keep| {
            // SAFETY: inside the 4096-byte allocation (only the address is used).
            free(unsafe { keep.cast::<u8>().add(512) }.cast(), 4096 - 512, 1);
            true
        }),
        ("free_wrong_size", true, |keep| {
            free(keep, 4095, 1);
            true
        }),
        ("free_wrong_device", true, |keep| {
            free(keep, 4096, 0);
            true
        }),
        ("free_negative_device", true, |keep| {
            free(keep, 4096, -1);
            true
        }),
        ("free_unknown_device", true, |keep| {
            free(keep, 4096, 99);
            true
        }),
        ("free_null_does_nothing", false, |_| {
            free(null_mut(), 0, 1);
            last().is_none()
        }),
        ("double_free", true, |_| {
            let p = alloc(100, 1);
            free(p, 100, 1);
            free(p, 100, 1);
            !p.is_null()
        }),
        ("free_with_a_foreign_stream", true, |keep| {
            // SAFETY: a handle the emulator backend does not take; it is refused, not used.
            unsafe { mempool_free(keep, 4096, 1, 0x40 as *mut c_void) };
            true
        }),
        ("alloc_zero_bytes", true, |_| alloc(0, 1).is_null()),
        ("alloc_4_eib", true, |_| alloc(1 << 62, 1).is_null()),
        ("alloc_size_max", true, |_| alloc(usize::MAX, 1).is_null()),
        ("alloc_negative_device", true, |_| alloc(64, -1).is_null()),
        ("alloc_unknown_device", true, |_| alloc(64, 99).is_null() && alloc(64, c_int::MAX).is_null()),
        ("alloc_foreign_stream", true, |_| {
            // SAFETY: a handle the emulator backend does not take; it is refused, not used.
            unsafe { mempool_alloc(64, 1, 0x40 as *mut c_void) }.is_null()
        }),
        ("record_stream_null", true, |_| {
            // SAFETY: NULL pointer: refused.
            unsafe { mempool_record_stream(null_mut(), null_mut()) };
            true
        }),
        ("record_stream_unknown_pointer", true, |_| {
            // SAFETY: an address the library does not know: refused.
            unsafe { mempool_record_stream(0x1234_5678 as *mut c_void, null_mut()) };
            true
        }),
        ("record_stream_foreign_stream", true, |keep| {
            // SAFETY: a handle the emulator backend does not take; it is refused, not used.
            unsafe { mempool_record_stream(keep, 0x40 as *mut c_void) };
            true
        }),
        ("stats_null", true, |_| {
            // SAFETY: NULL is refused before any access.
            unsafe { mempool_stats(0, null_mut()) == -1 }
        }),
        ("stats_unknown_device", true, |_| {
            let mut s = Stats::default();
            // SAFETY: a valid, sized `Stats`.
            unsafe { mempool_stats(-1, &mut s) == -1 && mempool_stats(99, &mut s) == -1 }
        }),
        ("stats_version_0", true, |_| {
            let mut s = Stats { version: 0, ..Stats::default() };
            // SAFETY: a valid `Stats`; a bad header is refused before any write.
            unsafe { mempool_stats(0, &mut s) == -1 }
        }),
        ("stats_size_too_small", true, |_| {
            let mut s = Stats { size: 4, used_high: 77, ..Stats::default() };
            // SAFETY: a valid `Stats`; a bad header is refused before any write.
            unsafe { mempool_stats(0, &mut s) == -1 && s.used_high == 77 }
        }),
        ("stats_short_size_writes_no_more", false, |_| {
            let mut s = Stats { size: 16, used_high: 77, ..Stats::default() };
            // SAFETY: a valid `Stats`, of which the library may write 16 bytes.
            let ok = unsafe { mempool_stats(1, &mut s) } == 0;
            ok && s.size == 16 && s.used_high == 77 && s.version == STATS_VERSION
        }),
        // SAFETY: NULL observer: refused.
        ("on_oom_null", true, |_| unsafe { mempool_on_oom(None, null_mut()) } == -1),
        ("fraction_nan", false, |_| fraction_refused(f64::NAN, 1)),
        ("fraction_zero", false, |_| fraction_refused(0.0, 1)),
        ("fraction_negative", false, |_| fraction_refused(-0.5, 1)),
        ("fraction_above_one", false, |_| fraction_refused(1.5, 1)),
        ("fraction_infinite", false, |_| fraction_refused(f64::INFINITY, 1)),
        ("fraction_negative_device", false, |_| fraction_refused(0.5, -1)),
        ("fraction_unknown_device", false, |_| fraction_refused(0.5, 99)),
        ("init_negative", true, |_| {
            mempool_init(-1);
            true
        }),
        ("init_below_a_device_in_use", true, |_| {
            mempool_init(1);
            true
        }),
        ("init_too_many", true, |_| {
            mempool_init(65);
            true
        }),
        ("reset_peak_unknown_device", true, |_| mempool_reset_peak_stats(99) == -1),
        // The emulator has no external-allocator registry: a clear refusal, nothing kept.
        ("register_allocator_on_the_emulator", true, |_| {
            register(1, 0x1000) == -1 && last().is_some_and(|m| m.contains("no external-allocator registry"))
        }),
        ("register_allocator_null_stream", true, |_| register(1, 0) == -1),
        ("register_allocator_unknown_device", true, |_| register(99, 0x1000) == -1),
        ("register_allocator_negative_device", true, |_| register(-1, 0x1000) == -1),
        ("unregister_allocator_never_registered", true, |_| unregister(1, 0x1000) == -1),
        ("unregister_allocator_null_stream", true, |_| unregister(1, 0) == -1),
        ("unregister_allocator_unknown_device", true, |_| unregister(99, 0x1000) == -1),
    ]
}

/// `mempool_register_stream_allocator` with a raw stream value.
fn register(device: c_int, stream: usize) -> c_int {
    // SAFETY: the stream value is refused or handed to the backend, which checks it; the
    // emulator takes no raw stream.
    unsafe { mempool_register_stream_allocator(device, stream as *mut c_void) }
}

/// `mempool_unregister_stream_allocator` with a raw stream value.
fn unregister(device: c_int, stream: usize) -> c_int {
    // SAFETY: the stream value is only looked up among the library's registrations.
    unsafe { mempool_unregister_stream_allocator(device, stream as *mut c_void) }
}

/// Sets a bad fraction; the answer is right when a reason was given and the limit stayed
/// as it was (the reason is checked here: reading the limit clears it).
fn fraction_refused(f: f64, device: c_int) -> bool {
    let before = stats(1).memory_limit;
    mempool_set_memory_fraction(f, device);
    let refused = last().is_some();
    refused && stats(1).memory_limit == before
}

static OOM_CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn on_oom(device: c_int, size: usize, stats: *const Stats, user: *mut c_void) {
    assert_eq!(user as usize, 0x5eed);
    // SAFETY: the library passes its statistics, alive across the call.
    let s = unsafe { &*stats };
    if device == 0 && size == 512 * MIB && s.memory_limit == 256 * MIB as u64 {
        OOM_CALLS.fetch_add(1, Ordering::Relaxed);
    }
}

fn protocol() -> Result<(), Failed> {
    mempool_init(2);
    if last().is_some() {
        return Err(format!("init: {:?}", last()).into());
    }
    let backend = mempool_backend();
    // SAFETY: a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(backend) }.to_string_lossy();
    if !name.starts_with("emulator (2 devices") {
        return Err(format!("backend {name}").into());
    }
    let sizes = [1usize, 511, 512, 4096, 3 * MIB, 40 * MIB];
    let ptrs: Vec<_> = sizes.iter().map(|&n| alloc(n, 0)).collect();
    if ptrs.iter().any(|p| p.is_null()) {
        return Err(format!("alloc: {:?}", last()).into());
    }
    let s = stats(0);
    let asked: usize = sizes.iter().sum();
    if s.requested_current != asked as u64
        || s.allocations != 6
        || s.small_wasted != s.small_held_current - s.requested_current
    {
        return Err(format!("{s:?}").into());
    }
    for (p, n) in ptrs.into_iter().zip(sizes) {
        free(p, n, 0);
    }
    mempool_empty_cache();
    let s = stats(0);
    if (s.allocations, s.reserved_current, s.requested_current) != (0, 0, 0) || s.requested_high != asked as u64 {
        return Err(format!("after empty_cache: {s:?}").into());
    }
    if mempool_reset_peak_stats(0) != 0 || stats(0).requested_high != 0 {
        return Err("reset_peak_stats".into());
    }
    // The fraction and the observer.
    // SAFETY: a function of the declared type, callable from any thread.
    if unsafe { mempool_on_oom(Some(on_oom), 0x5eed as *mut c_void) } != 0 {
        return Err(format!("on_oom: {:?}", last()).into());
    }
    mempool_set_memory_fraction(0.25, 0);
    let p = alloc(512 * MIB, 0);
    let why = last().unwrap_or_default();
    if !p.is_null() || OOM_CALLS.load(Ordering::Relaxed) != 1 || !why.contains("fraction") {
        return Err(format!("over the fraction: {p:?}, {why}").into());
    }
    let s = stats(0);
    if s.oom_count != 1 || s.memory_limit != 256 * MIB as u64 || s.reserved_current > s.memory_limit {
        return Err(format!("{s:?}").into());
    }
    mempool_set_memory_fraction(1.0, 0);
    let p = alloc(512 * MIB, 0);
    if p.is_null() {
        return Err(format!("with the whole device: {:?}", last()).into());
    }
    free(p, 512 * MIB, 0);
    Ok(())
}

fn threads() -> Result<(), Failed> {
    let workers: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || -> Result<(), String> {
                for i in 0..500usize {
                    let n = 1 + (i * 7919 + t * 104_729) % (2 * MIB);
                    let p = alloc(n, (t % 2) as c_int);
                    if p.is_null() {
                        return Err(format!("thread {t}: {:?}", last()));
                    }
                    // SAFETY: `n` live bytes of host-addressable emulator memory.
                    unsafe { std::ptr::write_bytes(p.cast::<u8>(), t as u8, n) };
                    free(p, n, (t % 2) as c_int);
                    if let Some(e) = last() {
                        return Err(format!("thread {t}: {e}"));
                    }
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().map_err(|_| "a thread panicked")??;
    }
    let (a, b) = (stats(0), stats(1));
    if a.allocations != 0 || b.allocations != 0 || a.stream_order_violations + b.stream_order_violations != 0 {
        return Err(format!("{a:?} {b:?}").into());
    }
    Ok(())
}

/// The history: off by default (nothing recorded), then on, dumped as a snapshot that the
/// trace tool's importer reads back with the same allocations and frees; bad paths refused.
fn history() -> Result<(), Failed> {
    use mempool_trace::Op;
    use mempool_trace::import::{ImportOptions, import};
    let dir = std::env::temp_dir().join(format!("mempool-alloc-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dump = |name: &str| -> Result<Vec<u8>, Failed> {
        let path = dir.join(name);
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        if unsafe { mempool_dump_snapshot(c.as_ptr()) } != 0 {
            return Err(format!("dump: {:?}", last()).into());
        }
        Ok(std::fs::read(&path).map_err(|e| e.to_string())?)
    };
    let p = alloc(1000, 1);
    free(p, 1000, 1);
    let off = import(&dump("off.pickle")?, &ImportOptions { device: Some(1) });
    if off.as_ref().is_ok_and(|i| !i.trace.rows.is_empty()) {
        return Err("recorded while off".into());
    }
    if mempool_record_history(1000) != 0 {
        return Err(format!("record_history: {:?}", last()).into());
    }
    let sizes = [100usize, 5000, 3 << 20];
    let ptrs: Vec<_> = sizes.iter().map(|&n| alloc(n, 1)).collect();
    for (&p, &n) in ptrs.iter().zip(&sizes).rev() {
        free(p, n, 1);
    }
    let keep = alloc(777, 1);
    let imported =
        import(&dump("on.pickle")?, &ImportOptions { device: Some(1) }).map_err(|e| format!("import: {e}"))?;
    let mut want = Vec::new();
    for (&p, &n) in ptrs.iter().zip(&sizes) {
        want.push(("allocate", p as u64, n as u64));
    }
    for (&p, &n) in ptrs.iter().zip(&sizes).rev() {
        want.push(("free", p as u64, n as u64));
    }
    want.push(("allocate", keep as u64, 777));
    let got: Vec<_> = imported
        .trace
        .rows
        .iter()
        .filter_map(|r| match r.op {
            Op::Allocate { ptr, size, .. } => Some(("allocate", ptr, size)),
            Op::Free { ptr, size, .. } => Some(("free", ptr, size)),
            _ => None,
        })
        .collect();
    if got != want {
        return Err(format!("the snapshot's events {got:?}, not {want:?}").into());
    }
    free(keep, 777, 1);
    mempool_record_history(0);
    // Bad paths: a reason, never a crash.
    let missing = std::ffi::CString::new(dir.join("no/such/dir/x.pickle").to_str().unwrap()).unwrap();
    let folder = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    // SAFETY: NULL and NUL-terminated paths.
    let answers = unsafe {
        [
            mempool_dump_snapshot(std::ptr::null()),
            mempool_dump_snapshot(missing.as_ptr()),
            mempool_dump_snapshot(folder.as_ptr()),
        ]
    };
    if answers != [-1, -1, -1] || last().is_none_or(|m| !m.contains(dir.to_str().unwrap())) {
        return Err(format!("bad paths: {answers:?}, {:?}", last()).into());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A free from a thread-local's destructor at thread exit, after the library's own
/// thread-local state is gone: it frees, and nothing panics across the C boundary (that
/// would abort this process).
fn free_at_thread_exit() -> Result<(), Failed> {
    struct FreeOnExit(std::cell::Cell<usize>);
    impl Drop for FreeOnExit {
        fn drop(&mut self) {
            let p = self.0.get();
            if p != 0 {
                free(p as *mut c_void, 4096, 1);
            }
        }
    }
    thread_local! {
        static HELD: FreeOnExit = const { FreeOnExit(std::cell::Cell::new(0)) };
    }
    let before = stats(1).allocations;
    std::thread::spawn(|| {
        // Registered before the thread's first library call, so destroyed after the
        // library's thread-local state.
        HELD.with(|h| h.0.get());
        let p = alloc(4096, 1);
        HELD.with(|h| h.0.set(p as usize));
    })
    .join()
    .map_err(|_| "the thread panicked")?;
    let after = stats(1).allocations;
    if after != before {
        return Err(format!("the free at thread exit was lost: {before} allocations before, {after} after").into());
    }
    Ok(())
}

fn main() {
    // SAFETY: `main` runs before any other thread exists.
    unsafe {
        std::env::set_var(ENV_BACKEND, "emulator");
        std::env::set_var("MEMPOOL_EMU_DEVICES", "2");
        std::env::set_var("MEMPOOL_EMU_DEVICE_MEMORY", "1G");
        std::env::set_var("MEMPOOL_EMU_CHECKER", "on");
    }
    let args = Arguments::from_args();
    let mut trials =
        vec![Trial::test("protocol", protocol), Trial::test("threads", threads), Trial::test("history", history)];
    trials.push(Trial::test("free_at_thread_exit", free_at_thread_exit));
    for (name, reason, bad) in rows() {
        trials.push(Trial::test(format!("hostile::{name}"), move || hostile(reason, bad)));
    }
    // One at a time: the trials share the process's allocator and its statistics.
    let args = Arguments { test_threads: Some(1), ..args };
    libtest_mimic::run(&args, trials).exit();
}
