//! The generator reaches every path.

use super::*;

/// A fixed sample of generated cases reaches every reuse rule, every error the calls can
/// give, and the less common paths of the model (merges, split releases, queued waits).
/// If the generator drifts so that a path is no longer exercised, this fails.
#[test]
fn generated_cases_reach_every_path() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let cases = (setup(), prop::collection::vec(op(), 1..64));
    let mut outcomes: BTreeMap<String, u32> = BTreeMap::new();
    let mut tally = model::Tally::default();
    for _ in 0..400 {
        let (setup, ops) = cases.new_tree(&mut runner).expect("a case").current();
        let pair = replay(setup, &ops, OPEN).unwrap_or_else(|e| panic!("{e}\nops: {ops:?}"));
        for (k, v) in pair.outcomes {
            *outcomes.entry(k).or_default() += v;
        }
        let t = pair.model.tally;
        tally.merges += t.merges;
        tally.releases += t.releases;
        tally.split_releases += t.split_releases;
        tally.queued_waits += t.queued_waits;
        tally.ran += t.ran;
    }
    let expected = [
        "Malloc: SameStream",
        "Malloc: KnownComplete",
        "Malloc: EventDependency",
        "Malloc: Opportunistic",
        "Malloc: InternalDependency",
        "Malloc: Fresh",
        "Malloc: OutOfMemory 507000",
        "Malloc: InvalidParam 107000",
        "Malloc: InvalidHandle 107017",
        "Malloc: InvalidHandle 507000",
        "Free: ok",
        "Free: InvalidPointer 107000",
        "Free: InvalidPointer 100000",
        "Free: InvalidHandle 107017",
        "Record: ok",
        "Wait: ok",
        "Step: ran",
        "Step: ran nothing",
        "SyncStream: ok",
        "SyncEvent: ok",
        "SyncDevice: ok",
        "Elapsed: ok",
        "Elapsed: NotReady 507000",
        "Trim: ok",
        "Trim: InvalidParam 507000",
        "SetAttr: ok",
        "SetAttr: ReadOnly 107000",
        "SetAttr: UnknownAttribute 107000",
        "SetAttr: InvalidParam 107000",
        "SetAttr: InvalidParam 507000",
        "SetAttr: InvalidHandle 107000",
        "GetAttr: ok",
        "GetAttr: UnknownAttribute 107000",
        "CreatePool: ok",
        "CreatePool: InvalidParam 100000",
        "CreatePool: InvalidParam 107000",
        "CreatePool: InvalidDevice 107001",
        "DestroyPool: ok",
        "DestroyPool: InvalidHandle 507000",
        "DestroyStream: ok",
        "DestroyStream: InvalidHandle 107017",
        "DestroyEvent: ok",
        "DestroyEvent: InvalidHandle 107017",
    ];
    let missing: Vec<_> = expected.iter().filter(|k| !outcomes.contains_key(**k)).collect();
    assert!(missing.is_empty(), "never reached: {missing:?}\nreached: {outcomes:#?}");
    assert!(
        tally.merges > 0 && tally.releases > 0 && tally.split_releases > 0 && tally.queued_waits > 0 && tally.ran > 0,
        "{tally:?}"
    );
}
