//! The calling thread's current context, given back after a backend call: code that calls
//! a backend from a framework's thread leaves the framework's current device as it was.

/// Runs `f`, then, when the thread had a context before (`current`) and `f` changed it,
/// makes that one current again (`set`, `true` on success). `forget` clears the backend's
/// per-thread record of its own context, before `f` (the framework may have switched the
/// thread's context since the backend's last call, so `f` must make its own current again)
/// and after a restore. A thread with no context before keeps the one `f` made current.
pub fn preserving_current<C: Copy + PartialEq, T>(
    current: impl Fn() -> Option<C>,
    set: impl FnOnce(C) -> bool,
    forget: impl Fn(),
    f: impl FnOnce() -> T,
) -> T {
    let before = current();
    forget();
    let out = f();
    if let Some(before) = before {
        if current() != Some(before) && set(before) {
            forget();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_context_before_comes_back_and_the_record_is_forgotten() {
        let ctx = Cell::new(Some(1));
        let forgotten = Cell::new(false);
        let out = preserving_current(
            || ctx.get(),
            |c| {
                ctx.set(Some(c));
                true
            },
            || forgotten.set(true),
            || {
                ctx.set(Some(2));
                7
            },
        );
        assert_eq!((out, ctx.get(), forgotten.get()), (7, Some(1), true));
        // Unchanged: nothing set, but the record is forgotten before the call all the same
        // (the framework may have switched the context since the backend's last call).
        forgotten.set(false);
        preserving_current(|| ctx.get(), |_| unreachable!(), || forgotten.set(true), || ());
        assert!(forgotten.get());
        // No context before: the new one stays.
        ctx.set(None);
        preserving_current(|| ctx.get(), |_| unreachable!(), || forgotten.set(true), || ctx.set(Some(3)));
        assert_eq!(ctx.get(), Some(3));
    }
}
