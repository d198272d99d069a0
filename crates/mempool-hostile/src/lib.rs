//! The hostile-input harness that the drop-in C libraries' tests share (`mempool-acl-shim`'s
//! and `mempool-cuda-shim`'s `tests/hostile/`).
//!
//! A test binary builds a [`Table`] of [`Row`]s, one per (entry point, hostile input), each
//! with the status code the library documents for it, and runs every row as a libtest-mimic
//! trial of its own ([`row_trials`], named by [`trial_names`]): `row::<entry>(<input>)`. The
//! rows share one fixture (a type implementing [`Fixture`]) and the process's one library
//! instance, so they run one at a time on the main thread ([`arguments`]). Around each call
//! [`run_row`] checks what every row must keep: the code is the one expected, nothing panics,
//! a refused call leaves a message naming its entry point, the calling thread's current
//! context is the same, and the witness pools' statistics are unchanged. A row that writes
//! an out-pointer checks with [`untouched`] that a refused call left it alone. Handle
//! arguments are [`H`] values the fixture resolves ([`Fixture::h`]); [`bad_handles`] lists the
//! hostile ones of each [`Kind`].
//!
//! The library's status code is a type parameter ([`Fixture::Code`]: `aclError` for ACL,
//! `CUresult` for CUDA), so nothing here names either API.

#![deny(missing_docs)]

use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// What an out-pointer holds before a call; a refused call must leave it.
pub const SENTINEL: usize = 0x05e4_71e1;

/// Garbage handle and pointer values.
pub const GARBAGE: [usize; 4] = [0x1, 0x1234, 0xdead_beef, usize::MAX];

/// The kinds of handle an entry point takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A stream.
    Stream,
    /// An event.
    Event,
    /// A memory pool.
    Pool,
    /// A context.
    Context,
}

impl Kind {
    /// Every kind, in the order [`bad_handles`] lists them.
    pub const ALL: [Kind; 4] = [Kind::Stream, Kind::Event, Kind::Pool, Kind::Context];

    /// How a row's input names a live handle of this kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Stream => "a stream handle",
            Kind::Event => "an event handle",
            Kind::Pool => "a pool handle",
            Kind::Context => "a context handle",
        }
    }
}

/// A handle argument, resolved against the fixture by [`Fixture::h`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H {
    /// A null handle (0).
    Null,
    /// A value of its own (garbage).
    Raw(usize),
    /// The fixture's live handle of a kind.
    Live(Kind),
    /// The fixture's handle of a kind that was destroyed.
    Dead(Kind),
}

/// Hostile values for a handle of `kind`: `garbage` (`garbage <value>` each), the destroyed
/// one, and a live handle of each other kind, in the order of [`Kind::ALL`] (null is left to
/// the caller: its code differs).
pub fn bad_handles(kind: Kind, garbage: &[usize]) -> Vec<(String, H)> {
    let mut v = self::garbage(garbage, H::Raw);
    v.push(("a destroyed handle".into(), H::Dead(kind)));
    v.extend(Kind::ALL.into_iter().filter(|&k| k != kind).map(|k| (k.name().to_string(), H::Live(k))));
    v
}

/// The objects the rows of one library refer to, and what [`run_row`] asks of that library
/// around each row.
pub trait Fixture: Send + Sync + 'static {
    /// The library's status code (`aclError`, `CUresult`).
    type Code: Copy + PartialEq + fmt::Debug + fmt::Display + Send + Sync + 'static;
    /// The code of success.
    const OK: Self::Code;
    /// Takes the calling thread's last error message (`""` when there is none).
    fn message() -> String;
    /// The statistics of the witness pools, which no row may change.
    fn stats(&self) -> Vec<u64>;
    /// Whether the calling (main) thread's current context is still the one the fixture
    /// made current; when it is not, it is restored, so that one failure does not cascade.
    fn keeps_context(&self) -> bool;
    /// The fixture's live handle of `kind` and its destroyed one (`None` where it has none),
    /// as plain values (never dereferenced by the test; the library only looks them up).
    fn handles(&self, kind: Kind) -> (usize, Option<usize>);

    /// The value of the handle argument `h`.
    fn h(&self, h: H) -> usize {
        match h {
            H::Null => 0,
            H::Raw(v) => v,
            H::Live(kind) => self.handles(kind).0,
            H::Dead(kind) => self.handles(kind).1.unwrap_or_else(|| panic!("the fixture has no destroyed {kind:?}")),
        }
    }
}

/// The statistics of the witness pools `pools`: attributes 5-8 of each (a `uint64_t` each),
/// read by `get_attr(pool, attr, value)`. Panics (failing the row) when a read fails.
pub fn pool_stats<F: Fixture>(pools: &[usize], get_attr: impl Fn(usize, c_int, *mut c_void) -> F::Code) -> Vec<u64> {
    let mut out = Vec::new();
    for &pool in pools {
        for attr in 5..=8 {
            let mut v = u64::MAX;
            let rc = get_attr(pool, attr, (&raw mut v).cast());
            assert_eq!(rc, F::OK, "reading attribute {attr} of a witness pool: {}", F::message());
            out.push(v);
        }
    }
    out
}

/// Calls `call` with a pointer to a `uint64_t` holding `value` (at least as wide as any
/// attribute's value: a 32-bit one is read from its first four bytes, little endian), or
/// with null for `None`; `call`'s code.
pub fn with_value<C>(value: Option<u64>, call: impl FnOnce(*mut c_void) -> C) -> C {
    let v = value.unwrap_or(0);
    let ptr = if value.is_some() { (&raw const v).cast_mut().cast::<c_void>() } else { std::ptr::null_mut() };
    call(ptr)
}

/// Calls `call` with a pointer to a `uint64_t` holding [`SENTINEL`] (room for any
/// attribute's value), or with null when `out` is false; `call`'s code and what the
/// `uint64_t` holds after it.
pub fn with_out<C>(out: bool, call: impl FnOnce(*mut c_void) -> C) -> (C, usize) {
    let mut v = SENTINEL as u64;
    let ptr = if out { (&raw mut v).cast::<c_void>() } else { std::ptr::null_mut() };
    let rc = call(ptr);
    (rc, v as usize)
}

/// A row's call: the entry point with its hostile input, given the fixture; its code.
pub type Call<F> = Box<dyn Fn(&F) -> <F as Fixture>::Code + Send + Sync>;

/// One (entry point, input) and the code the library documents for it.
pub struct Row<F: Fixture> {
    /// The exported function called.
    pub entry: &'static str,
    /// What is hostile about the call.
    pub input: String,
    /// The code it must return.
    pub want: F::Code,
    /// Run on a fresh thread, with no current device or context.
    pub fresh: bool,
    /// The call.
    pub call: Call<F>,
}

impl<F: Fixture> fmt::Debug for Row<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Row")
            .field("entry", &self.entry)
            .field("input", &self.input)
            .field("want", &self.want)
            .field("fresh", &self.fresh)
            .finish_non_exhaustive()
    }
}

/// The rows of a test binary, in the order they run.
pub struct Table<F: Fixture> {
    /// The rows.
    pub rows: Vec<Row<F>>,
}

impl<F: Fixture> Default for Table<F> {
    fn default() -> Self {
        Self { rows: Vec::new() }
    }
}

impl<F: Fixture> fmt::Debug for Table<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table").field("rows", &self.rows).finish()
    }
}

impl<F: Fixture> Table<F> {
    /// A row run on the main thread.
    pub fn add(
        &mut self,
        entry: &'static str,
        input: impl Into<String>,
        want: F::Code,
        call: impl Fn(&F) -> F::Code + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: false, call: Box::new(call) });
    }

    /// A row run on a fresh thread, with no current device or context.
    pub fn fresh(
        &mut self,
        entry: &'static str,
        input: impl Into<String>,
        want: F::Code,
        call: impl Fn(&F) -> F::Code + Send + Sync + 'static,
    ) {
        self.rows.push(Row { entry, input: input.into(), want, fresh: true, call: Box::new(call) });
    }
}

/// `rc`, after panicking (failing the row) when a refused call (`rc` is not `ok`) wrote its
/// out-pointer, which held [`SENTINEL`] and now holds `slot`.
pub fn untouched<C: PartialEq + fmt::Display>(ok: C, rc: C, slot: usize) -> C {
    assert!(rc == ok || slot == SENTINEL, "a refused call (code {rc}) wrote its out-pointer: {slot:#x}");
    rc
}

/// The hostile inputs `garbage <value>` for each of `values`, made into arguments by `make`.
pub fn garbage<T>(values: &[usize], make: impl Fn(usize) -> T) -> Vec<(String, T)> {
    values.iter().map(|&g| (format!("garbage {g:#x}"), make(g))).collect()
}

/// What a panic said.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs one row: `Err` with why it failed. The witness pools' statistics must be the same
/// after the row as before it.
///
/// # Errors
///
/// The row's failures, joined by `; `: a panic, a code other than the one expected, a
/// refusal whose message does not name the entry point, a changed current context, changed
/// statistics.
pub fn run_row<F: Fixture>(fx: &F, row: &Row<F>) -> Result<(), String> {
    let before = fx.stats();
    let attempt = || {
        let got = catch_unwind(AssertUnwindSafe(|| (row.call)(fx)));
        (got, F::message())
    };
    let (got, msg) = if row.fresh {
        std::thread::scope(|sc| sc.spawn(attempt).join().expect("the row's thread"))
    } else {
        attempt()
    };
    let mut failures = Vec::new();
    match got {
        Err(panic) => failures.push(format!("panicked: {}", panic_message(&*panic))),
        Ok(rc) if rc != row.want => failures.push(format!("returned {rc}, expected {}; message: {msg}", row.want)),
        Ok(rc) if rc != F::OK && !msg.starts_with(&format!("{}: ", row.entry)) => {
            failures.push(format!("refused with {rc} but the message does not name the entry point: {msg:?}"))
        }
        Ok(_) => {}
    }
    if !row.fresh && !fx.keeps_context() {
        failures.push("changed the calling thread's current context".to_string());
    }
    let after = fx.stats();
    if after != before {
        failures.push(format!("changed the witness pools' statistics from {before:?} to {after:?}"));
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("; ")) }
}

/// Names each row's trial `row::<entry>(<input>)`, with ` #n` after a name that repeats.
pub fn trial_names<F: Fixture>(rows: &[Row<F>]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    rows.iter()
        .map(|r| {
            let base = format!("row::{}({})", r.entry, r.input);
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 { base } else { format!("{base} #{n}") }
        })
        .collect()
}

/// A trial's outcome from a list of failures.
///
/// # Errors
///
/// The failures, one a line, when there are any.
pub fn outcome(failures: Vec<String>) -> Result<(), Failed> {
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

/// Every exported function (`exports`) has a row, and every row names an exported function:
/// the failures.
pub fn coverage<F: Fixture, S: AsRef<str> + fmt::Debug>(exports: &[S], rows: &[Row<F>]) -> Vec<String> {
    let mut failures = Vec::new();
    let missing: Vec<_> = exports.iter().filter(|e| !rows.iter().any(|r| r.entry == e.as_ref())).collect();
    if !missing.is_empty() {
        failures.push(format!("entry points without a row: {missing:?}"));
    }
    let unknown: Vec<_> =
        rows.iter().filter(|r| !exports.iter().any(|e| e.as_ref() == r.entry)).map(|r| r.entry).collect();
    if !unknown.is_empty() {
        failures.push(format!("rows for functions that are not exported: {unknown:?}"));
    }
    failures
}

/// The command line's arguments, with one test thread: the rows share one fixture and the
/// main thread's current context.
pub fn arguments() -> Arguments {
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    args
}

/// One trial per row, named by [`trial_names`], each running [`run_row`] on `fx` (`None`
/// when the trials are only listed: they then pass without a call).
pub fn row_trials<F: Fixture>(rows: Vec<Row<F>>, fx: Option<&Arc<F>>) -> Vec<Trial> {
    let names = trial_names(&rows);
    rows.into_iter()
        .zip(names)
        .map(|(row, name)| {
            let fx = fx.cloned();
            Trial::test(name, move || match fx {
                Some(fx) => run_row(&*fx, &row).map_err(Into::into),
                None => Ok(()),
            })
        })
        .collect()
}
