//! The clocks against a plain vector clock, and the joins that cost what changed.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::BTreeMap;

#[test]
fn raise_and_merge_take_maxima() {
    let mut a = Clock::default();
    a.raise(3, 5);
    a.raise(1, 2);
    a.raise(3, 4);
    assert_eq!(a.get(3), 5);
    assert_eq!(a.get(2), 0);
    let mut b = Clock::default();
    b.raise(2, 7);
    b.raise(1, 9);
    a.merge(&b);
    assert_eq!(a.iter().collect::<Vec<_>>(), vec![(1, 9), (2, 7), (3, 5)]);
}

fn clock(entries: &[(u64, u64)]) -> Clock {
    let mut c = Clock::default();
    for &(s, p) in entries {
        c.raise(s, p);
    }
    c
}

/// The join by chunks agrees with raising each entry, across chunks and within one, and
/// `merged` says when it changes nothing.
#[test]
fn merge_agrees_with_raising_each_entry() {
    type Entries = &'static [(u64, u64)];
    let cases: &[(Entries, Entries)] = &[
        (&[(1, 1), (2, 2), (3, 3)], &[(2, 5), (3, 1)]),
        (&[(1, 1), (2, 2)], &[(2, 1), (5, 4), (6, 1)]),
        (&[(2, 2), (4, 4)], &[(1, 9), (3, 3), (4, 1), (7, 7)]),
        (&[], &[(1, 1)]),
        (&[(1, 1)], &[]),
        (&[(1, 1), (40, 1), (70, 1), (100, 1)], &[(0, 3), (41, 2), (100, 1), (300, 5)]),
        (&[(33, 3), (64, 1)], &[(1, 1), (33, 2), (64, 1)]),
    ];
    for &(a, b) in cases {
        let (x, y) = (clock(a), clock(b));
        let mut merged = x.clone();
        merged.merge(&y);
        let mut raised = x.clone();
        for &(s, p) in b {
            raised.raise(s, p);
        }
        assert_eq!(merged, raised, "{a:?} + {b:?}");
        let mut with_point = merged.clone();
        with_point.raise(4, 6);
        assert_eq!(
            x.merged(&y, (4, 6)).map_or_else(|| x.clone(), |c| (*c).clone()),
            with_point,
            "{a:?} + {b:?} + (4, 6)"
        );
        assert_eq!(x.merged(&y, (4, 6)).is_none(), with_point == x, "{a:?} + {b:?}");
    }
}

/// How many chunks of `c` are not shared with `rec`.
fn unshared(c: &Clock, rec: &Clock) -> usize {
    c.spine.iter().filter(|(k, ch)| !rec.spine.iter().any(|(l, r)| k == l && Arc::ptr_eq(ch, r))).count()
}

/// Stream `next(a)` waits for stream `a`'s record, `a` in turn, as in
/// `tests/benches/graph.rs`. Once warm, the waits share the record's spine (the record
/// covers the waiting stream's origin: the join adds entries above the spine) but when the
/// entries above it are written into chunks, which copies at most a chunk per entry; the
/// values stay those of a plain vector clock.
fn hand_offs(n: u64, next: impl Fn(u64) -> u64) {
    let mut clocks: Vec<Arc<Clock>> = (0..n).map(|_| Arc::new(Clock::default())).collect();
    let mut refs: Vec<BTreeMap<u64, u64>> = vec![BTreeMap::new(); n as usize];
    let (mut waits, mut shared, mut copied) = (0, 0, 0);
    for k in 0..8 * n {
        let (a, b) = ((k % n) as usize, next(k % n) as usize);
        let point = (a as u64, k + 1);
        let rec = Arc::clone(&clocks[a]);
        if let Some(c) = clocks[b].merged(&rec, point) {
            if k >= 6 * n {
                waits += 1;
                shared += usize::from(Arc::ptr_eq(&c.spine, &rec.spine));
                copied += unshared(&c, &rec);
            }
            clocks[b] = c;
        }
        let r = refs[a].clone();
        for (&s, &p) in &r {
            let e = refs[b].entry(s).or_insert(p);
            *e = (*e).max(p);
        }
        let e = refs[b].entry(point.0).or_insert(point.1);
        *e = (*e).max(point.1);
        assert_eq!(clocks[b].iter().collect::<Vec<_>>(), refs[b].iter().map(|(&s, &p)| (s, p)).collect::<Vec<_>>());
    }
    eprintln!("{waits} waits: {shared} shared the record's spine, {copied} chunks copied");
    assert!(4 * shared >= 3 * waits, "{shared} of {waits} waits shared the record's spine");
    assert!(copied <= waits, "{copied} chunks copied in {waits} waits");
}

#[test]
fn a_ring_of_waits_shares_the_records_chunks() {
    hand_offs(200, |a| (a + 1) % 200);
}

#[test]
fn the_dense_graph_shares_the_records_chunks() {
    hand_offs(512, |a| (7 * a + 3) % 512);
}

/// One step of a random program over a few streams' clocks (each an `Arc`, shared with
/// its records as the emulator's are).
#[derive(Debug, Clone)]
enum Op {
    /// A copy of stream `i`'s clock raised at `(s, p)` (a synchronization's).
    Raise(usize, u64, u64),
    /// Stream `i` merges record `j` in place (reuse rule e, the host).
    Merge(usize, usize),
    /// Stream `j` records.
    Record(usize),
    /// Stream `i` waits for record `j` at point `(s, p)`.
    Wait(usize, usize, u64, u64),
    /// Stream `i` takes a copy of stream `j`'s clock.
    Copy(usize, usize),
    /// Stream `i`'s clock keeps the streams of a mask (a pruning).
    Retain(usize, u32),
}

const CLOCKS: usize = 4;
const STREAMS: u64 = 24;

/// Stream ids over several chunks.
fn sid(s: u64) -> u64 {
    s * 5
}

fn op() -> impl Strategy<Value = Op> {
    let c = 0..CLOCKS;
    let s = 0..STREAMS;
    prop_oneof![
        3 => (c.clone(), s.clone(), 0..40u64).prop_map(|(i, s, p)| Op::Raise(i, s, p)),
        2 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Merge(i, j)),
        4 => c.clone().prop_map(Op::Record),
        6 => (c.clone(), c.clone(), s, 0..40u64).prop_map(|(i, j, s, p)| Op::Wait(i, j, s, p)),
        1 => (c.clone(), c.clone()).prop_map(|(i, j)| Op::Copy(i, j)),
        1 => (c, any::<u32>()).prop_map(|(i, m)| Op::Retain(i, m)),
    ]
}

/// A plain vector clock: the reference.
type Reference = BTreeMap<u64, u64>;

fn join(a: &mut Reference, b: &Reference) {
    for (&s, &p) in b {
        let e = a.entry(s).or_insert(p);
        *e = (*e).max(p);
    }
}

fn raise(a: &mut Reference, s: u64, p: u64) {
    let e = a.entry(s).or_insert(p);
    *e = (*e).max(p);
}

fn agrees(c: &Clock, r: &Reference) -> std::result::Result<(), TestCaseError> {
    prop_assert_eq!(c.iter().collect::<Vec<_>>(), r.iter().map(|(&s, &p)| (s, p)).collect::<Vec<_>>());
    prop_assert_eq!(c.len(), r.len());
    prop_assert_eq!(c.sum, r.values().map(|&p| u128::from(p)).sum::<u128>());
    for s in 0..STREAMS * 5 + 3 {
        prop_assert_eq!(c.get(s), r.get(&s).copied().unwrap_or(0));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The clocks answer every query as a plain vector clock does, on random programs of
    /// records, waits, in-place merges, raised copies and prunings, including the joins
    /// decided from lineages and origins alone (positions grow with the step, as streams'
    /// do, so that records often cover a waiting stream's origin); `merged` is `None`
    /// exactly when the join changes nothing.
    #[test]
    fn clocks_agree_with_a_plain_vector_clock(ops in proptest::collection::vec(op(), 1..300)) {
        let mut clocks: Vec<Arc<Clock>> = (0..CLOCKS).map(|_| Arc::new(Clock::default())).collect();
        let mut refs: Vec<Reference> = vec![Reference::new(); CLOCKS];
        let mut recs: Vec<Arc<Clock>> = clocks.clone();
        let mut rec_refs = refs.clone();
        for (t, op) in ops.into_iter().enumerate() {
            let t = t as u64;
            match op {
                Op::Raise(i, s, p) => {
                    let mut c = (*clocks[i]).clone();
                    c.raise(sid(s), t + p);
                    let mut r = refs[i].clone();
                    raise(&mut r, sid(s), t + p);
                    agrees(&c, &r)?;
                    // A copy grows apart from the stream's clock.
                    if t % 2 == 0 {
                        clocks[i] = Arc::new(c);
                        refs[i] = r;
                    }
                }
                Op::Merge(i, j) => {
                    Arc::make_mut(&mut clocks[i]).merge(&recs[j]);
                    let r = rec_refs[j].clone();
                    join(&mut refs[i], &r);
                }
                Op::Record(j) => {
                    recs[j] = Arc::clone(&clocks[j]);
                    rec_refs[j] = refs[j].clone();
                }
                Op::Wait(i, j, s, p) => {
                    let mut r = refs[i].clone();
                    join(&mut r, &rec_refs[j]);
                    raise(&mut r, sid(s), t + p);
                    let out = clocks[i].merged(&recs[j], (sid(s), t + p));
                    prop_assert_eq!(out.is_none(), r == refs[i]);
                    if let Some(c) = out {
                        clocks[i] = c;
                        refs[i] = r;
                    }
                }
                Op::Copy(i, j) => {
                    clocks[i] = Arc::new((*clocks[j]).clone());
                    refs[i] = refs[j].clone();
                }
                Op::Retain(i, m) => {
                    let keep = |s: u64| m & (1 << (s / 5)) != 0;
                    Arc::make_mut(&mut clocks[i]).retain(|s, _| keep(s));
                    refs[i].retain(|&s, _| keep(s));
                }
            }
            for i in 0..CLOCKS {
                agrees(&clocks[i], &refs[i])?;
                agrees(&recs[i], &rec_refs[i])?;
                for j in 0..CLOCKS {
                    prop_assert_eq!(*clocks[i] == *clocks[j], refs[i] == refs[j]);
                }
            }
        }
    }
}
