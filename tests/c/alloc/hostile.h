/*
 * hostile.h: one row per bad input to every export (included by protocol.c and protocol.cpp
 * after variants.h). Each row runs its call on a fresh thread (so the thread's last error
 * starts empty) and checks: no crash, the documented answer (NULL, -1 or nothing), a
 * non-NULL mempool_last_error() (none for free(NULL) and the good calls), and nothing lost:
 * the statistics of both devices unchanged, and a live allocation still usable. Each row
 * prints "row <name>: ok: <last error>" or "row <name>: FAILED".
 */
#ifndef MEMPOOL_ALLOC_HOSTILE_H
#define MEMPOOL_ALLOC_HOSTILE_H

#include "variants.h"

#include <math.h>

/* The answer a row expects. */
enum expect { NULL_PTR, MINUS_ONE, NOTHING, SUCCEEDS };

enum row_id {
    FREE_GARBAGE,
    FREE_INTERIOR,
    FREE_HOST_MALLOC,
    FREE_RUNTIME_ALLOC,
    FREE_TWICE,
    FREE_WRONG_SIZE,
    FREE_WRONG_DEVICE,
    FREE_DEVICE_MINUS_1,
    FREE_DEVICE_99,
    FREE_NULL,
    ALLOC_ZERO,
    ALLOC_4_EIB,
    ALLOC_SIZE_MAX,
    ALLOC_DEVICE_MINUS_1,
    ALLOC_DEVICE_99,
    ALLOC_DEVICE_PAST_COUNT,
    ALLOC_GARBAGE_STREAM,
    RECORD_NULL,
    RECORD_UNKNOWN,
    STATS_NULL,
    STATS_DEVICE_MINUS_1,
    STATS_DEVICE_99,
    STATS_VERSION_0,
    STATS_SIZE_TOO_SMALL,
    ON_OOM_NULL,
    FRACTION_NAN,
    FRACTION_ZERO,
    FRACTION_MINUS_HALF,
    FRACTION_ONE_AND_HALF,
    FRACTION_INF,
    FRACTION_DEVICE_MINUS_1,
    FRACTION_DEVICE_99,
    INIT_MINUS_1,
    RESET_PEAK_99,
    RESET_PEAK_MINUS_1,
    RESET_PEAK_GOOD,
    EMPTY_CACHE_CHECKED,
    ON_OOM_FULL,
    DUMP_NULL,
    DUMP_MISSING_FOLDER,
    HISTORY_GOOD,
    REGISTER_NULL_STREAM,
    REGISTER_DEVICE_99,
    REGISTER_DEVICE_MINUS_1,
    UNREGISTER_NEVER_REGISTERED,
    UNREGISTER_DEVICE_99,
    REGISTER_STREAM,
    ROWS
};

static const struct {
    const char *name;
    enum expect expect;
} rows[ROWS] = {
    {"free of a garbage pointer", NOTHING},
    {"free of a pointer inside a live allocation", NOTHING},
    {"free of host malloc memory", NOTHING},
    {"free of the runtime's own device memory", NOTHING},
    {"double free", NOTHING},
    {"free with a wrong size", NOTHING},
    {"free with the wrong device", NOTHING},
    {"free on device -1", NOTHING},
    {"free on device 99", NOTHING},
    {"free(NULL)", SUCCEEDS},
    {"alloc of 0 bytes", NULL_PTR},
    {"alloc of 4 EiB", NULL_PTR},
    {"alloc of SIZE_MAX", NULL_PTR},
    {"alloc on device -1", NULL_PTR},
    {"alloc on device 99", NULL_PTR},
    {"alloc on device 2 (of 2)", NULL_PTR},
    {"alloc on a stream that is no stream", NULL_PTR},
    {"record_stream(NULL, s)", NOTHING},
    {"record_stream of an unknown pointer", NOTHING},
    {"stats(0, NULL)", MINUS_ONE},
    {"stats(-1, &s)", MINUS_ONE},
    {"stats(99, &s)", MINUS_ONE},
    {"stats with version 0", MINUS_ONE},
    {"stats with a size too small", MINUS_ONE},
    {"on_oom(NULL, NULL)", MINUS_ONE},
    {"set_memory_fraction(NaN, 0)", NOTHING},
    {"set_memory_fraction(0, 0)", NOTHING},
    {"set_memory_fraction(-0.5, 0)", NOTHING},
    {"set_memory_fraction(1.5, 0)", NOTHING},
    {"set_memory_fraction(+inf, 0)", NOTHING},
    {"set_memory_fraction(0.5, -1)", NOTHING},
    {"set_memory_fraction(0.5, 99)", NOTHING},
    {"init(-1)", NOTHING},
    {"reset_peak_stats(99)", MINUS_ONE},
    {"reset_peak_stats(-1)", MINUS_ONE},
    {"reset_peak_stats(0) (good)", SUCCEEDS},
    {"empty_cache_checked(true) with a live allocation (good)", SUCCEEDS},
    {"on_oom past 16 observers", MINUS_ONE},
    {"dump_snapshot(NULL)", MINUS_ONE},
    {"dump_snapshot into a missing folder", MINUS_ONE},
    {"record_history(1000) then record_history(0) (good)", SUCCEEDS},
    {"register_stream_allocator(0, NULL)", MINUS_ONE},
    {"register_stream_allocator(99, s)", MINUS_ONE},
    {"register_stream_allocator(-1, s)", MINUS_ONE},
    {"unregister_stream_allocator(0, s) with nothing registered", MINUS_ONE},
    {"unregister_stream_allocator(99, s)", MINUS_ONE},
#ifdef FLAVOUR_ACL
    /* CANN's runtime has the registry: registered, then unregistered. */
    {"register_stream_allocator(0, s) then unregister (good)", SUCCEEDS},
#else
    /* CUDA has no external-allocator registry. */
    {"register_stream_allocator(0, s) on CUDA (no registry)", MINUS_ONE},
#endif
};

#define LIVE_SIZE (MIB + 7)

/* What a row's thread gets, does and brings back. */
typedef struct {
    int row;
    rt_stream s;
    unsigned char *live;
    void *foreign;
    int ret;
    void *ptr;
    int extra_ok;
    char err[512];
} row_ctx;

static void count_oom(int device, size_t size, const mempool_alloc_stats *stats, void *user)
{
    (void)device;
    (void)size;
    (void)stats;
    __atomic_fetch_add((int *)user, 1, __ATOMIC_SEQ_CST);
}

static int oom_calls;

static void stats_with(row_ctx *c, int dev, uint32_t version, uint32_t size)
{
    mempool_alloc_stats st;
    memset(&st, 0, sizeof st);
    st.version = version;
    st.size = size;
    c->ret = lib.stats(dev, &st);
}

/* The row's call, on its own thread; `extra_ok` is 0 when a side condition failed. */
static void row_call(row_ctx *c)
{
    char host[256];
    c->extra_ok = 1;
    switch ((enum row_id)c->row) {
    case FREE_GARBAGE: lib.free((void *)(uintptr_t)0xdead0000u, 64, 0, c->s); break;
    case FREE_INTERIOR: lib.free(c->live + 64, 64, 0, c->s); break;
    case FREE_HOST_MALLOC: {
        unsigned char *h = (unsigned char *)malloc(256);
        memset(h, 0x3C, 256);
        lib.free(h, 256, 0, c->s);
        c->extra_ok = all_bytes(h, 256, 0x3C, "host memory handed to mempool_free");
        free(h);
        break;
    }
    case FREE_RUNTIME_ALLOC: lib.free(c->foreign, MIB, 0, c->s); break;
    case FREE_TWICE: {
        void *q = lib.alloc(4096, 0, c->s);
        if (q == NULL) {
            c->extra_ok = 0;
            snprintf(host, sizeof host, "%s", lib_why());
            fprintf(stderr, "       the first alloc failed: %s\n", host);
            break;
        }
        lib.free(q, 4096, 0, c->s);
        c->extra_ok = lib.last_error() == NULL;
        lib.free(q, 4096, 0, c->s);
        break;
    }
    case FREE_WRONG_SIZE: lib.free(c->live, 2 * LIVE_SIZE, 0, c->s); break;
    case FREE_WRONG_DEVICE: lib.free(c->live, LIVE_SIZE, 1, c->s); break;
    case FREE_DEVICE_MINUS_1: lib.free(c->live, LIVE_SIZE, -1, c->s); break;
    case FREE_DEVICE_99: lib.free(c->live, LIVE_SIZE, 99, c->s); break;
    case FREE_NULL:
        lib.free(NULL, 0, 0, c->s);
        lib.free(NULL, 64, 0, c->s);
        break;
    case ALLOC_ZERO: c->ptr = lib.alloc(0, 0, c->s); break;
    case ALLOC_4_EIB: c->ptr = lib.alloc((size_t)1 << 62, 0, c->s); break;
    case ALLOC_SIZE_MAX: c->ptr = lib.alloc(SIZE_MAX, 0, c->s); break;
    case ALLOC_DEVICE_MINUS_1: c->ptr = lib.alloc(64, -1, c->s); break;
    case ALLOC_DEVICE_99: c->ptr = lib.alloc(64, 99, c->s); break;
    case ALLOC_DEVICE_PAST_COUNT: c->ptr = lib.alloc(64, DEVICES, c->s); break;
    case ALLOC_GARBAGE_STREAM: c->ptr = lib.alloc(64, 0, (void *)(uintptr_t)0xdead0u); break;
    case RECORD_NULL: lib.record_stream(NULL, c->s); break;
    case RECORD_UNKNOWN: lib.record_stream((void *)(uintptr_t)0xdead0000u, c->s); break;
    case STATS_NULL: c->ret = lib.stats(0, NULL); break;
    case STATS_DEVICE_MINUS_1: stats_with(c, -1, MEMPOOL_ALLOC_STATS_VERSION, sizeof(mempool_alloc_stats)); break;
    case STATS_DEVICE_99: stats_with(c, 99, MEMPOOL_ALLOC_STATS_VERSION, sizeof(mempool_alloc_stats)); break;
    case STATS_VERSION_0: stats_with(c, 0, 0, sizeof(mempool_alloc_stats)); break;
    case STATS_SIZE_TOO_SMALL: stats_with(c, 0, MEMPOOL_ALLOC_STATS_VERSION, 4); break;
    case ON_OOM_NULL: c->ret = lib.on_oom(NULL, NULL); break;
    case FRACTION_NAN: lib.set_fraction(NAN, 0); break;
    case FRACTION_ZERO: lib.set_fraction(0.0, 0); break;
    case FRACTION_MINUS_HALF: lib.set_fraction(-0.5, 0); break;
    case FRACTION_ONE_AND_HALF: lib.set_fraction(1.5, 0); break;
    case FRACTION_INF: lib.set_fraction(INFINITY, 0); break;
    case FRACTION_DEVICE_MINUS_1: lib.set_fraction(0.5, -1); break;
    case FRACTION_DEVICE_99: lib.set_fraction(0.5, 99); break;
    case INIT_MINUS_1: lib.init(-1); break;
    case RESET_PEAK_99: c->ret = lib.reset_peak(99); break;
    case RESET_PEAK_MINUS_1: c->ret = lib.reset_peak(-1); break;
    case RESET_PEAK_GOOD: {
        c->ret = lib.reset_peak(0);
        mempool_alloc_stats st;
        memset(&st, 0, sizeof st);
        st.version = MEMPOOL_ALLOC_STATS_VERSION;
        st.size = (uint32_t)sizeof st;
        c->extra_ok = lib.stats(0, &st) == 0 && st.used_high == st.used_current &&
                      st.requested_high == st.requested_current && st.reserved_high == st.reserved_current;
        if (!c->extra_ok) {
            print_stats("right after reset_peak_stats(0)", 0, &st);
        }
        /* The stats call cleared the error the row is judged on: redo the reset. */
        c->ret |= lib.reset_peak(0);
        break;
    }
    case EMPTY_CACHE_CHECKED: lib.empty_cache_checked(true); break;
    case ON_OOM_FULL: {
        int ok = 0;
        c->ret = 0;
        while (ok <= 16 && (c->ret = lib.on_oom(count_oom, &oom_calls)) == 0) {
            ok++;
        }
        printf("       %d observers registered before -1\n", ok);
        c->extra_ok = ok == 16;
        break;
    }
    case DUMP_NULL: c->ret = lib.dump_snapshot(NULL); break;
    case DUMP_MISSING_FOLDER: c->ret = lib.dump_snapshot("/nonexistent-mempool-folder/x.pickle"); break;
    case HISTORY_GOOD: c->ret = lib.record_history(1000) | lib.record_history(0); break;
    case REGISTER_NULL_STREAM: c->ret = lib.register_allocator(0, NULL); break;
    case REGISTER_DEVICE_99: c->ret = lib.register_allocator(99, c->s); break;
    case REGISTER_DEVICE_MINUS_1: c->ret = lib.register_allocator(-1, c->s); break;
    case UNREGISTER_NEVER_REGISTERED: c->ret = lib.unregister_allocator(0, c->s); break;
    case UNREGISTER_DEVICE_99: c->ret = lib.unregister_allocator(99, c->s); break;
#ifdef FLAVOUR_ACL
    case REGISTER_STREAM: c->ret = lib.register_allocator(0, c->s) | lib.unregister_allocator(0, c->s); break;
#else
    case REGISTER_STREAM: c->ret = lib.register_allocator(0, c->s); break;
#endif
    case ROWS: break;
    }
    const char *e = lib.last_error();
    snprintf(c->err, sizeof c->err, "%s", e != NULL ? e : "");
}

static void row_thread(void *arg)
{
    rt_bind(0);
    row_call((row_ctx *)arg);
}

/* The live allocation holds `v` in its first and last bytes, checked on its stream. */
static int live_usable(row_ctx *c, int v)
{
    unsigned char probe[2 * PROBE];
    rt_memset(c->live, v, LIVE_SIZE, c->s);
    rt_d2h(probe, c->live, PROBE, c->s);
    rt_d2h(probe + PROBE, c->live + LIVE_SIZE - PROBE, PROBE, c->s);
    rt_sync(c->s);
    return all_bytes(probe, sizeof probe, v, "the live allocation");
}

static int same_stats(const mempool_alloc_stats *a, const mempool_alloc_stats *b)
{
    return a->allocations == b->allocations && a->requested_current == b->requested_current &&
           a->pending_frees == b->pending_frees &&
           a->stream_order_violations == b->stream_order_violations && a->memory_limit == b->memory_limit;
}

static void variant_hostile(void)
{
    start();
    rt_bind(0);
    row_ctx c;
    memset(&c, 0, sizeof c);
    c.s = stream_on(0);
    c.live = (unsigned char *)lib.alloc(LIVE_SIZE, 0, c.s);
    if (!CHECK(c.live != NULL)) {
        fprintf(stderr, "       mempool_alloc(%zu, 0, s): %s\n", (size_t)LIVE_SIZE, lib_why());
        return;
    }
    still_bound(0, "mempool_alloc");
    c.foreign = rt_foreign_alloc(MIB, c.s);
    int failed_rows = 0;
    for (int r = 0; r < ROWS; r++) {
        mempool_alloc_stats before[DEVICES], after[DEVICES];
        for (int d = 0; d < DEVICES; d++) {
            before[d] = lib_stats(d);
        }
        still_bound(0, "mempool_stats");
        int failed = h_failed;
        c.row = r;
        c.ret = 12345;
        c.ptr = (void *)&c;
        c.err[0] = '\0';
        in_fresh_thread(row_thread, &c);
        switch (rows[r].expect) {
        case NULL_PTR: CHECK(c.ptr == NULL); break;
        case MINUS_ONE: CHECK(c.ret == -1); break;
        case NOTHING: break;
        case SUCCEEDS: CHECK(c.ret == 12345 || c.ret == 0); break;
        }
        if (rows[r].expect == SUCCEEDS) {
            CHECK(c.err[0] == '\0');
        } else {
            CHECK(c.err[0] != '\0');
        }
        CHECK(c.extra_ok);
        for (int d = 0; d < DEVICES; d++) {
            after[d] = lib_stats(d);
            if (!CHECK(same_stats(&before[d], &after[d]))) {
                print_stats("before the row", d, &before[d]);
                print_stats("after the row", d, &after[d]);
            }
        }
        CHECK(after[0].allocations == 1);
        CHECK(live_usable(&c, 0x10 + r));
        if (h_failed == failed) {
            printf("row %s: ok: %s\n", rows[r].name, c.err[0] != '\0' ? c.err : "(no error)");
        } else {
            failed_rows++;
            printf("row %s: FAILED (ret %d, ptr %p, last error \"%s\")\n", rows[r].name, c.ret, c.ptr, c.err);
        }
    }
    /* The runtime's own memory is untouched: the runtime frees it. */
    rt_foreign_free(c.foreign, c.s);
    /* The live allocation frees cleanly, and then the device is empty. */
    lib.free(c.live, LIVE_SIZE, 0, c.s);
    NO_ERROR("mempool_free");
    rt_sync(c.s);
    lib.empty_cache();
    still_bound(0, "mempool_empty_cache");
    mempool_alloc_stats end = lib_stats(0);
    print_stats("at the end", 0, &end);
    CHECK(end.allocations == 0 && end.requested_current == 0 && end.reserved_current == 0);
    CHECK(oom_calls == 0);
    printf("hostile: %d rows, %d failed\n", ROWS, failed_rows);
}

#endif /* MEMPOOL_ALLOC_HOSTILE_H */
