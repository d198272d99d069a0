/*
 * variants.h: the pluggable-allocator protocol as PyTorch's wrapper drives it, and the same
 * program with the record-stream call left out, and a memory fraction reached (included by
 * protocol.c and protocol.cpp after harness.h).
 */
#ifndef MEMPOOL_ALLOC_VARIANTS_H
#define MEMPOOL_ALLOC_VARIANTS_H

#include "harness.h"

#define DEVICES 2
#define MIB ((size_t)1 << 20)
/* The allocation of the cross-stream steps: odd, so no layer can round it away. */
#define CROSS_SIZE (3 * MIB + 100)
/* Allocations made on stream A while stream B still uses the freed one. */
#define MORE 8

/* A host function that holds its stream until the host opens the gate, or 5 s pass. */
typedef struct {
    int open;
    int timed_out;
} gate;

static void gate_wait(void *arg)
{
    gate *g = (gate *)arg;
    for (int i = 0; i < 5000 && !__atomic_load_n(&g->open, __ATOMIC_SEQ_CST); i++) {
        sleep_us(1000);
    }
    if (!__atomic_load_n(&g->open, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&g->timed_out, 1, __ATOMIC_SEQ_CST);
    }
}

static void sleep_2ms(void *arg)
{
    (void)arg;
    sleep_us(2000);
}

/* The library leaves the calling thread's device (context) as the framework set it. */
static void still_bound(int dev, const char *after)
{
    if (!CHECK(rt_current() == dev)) {
        fprintf(stderr, "       %s made device %d current on the calling thread (the framework set %d)\n", after,
                rt_current(), dev);
        rt_bind(dev);
    }
}

/* Whether [a, a+an) and [b, b+bn) overlap. */
static int overlaps(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + bn && y < x + an;
}

/*
 * On device `dev`: allocate on stream A, fill on A, order B after A, use on B (read, write,
 * read), announce B with record_stream (unless `record` is 0), free with stream A, then
 * allocate more on A while B's work is still queued. With `record`, B is held by a gate
 * until the new allocations are checked: none may overlap the freed block yet.
 */
static void cross_stream(int dev, int record)
{
    rt_bind(dev);
    rt_stream a = stream_on(dev), b = stream_on(dev);
    rt_event e = rt_event_new();
    unsigned char *h1 = (unsigned char *)rt_host_alloc(CROSS_SIZE);
    unsigned char *h2 = (unsigned char *)rt_host_alloc(CROSS_SIZE);
    unsigned char *h3 = (unsigned char *)rt_host_alloc(CROSS_SIZE);
    mempool_alloc_stats before = lib_stats(dev);
    void *p = lib.alloc(CROSS_SIZE, dev, a);
    if (!CHECK(p != NULL)) {
        fprintf(stderr, "       mempool_alloc(%zu, %d, A): %s\n", (size_t)CROSS_SIZE, dev, lib_why());
        return;
    }
    still_bound(dev, "mempool_alloc");
    rt_memset(p, 0x5A, CROSS_SIZE, a);
    rt_order(b, a, e);
    gate g;
    g.open = 0;
    g.timed_out = 0;
    if (record) {
        rt_host_func(b, gate_wait, &g);
    }
    rt_d2h(h1, p, CROSS_SIZE, b);
    rt_memset(p, 0xA5, CROSS_SIZE / 2, b);
    rt_d2h(h2, p, CROSS_SIZE, b);
    if (record) {
        lib.record_stream(p, b);
        NO_ERROR("mempool_record_stream");
    }
    lib.free(p, CROSS_SIZE, dev, a);
    /* The text, before the next call replaces it. */
    char why[1024];
    snprintf(why, sizeof why, "%s", lib.last_error() != NULL ? lib.last_error() : "");
    mempool_alloc_stats after_free = lib_stats(dev);
    if (record) {
        if (!CHECK(why[0] == '\0')) {
            fprintf(stderr, "       mempool_free after record_stream: %s\n", why);
        }
        /* B is held at the gate: the free waits for it. */
        CHECK(after_free.pending_frees >= 1);
        CHECK(after_free.stream_order_violations == before.stream_order_violations);
    } else {
        /* The checker refused the free on A (B's use is not ordered before it); the library
         * synchronized the device, freed, and reports it. */
        printf("reported on device %d: %s\n", dev, why[0] != '\0' ? why : "(nothing)");
        CHECK(why[0] != '\0');
        CHECK(after_free.stream_order_violations == before.stream_order_violations + 1);
    }
    CHECK(after_free.allocations == before.allocations);
    void *more[MORE];
    for (int i = 0; i < MORE; i++) {
        more[i] = lib.alloc(CROSS_SIZE, dev, a);
        if (!CHECK(more[i] != NULL)) {
            fprintf(stderr, "       mempool_alloc(%zu, %d, A) #%d: %s\n", (size_t)CROSS_SIZE, dev, i, lib_why());
            continue;
        }
        rt_memset(more[i], 0x33, CROSS_SIZE, a);
        if (record && !CHECK(!overlaps(more[i], CROSS_SIZE, p, CROSS_SIZE))) {
            fprintf(stderr, "       allocation %p reuses the freed %p while stream B still uses it\n", more[i], p);
        }
    }
    still_bound(dev, "mempool_free and mempool_alloc");
    mempool_alloc_stats busy = lib_stats(dev);
    print_stats("with B busy", dev, &busy);
    CHECK(busy.allocations == before.allocations + MORE);
    CHECK(busy.requested_current == before.requested_current + MORE * CROSS_SIZE);
    CHECK(busy.requested_high >= before.requested_current + MORE * CROSS_SIZE);
    __atomic_store_n(&g.open, 1, __ATOMIC_SEQ_CST);
    rt_sync(b);
    if (!CHECK(!__atomic_load_n(&g.timed_out, __ATOMIC_SEQ_CST))) {
        fprintf(stderr, "       the gate on B timed out: a call of the library waited for B's work\n");
    }
    /* B read what A wrote, then its own write: nothing else touched the block meanwhile. */
    CHECK(all_bytes(h1, CROSS_SIZE, 0x5A, "B's first read"));
    CHECK(all_bytes(h2, CROSS_SIZE / 2, 0xA5, "B's second read, first half"));
    CHECK(all_bytes(h2 + CROSS_SIZE / 2, CROSS_SIZE - CROSS_SIZE / 2, 0x5A, "B's second read, second half"));
    for (int i = 0; i < MORE; i++) {
        if (more[i] == NULL) {
            continue;
        }
        rt_d2h(h3, more[i], CROSS_SIZE, a);
        rt_sync(a);
        CHECK(all_bytes(h3, CROSS_SIZE, 0x33, "a new allocation on A"));
        lib.free(more[i], CROSS_SIZE, dev, a);
        NO_ERROR("mempool_free");
    }
    rt_sync(a);
    rt_host_free(h1);
    rt_host_free(h2);
    rt_host_free(h3);
    rt_event_free(e);
}

/* The device's default stream (NULL): allocate, use, free. */
static void default_stream(int dev)
{
    rt_bind(dev);
    unsigned char host[64];
    void *p = lib.alloc(4096, dev, NULL);
    if (!CHECK(p != NULL)) {
        fprintf(stderr, "       mempool_alloc(4096, %d, NULL): %s\n", dev, lib_why());
        return;
    }
    rt_memset(p, 0x77, 4096, NULL);
    rt_d2h(host, (const unsigned char *)p + 4096 - sizeof host, sizeof host, NULL);
    rt_sync(NULL);
    CHECK(all_bytes(host, sizeof host, 0x77, "the default stream's allocation"));
    lib.free(p, 4096, dev, NULL);
    NO_ERROR("mempool_free");
}

/* ------------------------------------------------------------------ host threads */

#define THREADS 4
#define ROUNDS 40
#define PROBE 64

typedef struct {
    int id;
    size_t asked_max;
} worker;

/* One host thread: its own streams on device id % 2, rounds of alloc, fill, use (on B
 * every other round, announced with record_stream), free with A; B runs behind A. Every
 * use copies the block's first and last bytes out; all are checked at the end. */
static void worker_main(void *arg)
{
    worker *w = (worker *)arg;
    int dev = w->id % DEVICES;
    rt_bind(dev);
    rt_stream a = stream_on(dev), b = stream_on(dev);
    rt_event e = rt_event_new();
    unsigned char *probes = (unsigned char *)rt_host_alloc(ROUNDS * 2 * PROBE);
    uint32_t seed = 0x9E3779B9u * (uint32_t)(w->id + 1);
    int values[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        seed = seed * 1664525u + 1013904223u;
        size_t size = PROBE + (seed >> 8) % (2 * MIB);
        values[r] = ((w->id * ROUNDS + r) & 0x7f) | 0x80;
        unsigned char *p = (unsigned char *)lib.alloc(size, dev, a);
        if (!CHECK(p != NULL)) {
            fprintf(stderr, "       thread %d: mempool_alloc(%zu, %d, A): %s\n", w->id, size, dev, lib_why());
            values[r] = -1;
            continue;
        }
        if (size > w->asked_max) {
            w->asked_max = size;
        }
        rt_memset(p, values[r], size, a);
        rt_stream use = r % 2 == 1 ? b : a;
        if (use == b) {
            if (r % 8 == 1) {
                rt_host_func(b, sleep_2ms, NULL);
            }
            rt_order(b, a, e);
        }
        rt_d2h(probes + r * 2 * PROBE, p, PROBE, use);
        rt_d2h(probes + r * 2 * PROBE + PROBE, p + size - PROBE, PROBE, use);
        if (use == b) {
            lib.record_stream(p, b);
            NO_ERROR("mempool_record_stream");
        }
        lib.free(p, size, dev, a);
        NO_ERROR("mempool_free");
        if (w->id == 0 && r % 10 == 9) {
            /* torch.cuda.empty_cache() while the other threads work. */
            lib.empty_cache();
            NO_ERROR("mempool_empty_cache");
        }
    }
    rt_sync(a);
    rt_sync(b);
    for (int r = 0; r < ROUNDS; r++) {
        if (values[r] >= 0 && !CHECK(all_bytes(probes + r * 2 * PROBE, 2 * PROBE, values[r], "a thread's use"))) {
            fprintf(stderr, "       thread %d, round %d (%s)\n", w->id, r, r % 2 == 1 ? "used on B" : "used on A");
        }
    }
    rt_host_free(probes);
    rt_event_free(e);
}

static void threads(void)
{
    worker ws[THREADS];
    void *args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ws[i].id = i;
        ws[i].asked_max = 0;
        args[i] = &ws[i];
    }
    run_threads(worker_main, args, THREADS);
    rt_bind(1);
    printf("threads: %d host threads, %d rounds each, on %d devices\n", THREADS, ROUNDS, DEVICES);
    for (int i = 0; i < THREADS; i++) {
        mempool_alloc_stats s = lib_stats(i % DEVICES);
        CHECK(s.requested_high >= ws[i].asked_max);
    }
}

/* Every device: nothing live, nothing pending, nothing cached, no violation. */
static void check_clean(const char *when, uint64_t violations)
{
    for (int dev = 0; dev < DEVICES; dev++) {
        mempool_alloc_stats s = lib_stats(dev);
        print_stats(when, dev, &s);
        CHECK(s.allocations == 0);
        CHECK(s.requested_current == 0);
        CHECK(s.used_current == 0);
        CHECK(s.pending_frees == 0);
        CHECK(s.small_held_current == 0);
        CHECK(s.reserved_current == 0);
        CHECK(s.stream_order_violations == violations);
        CHECK(s.requested_high >= MORE * CROSS_SIZE);
        CHECK(s.memory_limit == 0);
    }
}

/* PyTorch's init hook, with device 0 current as a framework has it. */
static void start(void)
{
    rt_bind(0);
    lib.init(DEVICES);
    NO_ERROR("mempool_init");
    still_bound(0, "mempool_init");
    const char *backend = lib.backend();
    printf("backend: %s\n", backend != NULL ? backend : lib_why());
    if (CHECK(backend != NULL)) {
        CHECK(strncmp(backend, FLAVOUR, strlen(FLAVOUR)) == 0);
    }
    /* Statistics of every device with device 0 current: the calling thread keeps it. */
    for (int dev = 0; dev < DEVICES; dev++) {
        mempool_alloc_stats s = lib_stats(dev);
        CHECK(s.version == MEMPOOL_ALLOC_STATS_VERSION && s.size == sizeof s);
    }
}

/* The protocol as PyTorch's wrapper drives it: exit 0 when every check held. */
static void variant_protocol(void)
{
    start();
    for (int dev = 0; dev < DEVICES; dev++) {
        cross_stream(dev, 1);
        default_stream(dev);
    }
    rt_bind(0);
    lib.empty_cache();
    NO_ERROR("mempool_empty_cache");
    still_bound(0, "mempool_empty_cache");
    check_clean("after empty_cache", 0);
    threads();
    lib.empty_cache();
    NO_ERROR("mempool_empty_cache");
    still_bound(1, "mempool_empty_cache");
    check_clean("after the threads and empty_cache", 0);
}

/* The same cross-stream use without record_stream: the free must be reported. */
static void variant_no_record(void)
{
    start();
    for (int dev = 0; dev < DEVICES; dev++) {
        cross_stream(dev, 0);
    }
    lib.empty_cache();
    check_clean("after empty_cache", 1);
}

/* ------------------------------------------------------------------ memory fraction */

#define CHUNK (32 * MIB)
#define CHUNKS_MAX 64

typedef struct {
    int calls;
    int device;
    size_t size;
    uint64_t limit;
} oom_seen;

static void on_oom(int device, size_t size, const mempool_alloc_stats *stats, void *user)
{
    oom_seen *o = (oom_seen *)user;
    o->calls++;
    o->device = device;
    o->size = size;
    o->limit = stats != NULL ? stats->memory_limit : 0;
}

/* A quarter of a 1 GiB device: 32 MiB chunks until NULL stay within 256 MiB. */
static void variant_fraction(void)
{
    start();
    oom_seen seen;
    memset(&seen, 0, sizeof seen);
    CHECK(lib.on_oom(on_oom, &seen) == 0);
    lib.set_fraction(0.25, 0);
    NO_ERROR("mempool_set_memory_fraction");
    rt_bind(0);
    rt_stream s = stream_on(0);
    void *chunks[CHUNKS_MAX];
    int n = 0;
    const char *why = NULL;
    while (n < CHUNKS_MAX) {
        chunks[n] = lib.alloc(CHUNK, 0, s);
        if (chunks[n] == NULL) {
            why = lib.last_error();
            break;
        }
        rt_memset(chunks[n], n, CHUNK, s);
        n++;
    }
    size_t total = (size_t)n * CHUNK;
    printf("fraction: %d chunks of 32 MiB (%zu MiB) before NULL: %s\n", n, total / MIB, why != NULL ? why : "(none)");
    CHECK(n < CHUNKS_MAX);
    CHECK(why != NULL);
    CHECK(total <= 256 * MIB);
    CHECK(total >= 256 * MIB - CHUNK);
    printf("observer: %d calls, device %d, size %zu, limit %llu\n", seen.calls, seen.device, seen.size,
           (unsigned long long)seen.limit);
    CHECK(seen.calls >= 1);
    CHECK(seen.device == 0 && seen.size == CHUNK && seen.limit == 256 * MIB);
    mempool_alloc_stats st = lib_stats(0);
    print_stats("at the cap", 0, &st);
    CHECK(st.oom_count >= 1);
    CHECK(st.memory_limit == 256 * MIB);
    CHECK(st.allocations == (uint64_t)n);
    CHECK(st.reserved_current <= 256 * MIB);
    /* The cap is device 0's: device 1 still has its whole memory. */
    mempool_alloc_stats other = lib_stats(1);
    CHECK(other.memory_limit == 0);
    rt_bind(1);
    rt_stream s1 = stream_on(1);
    void *big = lib.alloc(512 * MIB, 1, s1);
    if (CHECK(big != NULL)) {
        lib.free(big, 512 * MIB, 1, s1);
        still_bound(1, "mempool_alloc and mempool_free on device 1");
    } else {
        fprintf(stderr, "       mempool_alloc(512 MiB, 1, s1): %s\n", lib_why());
    }
    rt_sync(s1);
    rt_bind(0);
    for (int i = 0; i < n; i++) {
        lib.free(chunks[i], CHUNK, 0, s);
        NO_ERROR("mempool_free");
    }
    /* Allocation works again. */
    int calls = seen.calls;
    void *again = lib.alloc(CHUNK, 0, s);
    if (CHECK(again != NULL)) {
        lib.free(again, CHUNK, 0, s);
    } else {
        fprintf(stderr, "       mempool_alloc after freeing everything: %s\n", lib_why());
    }
    CHECK(seen.calls == calls);
    rt_sync(s);
    lib.empty_cache();
    st = lib_stats(0);
    print_stats("after freeing all", 0, &st);
    CHECK(st.allocations == 0 && st.reserved_current == 0);
}

#endif /* MEMPOOL_ALLOC_VARIANTS_H */
