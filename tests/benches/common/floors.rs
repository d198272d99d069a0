//! `floors`: what the machine allows, measured in the same binary and run as the groups
//! read against it (each bench binary of the tests crate runs this group first):
//!
//! - `mutex/lock+unlock`: an uncontended `std::sync::Mutex` lock and unlock;
//! - `atomic/fetch_add`: one atomic read-modify-write on a line the thread owns;
//! - `cache-line/transfer`: a cache line moved between two threads (two threads take turns
//!   writing one line; a round trip is two transfers, the time is per transfer);
//! - `dram-miss/4KiB-pages` and `dram-miss/2MiB-pages`: one dependent load (a pointer
//!   chase in a random cycle over 256 MiB, far more than the caches) with 4 KiB pages
//!   (`MADV_NOHUGEPAGE`) and with 2 MiB pages (`MADV_HUGEPAGE` on a 2 MiB-aligned range,
//!   checked in `/proc/self/smaps`);
//! - `clock/instant-now`: one `Instant::now()`;
//! - `fxhashmap/hit-1k` and `fxhashmap/hit-100k`: a hit in an `FxHashMap<u64, u64>` (the
//!   hash the workspace uses) of 1,000 and 100,000 keys.
//!
//! Whether the 2 MiB pages were really huge goes to `bench-floors.tsv` beside criterion's
//! folder (`floor note` lines, the last line of a floor wins); where they were not, the
//! report marks the row "not available". The load average when the floors start goes
//! there too (`loadavg`, a line per binary run).

use criterion::{BenchmarkId, Criterion};
use rustc_hash::FxHashMap;
use std::ffi::c_void;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The pointer chase's buffer: far more than the last-level cache.
const CHASE_BYTES: usize = 256 << 20;
const LINE: usize = 64;
const HUGE: usize = 2 << 20;

/// A 64-byte aligned value: alone on its cache line.
#[repr(align(64))]
struct Line(AtomicU64);

/// Runs the floors; call it first in a bench binary's `criterion_group!` targets.
pub fn floors(c: &mut Criterion) {
    let mut g = c.benchmark_group("floors");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    let m = Mutex::new(0u64);
    let mut noted = false;
    g.bench_function(BenchmarkId::new("mutex", "lock+unlock"), |b| {
        if !noted {
            // How loaded the machine was, for reading every figure of this run.
            let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            write_note("loadavg", load.split_whitespace().take(3).collect::<Vec<_>>().join(" ").as_str());
            noted = true;
        }
        b.iter(|| *black_box(&m).lock().expect("not poisoned") += 1)
    });
    let a = Line(AtomicU64::new(0));
    g.bench_function(BenchmarkId::new("atomic", "fetch_add"), |b| {
        b.iter(|| black_box(&a.0).fetch_add(1, Ordering::AcqRel))
    });
    g.bench_function(BenchmarkId::new("cache-line", "transfer"), |b| b.iter_custom(ping_pong));
    let mut small: Option<Chase> = None;
    g.bench_function(BenchmarkId::new("dram-miss", "4KiB-pages"), |b| {
        let chase = small.get_or_insert_with(|| Chase::new(false));
        b.iter(|| chase.step())
    });
    drop(small);
    let mut huge: Option<Chase> = None;
    g.bench_function(BenchmarkId::new("dram-miss", "2MiB-pages"), |b| {
        let chase = huge.get_or_insert_with(|| {
            let chase = Chase::new(true);
            let note = chase.huge_note();
            println!("floors/dram-miss/2MiB-pages: {note}");
            write_note("dram-miss/2MiB-pages", &note);
            chase
        });
        b.iter(|| chase.step())
    });
    drop(huge);
    g.bench_function(BenchmarkId::new("clock", "instant-now"), |b| b.iter(Instant::now));
    for (case, n) in [("hit-1k", 1_000usize), ("hit-100k", 100_000)] {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let keys: Vec<u64> = (0..n).map(|_| xorshift(&mut rng)).collect();
        let map: FxHashMap<u64, u64> = keys.iter().map(|&k| (k, k ^ 1)).collect();
        let mut i = 0;
        g.bench_function(BenchmarkId::new("fxhashmap", case), |b| {
            b.iter(|| {
                i = if i + 1 == keys.len() { 0 } else { i + 1 };
                *map.get(black_box(&keys[i])).expect("a hit")
            })
        });
    }
    g.finish();
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// `iters` round trips of one cache line between this thread and a helper, each two
/// transfers; returns the time of `iters` transfers (half the round trips' time), the
/// helper's start left out.
fn ping_pong(iters: u64) -> Duration {
    let line = Line(AtomicU64::new(0));
    let turn = &line.0;
    // Spins, then lets the other thread run where both share a core (a loaded machine):
    // a transfer then costs a switch between threads, which the figure shows.
    let wait_for = |v: u64| {
        let mut spins = 0u32;
        while turn.load(Ordering::Acquire) != v {
            spins += 1;
            if spins < 10_000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    };
    std::thread::scope(|s| {
        // The helper answers each odd value with the next even one.
        s.spawn(|| {
            for i in 0..=iters {
                wait_for(2 * i + 1);
                turn.store(2 * i + 2, Ordering::Release);
            }
        });
        // The first round trip, untimed, shows the helper running.
        turn.store(1, Ordering::Release);
        wait_for(2);
        let t = Instant::now();
        for i in 1..=iters {
            turn.store(2 * i + 1, Ordering::Release);
            wait_for(2 * i + 2);
        }
        t.elapsed() / 2
    })
}

/// A random cycle through the cache lines of an anonymous mapping: each line's first word
/// holds the index (in words) of the next line.
struct Chase {
    map: *mut c_void,
    map_len: usize,
    /// The 2 MiB-aligned part of the mapping that holds the cycle.
    words: &'static mut [u64],
    pos: usize,
}

impl Chase {
    /// Maps the buffer (2 MiB aligned), advises huge pages or none, fills it (so every page
    /// is present) and links its lines in one random cycle (Sattolo's shuffle).
    fn new(huge: bool) -> Chase {
        let map_len = CHASE_BYTES + HUGE;
        // SAFETY: a new private anonymous mapping at an address the kernel picks; nothing
        // else refers to it.
        let map = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                map_len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .expect("mmap of the pointer chase's buffer");
        let start = (map as usize).next_multiple_of(HUGE);
        let advice = if huge { rustix::mm::Advice::LinuxHugepage } else { rustix::mm::Advice::LinuxNoHugepage };
        // SAFETY: the range lies inside the mapping made above; advice changes no contents.
        if let Err(e) = unsafe { rustix::mm::madvise(start as *mut c_void, CHASE_BYTES, advice) } {
            println!("floors: madvise({advice:?}) failed: {e}");
        }
        // SAFETY: `start..start + CHASE_BYTES` lies inside the readable and writable
        // mapping, is aligned for `u64`, zero-filled, and only this value refers to it
        // until `drop` unmaps it.
        let words = unsafe { std::slice::from_raw_parts_mut(start as *mut u64, CHASE_BYTES / 8) };
        let lines = CHASE_BYTES / LINE;
        let per_line = LINE / 8;
        let mut order: Vec<u32> = (0..lines as u32).collect();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for i in (1..lines).rev() {
            let j = (xorshift(&mut rng) % i as u64) as usize;
            order.swap(i, j);
        }
        for (k, &line) in order.iter().enumerate() {
            let next = order[(k + 1) % lines];
            words[line as usize * per_line] = u64::from(next) * per_line as u64;
        }
        Chase { map, map_len, words, pos: 0 }
    }

    /// One dependent load.
    fn step(&mut self) -> usize {
        self.pos = self.words[self.pos] as usize;
        self.pos
    }

    /// Whether the cycle's range really lies in huge pages: the kernel's setting and the
    /// range's `AnonHugePages` in `/proc/self/smaps`.
    fn huge_note(&self) -> String {
        let setting = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map_or_else(|e| format!("unknown ({e})"), |s| s.trim().to_string());
        let start = self.words.as_ptr() as usize;
        let huge_kib = anon_huge_kib(&std::fs::read_to_string("/proc/self/smaps").unwrap_or_default(), start);
        let want = (CHASE_BYTES >> 10) as u64;
        // Most of the range: a few pages may stay small where the kernel found no free
        // huge page at the fault.
        if huge_kib * 10 >= want * 9 {
            format!("huge: {huge_kib} of {want} KiB in huge pages (transparent_hugepage: {setting})")
        } else {
            format!("not available: {huge_kib} of {want} KiB in huge pages (transparent_hugepage: {setting})")
        }
    }
}

impl Drop for Chase {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; `words` is not used after this.
        if let Err(e) = unsafe { rustix::mm::munmap(self.map, self.map_len) } {
            println!("floors: munmap failed: {e}");
        }
    }
}

/// The `AnonHugePages` (KiB) of the mappings in `smaps` that start at or after `start`
/// and end at most `CHASE_BYTES` after it (the advised range is a mapping of its own).
fn anon_huge_kib(smaps: &str, start: usize) -> u64 {
    let end = start + CHASE_BYTES;
    let mut inside = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                inside = lo >= start && hi <= end;
                continue;
            }
        }
        if inside {
            if let Some(v) = line.strip_prefix("AnonHugePages:") {
                kib += v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    kib
}

/// The target folder: `target/<profile>/deps/<bench>` up three levels.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), Path::to_path_buf)
}

/// Appends `floor note` to `bench-floors.tsv`.
fn write_note(floor: &str, note: &str) {
    use std::io::Write;
    let path = target_dir().join("bench-floors.tsv");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{floor}\t{note}\n").as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot write {}: {e}", path.display());
    }
}
