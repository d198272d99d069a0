//! Deterministic generators of the bundled traces.
//!
//! Both take a seed; the same seed always gives the same rows, byte for byte (the bundled
//! files use [`SEED`]). Pointers in generated traces are synthetic, distinct addresses
//! (never reused); times advance by seeded steps of 1-20 µs.
//!
//! # `training.csv`: a transformer training step
//!
//! [`training`] follows three steps of mixed-precision training of a GPT-2-small-like
//! model on one stream (stream 1):
//!
//! | shape | value |
//! |---|---|
//! | layers, hidden `h`, heads | 12, 768, 12 |
//! | batch `b`, sequence `s`, vocabulary `V` | 8, 1024, 50257 |
//! | parameters per layer | 12h² + 13h = 7,087,872 (one flat buffer per layer) |
//! | activations | fp16; attention dropout masks 1 byte per element |
//! | loss | log-softmax over `[b, s, V]` in fp32 |
//! | optimizer | Adam: fp32 master weights, `m` and `v` per layer, created at the first step |
//!
//! Setup allocates the fp16 weights (embeddings `V×h` and `1024×h`, then each layer).
//! Each step allocates the token ids and labels (`b×s` int64), the embedding output, and
//! per layer the activations kept for backward: `ln1` (`b·s·h`), `qkv` (`b·s·3h`),
//! attention scores (`b·heads·s·s`, freed after the softmax), softmax probabilities and
//! the dropout mask (`b·heads·s·s`), the attention context, the residual, `ln2`, the MLP
//! input and GELU output (`b·s·4h` each), and the second residual; then the final layer
//! norm, logits (`b·s·V` fp16) and the fp32 log-softmax. Backward walks the layers in
//! reverse: it allocates each layer's gradient buffer (fp16, kept until the optimizer)
//! and gradient temporaries of the activation shapes, freeing each layer's activations
//! once its backward is done. The optimizer step allocates an fp32 copy of each layer's
//! gradient (unscaling), frees it, and frees the gradients (`zero_grad(set_to_none)`);
//! the step ends with a synchronization of the stream (`loss.item()`).
//!
//! # `pipeline.csv`: two streams with event hand-offs
//!
//! [`pipeline`] runs 48 micro-batches of 8 sequences of seeded length (256 to 2048 tokens
//! each, one length per micro-batch, `h` = 768, fp16)
//! through a loader stream (2) and a compute stream (1). Per micro-batch: the loader waits
//! until compute has finished with the buffer two micro-batches back, allocates the input
//! and records an event; compute waits for it, allocates its activations (`tokens·4h` and
//! `tokens·h`) and output, frees the input and its activations, and records two events;
//! the loader waits for the second and frees the output (after copying it out). Every 16
//! micro-batches the host synchronizes the device.

use crate::format::{Op, Row, Trace};

/// The seed of the bundled traces.
pub const SEED: u64 = 6;

/// SplitMix64: small, seeded, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Gen {
    rows: Vec<Row>,
    time_ns: u64,
    next_addr: u64,
    rng: Rng,
}

/// A live allocation of a generated trace.
#[derive(Clone, Copy)]
struct Buf {
    ptr: u64,
    size: u64,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen { rows: Vec::new(), time_ns: 0, next_addr: 0x1_0000_0000, rng: Rng(seed) }
    }
    fn push(&mut self, op: Op) {
        self.time_ns += 1_000 + self.rng.below(19_000);
        self.rows.push(Row { thread: 1, time_ns: self.time_ns, op });
    }
    fn alloc(&mut self, size: u64, stream: u64) -> Buf {
        let ptr = self.next_addr;
        // Distinct, 512-byte aligned synthetic addresses.
        self.next_addr += size.div_ceil(512) * 512 + 512;
        self.push(Op::Allocate { ptr, size, stream });
        Buf { ptr, size }
    }
    fn free(&mut self, b: Buf, stream: u64) {
        self.push(Op::Free { ptr: b.ptr, size: b.size, stream });
    }
    fn free_all(&mut self, bufs: impl IntoIterator<Item = Buf>, stream: u64) {
        for b in bufs {
            self.free(b, stream);
        }
    }
    fn finish(self) -> Trace {
        Trace::from_rows(self.rows)
    }
}

/// Activations one layer keeps for backward.
struct LayerActs {
    ln1: Buf,
    qkv: Buf,
    probs: Buf,
    mask: Buf,
    ctx: Buf,
    res1: Buf,
    ln2: Buf,
    fc1: Buf,
    gelu: Buf,
    res2: Buf,
}

/// The training-step trace (see the module docs for the shapes).
pub fn training(seed: u64) -> Trace {
    const LAYERS: usize = 12;
    const STEPS: usize = 3;
    let (h, heads, s, b, v): (u64, u64, u64, u64, u64) = (768, 12, 1024, 8, 50257);
    let (fp16, fp32) = (2, 4);
    let per_layer = 12 * h * h + 13 * h;
    let tok = b * s;
    let x = tok * h * fp16; // one [b, s, h] fp16 tensor
    let att = b * heads * s * s; // elements of one attention map
    const S: u64 = 1;

    let mut g = Gen::new(seed);
    let _wte = g.alloc(v * h * fp16, S);
    let _wpe = g.alloc(s * h * fp16, S);
    let _weights: Vec<Buf> = (0..LAYERS).map(|_| g.alloc(per_layer * fp16, S)).collect();
    let _final_ln = g.alloc(2 * h * fp16, S);
    let mut adam: Vec<Buf> = Vec::new();

    for step in 0..STEPS {
        let ids = g.alloc(tok * 8, S);
        let labels = g.alloc(tok * 8, S);
        let mut input = g.alloc(x, S); // embedding output: layer 0's input
        let first_input = input;
        let mut acts = Vec::new();
        for _ in 0..LAYERS {
            let ln1 = g.alloc(x, S);
            let qkv = g.alloc(3 * x, S);
            let scores = g.alloc(att * fp16, S);
            let probs = g.alloc(att * fp16, S);
            g.free(scores, S);
            let mask = g.alloc(att, S);
            let ctx = g.alloc(x, S);
            let proj = g.alloc(x, S);
            let res1 = g.alloc(x, S);
            g.free(proj, S);
            let ln2 = g.alloc(x, S);
            let fc1 = g.alloc(4 * x, S);
            let gelu = g.alloc(4 * x, S);
            let fc2 = g.alloc(x, S);
            let res2 = g.alloc(x, S);
            g.free(fc2, S);
            acts.push(LayerActs { ln1, qkv, probs, mask, ctx, res1, ln2, fc1, gelu, res2 });
            input = res2;
        }
        let _ = input;
        let ln_f = g.alloc(x, S);
        let logits = g.alloc(tok * v * fp16, S);
        let logp = g.alloc(tok * v * fp32, S);
        let loss = g.alloc(fp32, S);

        // Backward.
        let d_logits = g.alloc(tok * v * fp16, S);
        g.free_all([logp, loss, labels], S);
        let d_wte = g.alloc(v * h * fp16, S);
        let d_lnf = g.alloc(x, S);
        g.free_all([d_logits, logits], S);
        let mut d_out = g.alloc(x, S);
        g.free_all([d_lnf, ln_f], S);
        let mut grads = vec![d_wte];
        for a in acts.into_iter().rev() {
            let grad = g.alloc(per_layer * fp16, S);
            grads.push(grad);
            let d_gelu = g.alloc(4 * x, S);
            g.free(a.gelu, S);
            let d_fc1 = g.alloc(4 * x, S);
            g.free_all([d_gelu, a.fc1], S);
            let d_ln2 = g.alloc(x, S);
            g.free_all([d_fc1, a.ln2], S);
            let d_res1 = g.alloc(x, S);
            g.free_all([d_ln2, a.res1], S);
            let d_probs = g.alloc(att * fp16, S);
            g.free(a.mask, S);
            let d_scores = g.alloc(att * fp16, S);
            g.free_all([d_probs, a.probs], S);
            let d_qkv = g.alloc(3 * x, S);
            g.free_all([d_scores, a.qkv, a.ctx], S);
            let d_ln1 = g.alloc(x, S);
            g.free_all([d_qkv, a.ln1], S);
            let d_in = g.alloc(x, S);
            g.free_all([d_ln1, d_res1, d_out, a.res2], S);
            d_out = d_in;
        }
        g.free_all([d_out, first_input, ids], S);

        // Optimizer.
        if step == 0 {
            for _ in 0..=LAYERS {
                for _ in 0..3 {
                    let p = g.alloc(per_layer * fp32, S);
                    adam.push(p);
                }
            }
        }
        for grad in grads {
            let unscaled = g.alloc(grad.size * 2, S);
            g.free_all([unscaled, grad], S);
        }
        g.push(Op::SyncStream { stream: S });
    }
    g.finish()
}

/// The two-stream pipeline trace (see the module docs).
pub fn pipeline(seed: u64) -> Trace {
    const COMPUTE: u64 = 1;
    const LOADER: u64 = 2;
    const MICRO_BATCHES: u64 = 48;
    let (h, batch) = (768u64, 8u64);
    let mut g = Gen::new(seed);
    // Event ids 3-8: `ready[i % 2]`, `consumed[i % 2]`, `done[i % 2]`.
    let ready = |i: u64| 3 + i % 2;
    let consumed = |i: u64| 5 + i % 2;
    let done = |i: u64| 7 + i % 2;
    for i in 0..MICRO_BATCHES {
        let tokens = batch * (256 + 128 * g.rng.below(15));
        g.push(Op::Wait { event: consumed(i), stream: LOADER });
        let input = g.alloc(tokens * h * 2, LOADER);
        g.push(Op::Record { event: ready(i), stream: LOADER });
        g.push(Op::Wait { event: ready(i), stream: COMPUTE });
        let hidden = g.alloc(tokens * 4 * h * 2, COMPUTE);
        let act = g.alloc(tokens * h * 2, COMPUTE);
        g.free(hidden, COMPUTE);
        let out = g.alloc(tokens * h * 2, COMPUTE);
        g.free_all([input, act], COMPUTE);
        g.push(Op::Record { event: consumed(i), stream: COMPUTE });
        g.push(Op::Record { event: done(i), stream: COMPUTE });
        g.push(Op::Wait { event: done(i), stream: LOADER });
        g.free(out, LOADER);
        if (i + 1) % 16 == 0 {
            g.push(Op::SyncDevice);
        }
    }
    g.finish()
}

/// The bundled traces: file name and trace, generated with [`SEED`].
pub fn bundled() -> Vec<(&'static str, Trace)> {
    vec![("training.csv", training(SEED)), ("pipeline.csv", pipeline(SEED))]
}
