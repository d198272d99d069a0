//! Runs a catalogue of programs in every execution mode and checks that the checker's
//! verdicts (which call is refused, with which kind) do not depend on timing.

use mempool_emu::{EmuPool, EmuStream, Emulator, ExecutionMode};
use mempool_hal::{Device, ErrorKind, MemPoolExt, PoolProps, Result};
use std::cell::RefCell;
use std::time::Duration;

/// The granularity of the catalogue's pools.
pub const G: u64 = 64 << 10;

/// What a program must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Every call succeeds, and so does the final synchronization.
    Correct,
    /// Exactly one call fails: the one with this label, with this kind.
    Refused(&'static str, ErrorKind),
}

/// A program of the catalogue.
pub struct Case {
    pub name: &'static str,
    pub expect: Expect,
    pub run: fn(&Ctx),
}

/// A call's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Refused(ErrorKind),
}

/// One run of a program: an emulator, a pool, four streams and the trace of verdicts.
pub struct Ctx {
    pub emu: Emulator,
    pub pool: EmuPool,
    pub s: Vec<EmuStream>,
    trace: RefCell<Vec<(String, Verdict)>>,
}

impl Ctx {
    /// Makes call `label` and records its verdict. A refused call must change no
    /// statistic of the pool.
    pub fn call<T>(&self, label: &str, f: impl FnOnce() -> Result<T>) -> Option<T> {
        let before = self.pool.stats().ok();
        let r = f();
        let v = match &r {
            Ok(_) => Verdict::Ok,
            Err(e) => {
                assert_eq!(self.pool.stats().ok(), before, "{label}: a refused call changes no statistic");
                Verdict::Refused(e.kind())
            }
        };
        self.trace.borrow_mut().push((label.to_string(), v));
        r.ok()
    }

    /// Records an event on `from` and makes `to` wait for it.
    pub fn order(&self, from: usize, to: usize) {
        let e = self.emu.create_event().expect("event");
        self.emu.record_event(&e, &self.s[from]).expect("record");
        self.emu.stream_wait_event(&self.s[to], &e).expect("wait");
    }
}

/// The execution modes every case runs in.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Deferred,
    Threaded,
    /// Threaded, each worker sleeping up to 400 µs before each operation.
    Delayed(u64),
}

pub const MODES: [Mode; 6] =
    [Mode::Deferred, Mode::Threaded, Mode::Delayed(1), Mode::Delayed(2), Mode::Delayed(3), Mode::Delayed(4)];

fn run_once(case: &Case, mode: Mode, races: bool) -> Vec<(String, Verdict)> {
    let mut b = Emulator::builder().granularity(G).device_memory(512 * G).race_check(races);
    b = match mode {
        Mode::Deferred => b.mode(ExecutionMode::Deferred),
        Mode::Threaded => b.mode(ExecutionMode::Threaded),
        Mode::Delayed(seed) => b.mode(ExecutionMode::Threaded).worker_delay_for_tests(Duration::from_micros(400), seed),
    };
    let emu = b.build().expect("emulator");
    let pool = emu.create_pool(&PoolProps::builder().max_size(128 * G).build()).expect("pool");
    let s = (0..4).map(|_| emu.create_stream().expect("stream")).collect();
    let ctx = Ctx { emu, pool, s, trace: RefCell::new(Vec::new()) };
    (case.run)(&ctx);
    let end = ctx.emu.synchronize_device();
    let mut trace = ctx.trace.into_inner();
    trace.push(("final synchronize_device".into(), end.map_or_else(|e| Verdict::Refused(e.kind()), |()| Verdict::Ok)));
    trace
}

/// Runs every case in every mode; panics listing every case whose verdicts differ
/// between runs or from what it expects. Returns (cases, runs).
pub fn run_catalogue(what: &str, cases: &[Case], races: bool) -> (usize, usize) {
    let mut problems = Vec::new();
    let mut runs = 0;
    for case in cases {
        let first = run_once(case, MODES[0], races);
        runs += 1;
        for &mode in &MODES[1..] {
            let t = run_once(case, mode, races);
            runs += 1;
            if t != first {
                problems.push(format!("{}: {mode:?} gives {t:?}, deferred gives {first:?}", case.name));
            }
        }
        let refused: Vec<_> = first.iter().filter(|(_, v)| *v != Verdict::Ok).collect();
        let ok = match case.expect {
            Expect::Correct => refused.is_empty(),
            Expect::Refused(label, kind) => {
                refused.len() == 1 && refused[0].0 == label && refused[0].1 == Verdict::Refused(kind)
            }
        };
        if !ok {
            problems.push(format!("{}: expected {:?}, got {first:?}", case.name, case.expect));
        }
    }
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
    println!(
        "{what}: {} cases ({} refused, {} accepted) x {} modes (deferred, threaded, threaded with random worker delays x 4 seeds) = {runs} runs, verdicts identical",
        cases.len(),
        cases.iter().filter(|c| c.expect != Expect::Correct).count(),
        cases.iter().filter(|c| c.expect == Expect::Correct).count(),
        MODES.len()
    );
    (cases.len(), runs)
}
