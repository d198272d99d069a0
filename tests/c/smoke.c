/*
 * smoke.c: a plain C11 program against the ACL runtime API (contract §8, the C ABI), written
 * as for CANN: it includes <acl/acl.h> and <acl/acl_rt_memory_soma.h> (the project's
 * CANN-compatible headers in backends/acl-shim/include) and runs against the project's
 * emulator-backed drop-in `libacl_rt.so`.
 *
 * 1. A pool of 1 GiB on device 0 with RELEASE_THRESHOLD = the pool size, and 20 iterations on
 *    one stream of: three stream-ordered allocations (a, b, c), two host-to-device copies, a
 *    host function computing c = a + b (standing in for a kernel), a device-to-host copy and
 *    three stream-ordered frees, then a stream synchronize. Every iteration after the first
 *    must get the first iteration's three addresses back, and every sum must be right.
 * 2. The four pool statistics after the loop.
 * 3. The bad-input codes of the contract's §3-5 and §8, each checked exactly.
 * 4. aclrtMemPoolTrimTo(pool, 0) gives all cached memory back.
 *
 * The host function reads and writes the device buffers directly. That is only valid on the
 * emulator, whose device pointers are real host addresses; on Ascend hardware this step would
 * be a kernel launch.
 *
 * Output: one line per iteration, one line per check after the loop, a summary, and last a
 * line "N passed, M failed". The exit status is 0 iff no check failed.
 *
 * Assumption: the pool granularity is the default 2 MiB, so each 256 KiB vector uses 2 MiB.
 */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N_FLOATS ((size_t)1 << 16)
#define VEC_BYTES (N_FLOATS * sizeof(float))
#define ITERATIONS 20

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define GRANULE (2 * MIB) /* the default pool granularity (contract §2) */
#define POOL_SIZE GIB
#define ROUNDED(bytes) ((((uint64_t)(bytes) + GRANULE - 1) / GRANULE) * GRANULE)
#define VEC_ROUNDED ROUNDED(VEC_BYTES) /* 256 KiB -> 2 MiB */

/* ------------------------------------------------------------------ check bookkeeping */

static int g_passed;
static int g_failed;
static int g_verbose; /* print passing checks too (off inside the loop, to keep it short) */

static const char *recent_msg(void)
{
    const char *msg = aclGetRecentErrMsg();
    return (msg != NULL && msg[0] != '\0') ? msg : "(empty)";
}

/* One check of a returned code against the exact expected code. Returns 1 when it matched. */
static int check_code(const char *expr, int line, aclError got, aclError want)
{
    if (got == want) {
        g_passed++;
        if (g_verbose) {
            printf("  ok   %s == %d\n", expr, want);
        }
        return 1;
    }
    g_failed++;
    printf("  FAIL smoke.c:%d: %s\n"
           "       returned %d, expected %d; aclGetRecentErrMsg: %s\n",
           line, expr, got, want, recent_msg());
    return 0;
}

/* One check of a condition (addresses, contents). Returns 1 when it held. */
static int check_true(const char *expr, int line, int cond)
{
    if (cond) {
        g_passed++;
        if (g_verbose) {
            printf("  ok   %s\n", expr);
        }
        return 1;
    }
    g_failed++;
    printf("  FAIL smoke.c:%d: %s does not hold\n", line, expr);
    return 0;
}

#define CHECK(call, want) check_code(#call, __LINE__, (call), (want))
#define CHECK_TRUE(cond) check_true(#cond, __LINE__, (cond) ? 1 : 0)

/* One check: a uint64_t pool attribute reads successfully and equals `want`. */
static int check_attr_u64(aclrtMemPool pool, aclrtMemPoolAttr attr, const char *name, int line,
                          uint64_t want)
{
    uint64_t got = UINT64_MAX;
    aclError rc = aclrtMemPoolGetAttr(pool, attr, &got);
    if (rc != ACL_SUCCESS) {
        g_failed++;
        printf("  FAIL smoke.c:%d: aclrtMemPoolGetAttr(%s)\n"
               "       returned %d, expected %d; aclGetRecentErrMsg: %s\n",
               line, name, rc, ACL_SUCCESS, recent_msg());
        return 0;
    }
    if (got != want) {
        g_failed++;
        printf("  FAIL smoke.c:%d: %s = %" PRIu64 ", expected %" PRIu64 "\n", line, name, got,
               want);
        return 0;
    }
    g_passed++;
    if (g_verbose) {
        printf("  ok   %s == %" PRIu64 "\n", name, want);
    }
    return 1;
}

#define CHECK_ATTR(pool, attr, want) check_attr_u64((pool), (attr), #attr, __LINE__, (want))

static int finish(void)
{
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ the "kernel" */

typedef struct {
    float *a;
    float *b;
    float *c;
    size_t n;
} AddArgs;

/* c[i] = a[i] + b[i], on the device pointers themselves (emulator only, see the top). */
static void add_vectors(void *p)
{
    const AddArgs *args = p;
    for (size_t i = 0; i < args->n; i++) {
        args->c[i] = args->a[i] + args->b[i];
    }
}

/* Static: it must outlive every enqueued host function, whatever happens in the loop. */
static AddArgs g_add_args;

/* Never written through: its address is a sentinel that must come back unchanged. */
static char g_sentinel;

/* ------------------------------------------------------------------ main */

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* ---- setup: anything failing here ends the run */
    if (!CHECK(aclInit(NULL), ACL_SUCCESS)) {
        return finish();
    }
    uint32_t device_count = 0;
    if (!CHECK(aclrtGetDeviceCount(&device_count), ACL_SUCCESS) ||
        !CHECK_TRUE(device_count >= 1)) {
        return finish();
    }
    if (!CHECK(aclrtSetDevice(0), ACL_SUCCESS)) {
        return finish();
    }
    aclrtStream stream = NULL;
    if (!CHECK(aclrtCreateStream(&stream), ACL_SUCCESS)) {
        return finish();
    }

    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = (size_t)POOL_SIZE;

    aclrtMemPool pool = NULL;
    if (!CHECK(aclrtMemPoolCreate(&pool, &props), ACL_SUCCESS)) {
        return finish();
    }
    uint64_t threshold = POOL_SIZE;
    if (!CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &threshold),
               ACL_SUCCESS)) {
        return finish();
    }

    void *host[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) {
        if (!CHECK(aclrtMallocHost(&host[k], VEC_BYTES), ACL_SUCCESS) || host[k] == NULL) {
            return finish();
        }
    }
    float *ha = host[0];
    float *hb = host[1];
    float *hc = host[2];

    printf("pool: %" PRIu64 " MiB, release threshold %" PRIu64 " MiB; vectors of %zu floats "
           "(%zu KiB, %" PRIu64 " MiB once rounded)\n",
           POOL_SIZE / MIB, threshold / MIB, N_FLOATS, VEC_BYTES / 1024, VEC_ROUNDED / MIB);

    /* ---- 1. the loop */
    uintptr_t first[3] = {0, 0, 0};
    int reused_count = 0;
    int sums_ok_count = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        for (size_t i = 0; i < N_FLOATS; i++) {
            ha[i] = (float)(i + (size_t)it);
            hb[i] = (float)(2 * i);
            hc[i] = -1.0f;
        }

        void *d[3] = {NULL, NULL, NULL};
        int ok = 1;
        for (int k = 0; k < 3; k++) {
            ok &= CHECK(aclrtMemPoolMallocAsync(&d[k], VEC_BYTES, pool, stream), ACL_SUCCESS);
            if (d[k] == NULL) {
                ok = 0;
            }
        }
        uintptr_t addr[3] = {(uintptr_t)d[0], (uintptr_t)d[1], (uintptr_t)d[2]};

        if (ok) {
            ok &= CHECK(aclrtMemcpyAsync(d[0], VEC_BYTES, ha, VEC_BYTES,
                                         ACL_MEMCPY_HOST_TO_DEVICE, stream),
                        ACL_SUCCESS);
            ok &= CHECK(aclrtMemcpyAsync(d[1], VEC_BYTES, hb, VEC_BYTES,
                                         ACL_MEMCPY_HOST_TO_DEVICE, stream),
                        ACL_SUCCESS);
        }
        if (ok) {
            g_add_args.a = d[0];
            g_add_args.b = d[1];
            g_add_args.c = d[2];
            g_add_args.n = N_FLOATS;
            ok &= CHECK(aclrtLaunchHostFunc(stream, add_vectors, &g_add_args), ACL_SUCCESS);
        }
        if (ok) {
            ok &= CHECK(aclrtMemcpyAsync(hc, VEC_BYTES, d[2], VEC_BYTES,
                                         ACL_MEMCPY_DEVICE_TO_HOST, stream),
                        ACL_SUCCESS);
        }
        for (int k = 0; k < 3; k++) {
            if (d[k] != NULL) {
                ok &= CHECK(aclrtMemPoolFreeAsync(d[k], stream), ACL_SUCCESS);
            }
        }
        if (!CHECK(aclrtSynchronizeStream(stream), ACL_SUCCESS)) {
            /* Work may still be queued against the host buffers: stop here. */
            printf("iter %d: stream synchronization failed; stopping\n", it);
            return finish();
        }

        const char *reused;
        if (it == 0) {
            memcpy(first, addr, sizeof first);
            reused = "first";
        } else {
            int reuses_first_addresses =
                addr[0] == first[0] && addr[1] == first[1] && addr[2] == first[2];
            CHECK_TRUE(reuses_first_addresses);
            reused = reuses_first_addresses ? "yes" : "NO";
            reused_count += reuses_first_addresses;
        }

        size_t bad_at = N_FLOATS;
        if (ok) {
            for (size_t i = 0; i < N_FLOATS; i++) {
                float want = (float)(i + (size_t)it) + (float)(2 * i);
                if (hc[i] != want) {
                    bad_at = i;
                    break;
                }
            }
        }
        int sum_ok = ok && bad_at == N_FLOATS;
        CHECK_TRUE(sum_ok);
        sums_ok_count += sum_ok;

        printf("iter %d: a=0x%" PRIxPTR " b=0x%" PRIxPTR " c=0x%" PRIxPTR " reused=%s ", it,
               addr[0], addr[1], addr[2], reused);
        if (sum_ok) {
            printf("sum ok\n");
        } else if (!ok) {
            printf("sum NOT CHECKED (a call failed)\n");
        } else {
            printf("sum WRONG at [%zu]: %g, expected %g\n", bad_at, (double)hc[bad_at],
                   (double)((float)(bad_at + (size_t)it) + (float)(2 * bad_at)));
        }
    }
    printf("loop: %d of %d iterations after the first reused the first addresses; "
           "%d of %d sums right\n",
           reused_count, ITERATIONS - 1, sums_ok_count, ITERATIONS);

    g_verbose = 1;

    /* ---- 2. statistics: three rounded vectors at most, all freed, all still cached */
    printf("statistics after the loop:\n");
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 0);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, 3 * VEC_ROUNDED);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, 3 * VEC_ROUNDED);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, 3 * VEC_ROUNDED);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, POOL_SIZE);

    /* ---- 3. bad input */
    printf("bad input, allocation:\n");
    void *out = &g_sentinel;
    CHECK(aclrtMemPoolMallocAsync(NULL, VEC_BYTES, pool, stream), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemPoolMallocAsync(&out, VEC_BYTES, NULL, stream), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemPoolMallocAsync(&out, VEC_BYTES, pool, NULL), ACL_ERROR_INVALID_PARAM);
    out = &g_sentinel;
    CHECK(aclrtMemPoolMallocAsync(&out, 0, pool, stream), ACL_SUCCESS);
    CHECK_TRUE(out == (void *)&g_sentinel); /* size 0: nothing written */
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 0);

    printf("bad input, free:\n");
    CHECK(aclrtMemPoolFreeAsync(NULL, stream), ACL_ERROR_INVALID_PARAM);
    void *live = NULL;
    if (CHECK(aclrtMemPoolMallocAsync(&live, 4, pool, stream), ACL_SUCCESS) &&
        CHECK_TRUE(live != NULL)) {
        uintptr_t live_addr = (uintptr_t)live;
        void *interior = (void *)(live_addr + 4);
        CHECK(aclrtMemPoolFreeAsync(live, NULL), ACL_ERROR_RT_INTERNAL_ERROR);
        CHECK(aclrtMemPoolFreeAsync(interior, stream), ACL_ERROR_RT_PARAM_INVALID);
        CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, GRANULE); /* still live */
        CHECK(aclrtMemPoolFreeAsync(live, stream), ACL_SUCCESS);
        void *stale = (void *)live_addr; /* the address only; never dereferenced */
        CHECK(aclrtMemPoolFreeAsync(stale, stream), ACL_ERROR_RT_PARAM_INVALID); /* double */
        CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 0);
    }

    printf("bad input, attributes and trim:\n");
    uint64_t value = 0;
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &value),
          ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value),
          ACL_ERROR_RT_PARAM_INVALID);
    value = 100;
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value),
          ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, 3 * VEC_ROUNDED); /* unchanged */
    value = 0;
    CHECK(aclrtMemPoolSetAttr(pool, (aclrtMemPoolAttr)99, &value), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)99, &value), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, NULL),
          ACL_ERROR_RT_PARAM_INVALID);
    value = POOL_SIZE + GRANULE;
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value),
          ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, POOL_SIZE); /* unchanged */
    CHECK(aclrtMemPoolTrimTo(pool, (size_t)(POOL_SIZE + GRANULE)), ACL_ERROR_RT_INTERNAL_ERROR);

    printf("bad input, pool creation and destruction:\n");
    aclrtMemPoolProps bad_props = props;
    bad_props.allocType = 1;
    aclrtMemPool not_created = (aclrtMemPool)&g_sentinel;
    CHECK(aclrtMemPoolCreate(&not_created, &bad_props), ACL_ERROR_INVALID_PARAM);
    CHECK_TRUE(not_created == (aclrtMemPool)&g_sentinel); /* out-pointer not written */
    CHECK(aclrtMemPoolCreate(NULL, &props), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemPoolCreate(&not_created, NULL), ACL_ERROR_INVALID_PARAM);
    aclrtMemPool scratch = NULL;
    if (CHECK(aclrtMemPoolCreate(&scratch, &props), ACL_SUCCESS)) {
        CHECK(aclrtMemPoolDestroy(scratch), ACL_SUCCESS);
        CHECK(aclrtMemPoolDestroy(scratch), ACL_ERROR_RT_INTERNAL_ERROR);
        CHECK(aclrtMemPoolGetAttr(scratch, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value),
              ACL_ERROR_RT_PARAM_INVALID);
        out = &g_sentinel;
        CHECK(aclrtMemPoolMallocAsync(&out, VEC_BYTES, scratch, stream),
              ACL_ERROR_RT_INTERNAL_ERROR);
        CHECK(aclrtMemPoolTrimTo(scratch, 0), ACL_ERROR_RT_INTERNAL_ERROR);
    }

    printf("bad input, copies and handles:\n");
    unsigned char src[16];
    unsigned char dst[8];
    unsigned char zero[8];
    memset(src, 0xAB, sizeof src);
    memset(dst, 0, sizeof dst);
    memset(zero, 0, sizeof zero);
    CHECK(aclrtMemcpy(dst, sizeof dst, src, sizeof src, ACL_MEMCPY_HOST_TO_HOST),
          ACL_ERROR_RT_PARAM_INVALID); /* count > destMax */
    CHECK(aclrtMemcpy(dst, sizeof dst, src, 0, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    CHECK_TRUE(memcmp(dst, zero, sizeof dst) == 0); /* neither call wrote anything */
    aclrtStream garbage = (aclrtStream)(uintptr_t)0x1234;
    CHECK(aclrtSynchronizeStream(garbage), ACL_ERROR_RT_INVALID_HANDLE);

    /* ---- 4. trim: everything is freed and its frees have executed */
    printf("trim:\n");
    CHECK(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 0);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, 3 * VEC_ROUNDED);
    CHECK(aclrtMemPoolTrimTo(pool, 0), ACL_SUCCESS);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, 0);
    CHECK_ATTR(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, 3 * VEC_ROUNDED);

    /* ---- cleanup */
    printf("cleanup:\n");
    CHECK(aclrtDestroyStream(stream), ACL_SUCCESS);
    CHECK(aclrtSynchronizeStream(stream), ACL_ERROR_RT_INVALID_HANDLE); /* destroyed */
    CHECK(aclrtMemPoolDestroy(pool), ACL_SUCCESS);
    for (int k = 0; k < 3; k++) {
        CHECK(aclrtFreeHost(host[k]), ACL_SUCCESS);
    }
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);

    printf("summary: reuse on %d of %d iterations after the first, %d of %d sums right\n",
           reused_count, ITERATIONS - 1, sums_ok_count, ITERATIONS);
    return finish();
}
