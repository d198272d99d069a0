//! Block signatures: a deterministic generator and the bytes each block carries.

/// SplitMix64: deterministic, seedable, good enough for choosing operations.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(mix(seed))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub(crate) fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The SplitMix64 finalizer: a bijection, so distinct counters give distinct tags.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How a block's signature is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sig {
    /// One host-to-device copy of the whole block: word `k` is `tag ^ k` in every byte.
    Copied,
    /// A memset of the whole block to a byte of the tag, then the tag copied to the
    /// start of every granule.
    Memset,
}

pub(crate) const BYTES: u64 = 0x0101_0101_0101_0101;

pub(crate) fn fill_byte(tag: u64) -> u8 {
    (tag >> 56) as u8 | 1
}

/// The expected little-endian word `k` of a block with this signature.
pub(crate) fn expected_word(tag: u64, sig: Sig, k: u64, gran: u64) -> u64 {
    match sig {
        Sig::Copied => tag ^ (u64::from(k as u8) * BYTES),
        Sig::Memset if (k * 8) % gran == 0 => tag,
        Sig::Memset => u64::from(fill_byte(tag)) * BYTES,
    }
}

/// Where the first word of `data` differs from the signature, with the word found.
pub(crate) fn first_mismatch(data: &[u8], tag: u64, sig: Sig, gran: u64) -> Option<(u64, u64)> {
    data.chunks_exact(8).enumerate().find_map(|(k, w)| {
        let found = u64::from_le_bytes(w.try_into().expect("an 8-byte chunk"));
        (found != expected_word(tag, sig, k as u64, gran)).then_some((k as u64 * 8, found))
    })
}
