//! Runs a catalogue of programs in every execution mode and checks that the checker's
//! verdicts (which call is refused, with which kind) do not depend on timing: each program
//! in each mode is an rstest case of its own (`catalogue!`).

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

/// Runs `case` in `mode` and checks its verdicts: exactly what it expects, and (in a mode
/// other than deferred) the same trace of verdicts as a deferred run, so that no verdict
/// depends on timing.
pub fn check_case(case: &Case, mode: Mode, races: bool) {
    let trace = run_once(case, mode, races);
    if !matches!(mode, Mode::Deferred) {
        let deferred = run_once(case, Mode::Deferred, races);
        assert_eq!(trace, deferred, "{}: {mode:?} gives other verdicts than deferred mode", case.name);
    }
    let refused: Vec<_> = trace.iter().filter(|(_, v)| *v != Verdict::Ok).collect();
    let ok = match case.expect {
        Expect::Correct => refused.is_empty(),
        Expect::Refused(label, kind) => {
            refused.len() == 1 && refused[0].0 == label && refused[0].1 == Verdict::Refused(kind)
        }
    };
    assert!(ok, "{} in {mode:?}: expected {:?}, got {trace:?}", case.name, case.expect);
}

/// A catalogue of programs: each entry `name (expect) |c| { body }` becomes a function
/// `programs::name` and one rstest case of `$test` named after it, and each case runs in
/// every execution mode (deferred, threaded, threaded with random worker delays for four
/// seeds), each (program, mode) a test of its own:
/// `$test::case_NN_<name>::mode_M_<mode>`. `CATALOGUE` lists the programs, for the checks
/// on the catalogue itself.
macro_rules! catalogue {
    ($test:ident, races: $races:expr; $($(#[$meta:meta])* $name:ident ($($expect:tt)*) |$c:ident| $body:block)*) => {
        mod programs {
            #[allow(unused_imports)]
            use super::*;
            $($(#[$meta])* pub(super) fn $name($c: &Ctx) $body)*
        }

        /// Every program of the catalogue.
        const CATALOGUE: &[Case] = &[$(Case { name: stringify!($name), expect: $($expect)*, run: programs::$name }),*];

        #[rstest::rstest]
        $(#[case::$name(Case { name: stringify!($name), expect: $($expect)*, run: programs::$name })])*
        fn $test(
            #[case] case: Case,
            #[values(Mode::Deferred, Mode::Threaded, Mode::Delayed(1), Mode::Delayed(2), Mode::Delayed(3), Mode::Delayed(4))]
            mode: Mode,
        ) {
            check_case(&case, mode, $races);
        }
    };
}
pub(crate) use catalogue;
