//! The generators of random cases.

use super::*;

pub(crate) fn stream_sel() -> impl Strategy<Value = S> {
    prop_oneof![30 => any::<u8>().prop_map(S::Idx), 1 => Just(S::Foreign)]
}

pub(crate) fn event_sel() -> impl Strategy<Value = E> {
    prop_oneof![30 => any::<u8>().prop_map(E::Idx), 1 => Just(E::Foreign)]
}

pub(crate) fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 1..=2 * G,
        4 => 1..=4 * G,
        3 => select(vec![1, G - 1, G, G + 1, 2 * G, 3 * G + 5]),
        1 => select(vec![0, 16 * G, 17 * G, 32 * G, 64 * G, 65 * G, 1 << 63, u64::MAX - G + 2, u64::MAX]),
    ]
}

pub(crate) fn ptr() -> impl Strategy<Value = Ptr> {
    prop_oneof![
        20 => any::<u8>().prop_map(Ptr::Live),
        6 => any::<u8>().prop_map(Ptr::Handed),
        2 => (any::<u8>(), select(vec![1, 8, G / 2, G, 2 * G])).prop_map(|(i, d)| Ptr::Offset(i, d)),
        1 => any::<u8>().prop_map(Ptr::PastEnd),
        1 => Just(Ptr::Null),
        1 => Just(Ptr::Unknown),
    ]
}

/// The length of a copy or a memset: inside one granule, a whole one, across two.
pub(crate) fn access_len() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => select(vec![1, 8, G / 2, G]),
        2 => select(vec![G + 1, 2 * G, 4 * G]),
        1 => Just(0),
    ]
}

/// A pointer to access: mostly a live allocation, or one at an offset.
pub(crate) fn access_ptr() -> impl Strategy<Value = Ptr> {
    prop_oneof![
        12 => any::<u8>().prop_map(Ptr::Live),
        4 => any::<u8>().prop_map(Ptr::Handed),
        3 => (any::<u8>(), select(vec![1, 8, G / 2, G])).prop_map(|(i, d)| Ptr::Offset(i, d)),
        1 => any::<u8>().prop_map(Ptr::PastEnd),
        1 => Just(Ptr::Null),
        1 => Just(Ptr::Unknown),
    ]
}

/// The two sides of a copy, not both host memory.
pub(crate) fn copy_sides() -> impl Strategy<Value = (Side, Side)> {
    prop_oneof![
        2 => access_ptr().prop_map(|p| (Side::Dev(p), Side::Host)),
        2 => access_ptr().prop_map(|p| (Side::Host, Side::Dev(p))),
        3 => (access_ptr(), access_ptr()).prop_map(|(d, s)| (Side::Dev(d), Side::Dev(s))),
    ]
}

pub(crate) fn keep() -> impl Strategy<Value = Keep> {
    prop_oneof![
        2 => select(vec![0, 1, G, 4 * G + 1, 8 * G, u64::MAX]).prop_map(Keep::Bytes),
        3 => Just(Keep::Used),
        1 => Just(Keep::UsedMinus1),
        1 => Just(Keep::Reserved),
        1 => Just(Keep::Size),
        1 => Just(Keep::SizePlus1),
    ]
}

/// Every id, and unknown ones on both sides.
pub(crate) fn attr_id() -> impl Strategy<Value = u32> {
    select(vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, u32::MAX])
}

pub(crate) fn set_attr() -> impl Strategy<Value = Op> {
    let flag = (any::<u8>(), 1..=3u32, select(vec![0, 1, 0, 1, 7, u32::MAX])).prop_map(|(pool, id, v)| Op::SetAttr {
        pool,
        id,
        value: Val::U32(v),
    });
    let threshold = (
        any::<u8>(),
        prop_oneof![
            3 => select(vec![0, G, 4 * G, G + 1, 8 * G]).prop_map(Val::U64),
            1 => Just(Val::Size),
            1 => Just(Val::SizePlus1),
            1 => Just(Val::U64(u64::MAX)),
        ],
    )
        .prop_map(|(pool, value)| Op::SetAttr { pool, id: 4, value });
    let any_attr = (
        any::<u8>(),
        attr_id(),
        prop_oneof![select(vec![0, 1, 5]).prop_map(Val::U32), select(vec![0, 1, G, 100]).prop_map(Val::U64)],
    )
        .prop_map(|(pool, id, value)| Op::SetAttr { pool, id, value });
    let reset = (any::<u8>(), select(vec![6, 8])).prop_map(|(pool, id)| Op::SetAttr { pool, id, value: Val::U64(0) });
    prop_oneof![4 => flag, 2 => threshold, 1 => reset, 2 => any_attr]
}

pub(crate) fn new_pool() -> impl Strategy<Value = NewPool> {
    prop_oneof![
        6 => select(vec![0, 1, G - 1, G, 8 * G + 1, 16 * G, 32 * G, DEVICE, DEVICE + 1, u64::MAX])
            .prop_map(NewPool::MaxSize),
        1 => select(vec![1, -1]).prop_map(NewPool::AllocType),
        1 => select(vec![2, 1, 7]).prop_map(NewPool::HandleType),
        1 => Just(NewPool::LocationHost),
        1 => select(vec![1, 2]).prop_map(NewPool::Device),
        1 => Just(NewPool::ReservedByte),
    ]
}

/// A range a kernel declares: a pointer like a copy's, a length that is not 0.
fn kernel_arg() -> impl Strategy<Value = KernelArg> {
    (access_ptr(), select(vec![1, 8, G / 2, G, G + 1, 2 * G]), any::<bool>()).prop_map(|(ptr, len, write)| KernelArg {
        ptr,
        len,
        write,
    })
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        60 => (any::<u8>(), size(), stream_sel()).prop_map(|(pool, size, stream)| Op::Malloc { pool, size, stream }),
        8 => (any::<u8>(), size(), stream_sel()).prop_map(|(pool, size, stream)| Op::MallocSync { pool, size, stream }),
        48 => (ptr(), stream_sel(), any::<bool>())
            .prop_map(|(ptr, stream, via_pool)| Op::Free { ptr, stream, via_pool }),
        24 => stream_sel().prop_map(Op::HostFn),
        20 => (event_sel(), stream_sel()).prop_map(|(event, stream)| Op::Record { event, stream }),
        20 => (stream_sel(), event_sel()).prop_map(|(stream, event)| Op::Wait { stream, event }),
        12 => (stream_sel(), stream_sel(), event_sel()).prop_map(|(from, to, event)| Op::Handoff { from, to, event }),
        12 => (stream_sel(), 0..4u8).prop_map(|(stream, n)| Op::Step { stream, n }),
        4 => stream_sel().prop_map(Op::RunPending),
        6 => stream_sel().prop_map(Op::SyncStream),
        2 => stream_sel().prop_map(Op::QueryStream),
        5 => event_sel().prop_map(Op::SyncEvent),
        2 => Just(Op::SyncDevice),
        2 => (event_sel(), event_sel()).prop_map(|(a, b)| Op::Elapsed(a, b)),
        6 => (any::<u8>(), keep()).prop_map(|(pool, keep)| Op::Trim { pool, keep }),
        10 => set_attr(),
        4 => (any::<u8>(), attr_id()).prop_map(|(pool, id)| Op::GetAttr { pool, id }),
        2 => Just(Op::CreateStream),
        2 => stream_sel().prop_map(Op::DestroyStream),
        2 => Just(Op::CreateEvent),
        2 => event_sel().prop_map(Op::DestroyEvent),
        2 => new_pool().prop_map(Op::CreatePool),
        2 => any::<u8>().prop_map(Op::DestroyPool),
        1 => any::<u8>().prop_map(Op::CreateStreamOn),
        1 => any::<u8>().prop_map(Op::CreateEventOn),
        2 => any::<u8>().prop_map(Op::SyncDeviceOf),
        12 => (access_ptr(), access_len(), stream_sel()).prop_map(|(ptr, len, stream)| Op::Memset { ptr, len, stream }),
        16 => (copy_sides(), access_len(), stream_sel())
            .prop_map(|((dst, src), len, stream)| Op::Copy { dst, src, len, stream }),
        8 => ([prop::option::of(kernel_arg()), prop::option::of(kernel_arg())], stream_sel())
            .prop_map(|(args, stream)| Op::Kernel { args, stream }),
        4 => (access_ptr(), access_len()).prop_map(|(ptr, len)| Op::HostMemset { ptr, len }),
        4 => (copy_sides(), access_len()).prop_map(|((dst, src), len)| Op::HostCopy { dst, src, len }),
    ]
}

/// How a case starts, on `profile`. In threaded mode reuse flag 2 (rule d, opportunistic)
/// stays off: which blocks it serves depends on what has run (see `pair.rs`).
pub(crate) fn setup(mode: Mode, profile: Profile) -> impl Strategy<Value = Setup> {
    let opportunistic = if mode == Mode::Threaded { 0.0 } else { 0.5 };
    (
        select(vec![16 * G, 24 * G + 1, 32 * G, 0]),
        [prop::bool::weighted(0.7), prop::bool::weighted(opportunistic), prop::bool::weighted(0.5)],
        select(vec![0, G + 1, 4 * G, 8 * G, 16 * G]),
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            move |(
                max_size,
                [follow_event_dependencies, opportunistic, internal_dependencies],
                threshold,
                second,
                races,
            )| {
                Setup {
                    profile,
                    max_size,
                    flags: ReuseFlags { follow_event_dependencies, opportunistic, internal_dependencies },
                    threshold,
                    second_device: second,
                    races,
                }
            },
        )
}
