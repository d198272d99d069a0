/*
 * pool_basics.c: two stream-ordered memory pools of 10 GiB each, one with release threshold 0
 * and one with the threshold at the pool size, next to plain aclrtMalloc / aclrtFree.
 *
 * What a pool does with freed memory depends on the runtime. CANN as documented reuses a
 * block freed on a stream for the next allocation on that stream, and gives the cached bytes
 * above the release threshold back at each synchronization. CANN's open runtime as it ships
 * does neither: every allocation takes fresh address space and cached bytes go back only
 * through aclrtMemPoolTrimTo. The program measures which it has first (sample_runtime.h:
 * allocate, free, allocate on one stream, did the address come back; free, synchronize, is
 * RESERVED 0 at threshold 0), as a CANN program must: it cannot ask the runtime, and the same
 * source also runs against installed runtimes (tests/ascend_hardware.rs), where the emulator's
 * MEMPOOL_EMU_PROFILE means nothing. tests/c_samples.rs runs it on both emulator profiles and
 * checks the measured line against the profile it set. Each check below follows the one
 * property it depends on, exactly:
 *
 * - without release at synchronization, the program gives the threshold-0 pool's cached bytes
 *   back itself after every synchronization, with aclrtMemPoolTrimTo(pool, USED), as a
 *   program written for the open runtime does, and checks RESERVED before (its cached bytes
 *   still there) and after (down to USED);
 * - without reuse, the caching pool takes fresh addresses every round (outside every earlier
 *   round's blocks) and its RESERVED grows by every round's bytes until it is trimmed in 3.
 *
 * 1. Ten rounds of four 32 MiB allocations from each pool on one stream, a memset on each,
 *    four frees, then aclrtSynchronizeStream. After every synchronization the threshold-0
 *    pool has given everything back (RESERVED == 0), and the caching pool keeps its 128 MiB
 *    cached and gets the same four addresses every round -- or, without reuse, fresh ones,
 *    with RESERVED 128 MiB more each round; aclrtGetMemInfo shows exactly the pools' RESERVED
 *    in use.
 * 2. Half the blocks still live at the synchronization: the threshold-0 pool comes down to
 *    its USED bytes exactly, the other keeps everything.
 * 3. An 8 GiB allocation from each pool (address space only, never touched); a second one
 *    does not fit in a 10 GiB pool; aclrtMemPoolTrimTo(pool, 0) empties the caching pool.
 *    (Without reuse the caching pool then holds 1408 MiB cached besides the 8 GiB, which
 *    still fit.)
 * 4. The same rounds with aclrtMalloc / aclrtMemset / aclrtFree: after each round the device
 *    has all its memory back, as with the threshold-0 pool, and never caches it as the other
 *    pool does. The time per allocation and free of both ways is printed.
 *
 * Needs a device of at least 20 GiB: on the drop-in library set MEMPOOL_EMU_DEVICE_MEMORY=32G
 * (the emulator reserves address space only; memory is committed when touched). The byte
 * counts are exact because every size is a multiple of the 2 MiB pool granularity.
 */
#define _POSIX_C_SOURCE 200809L

#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"
#include "sample_runtime.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define POOL_SIZE (10 * GIB)
#define BLOCK (32 * MIB)
#define BLOCKS 4
#define ROUNDS 10
#define BIG (8 * GIB)
#define TOUCHED 4096 /* the bytes each memset writes */
#define POOLS 2

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A uint64_t attribute of `pool`; UINT64_MAX (and a failed check) if it cannot be read. */
static uint64_t attr(aclrtMemPool pool, aclrtMemPoolAttr which)
{
    uint64_t value = UINT64_MAX;
    if (!CHECK_ACL(aclrtMemPoolGetAttr(pool, which, &value))) {
        return UINT64_MAX;
    }
    return value;
}

#define USED(pool) attr((pool), ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT)
#define RESERVED(pool) attr((pool), ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT)

/* The device's free bytes now; 0 (and a failed check) if they cannot be read. */
static uint64_t device_free(void)
{
    size_t free_bytes = 0;
    size_t total = 0;
    if (!CHECK_ACL(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total))) {
        return 0;
    }
    return (uint64_t)free_bytes;
}

/* Whether every block of `blocks` lies outside every block of the first `rounds` of
 * `earlier` (each BLOCK long). */
static int outside(void *const blocks[BLOCKS], void *earlier[][BLOCKS], int rounds)
{
    for (int b = 0; b < BLOCKS; b++) {
        const uintptr_t lo = (uintptr_t)blocks[b];
        for (int r = 0; r < rounds; r++) {
            for (int e = 0; e < BLOCKS; e++) {
                const uintptr_t elo = (uintptr_t)earlier[r][e];
                if (!(lo + BLOCK <= elo || elo + BLOCK <= lo)) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* The threshold-0 pool after a synchronization, with `used` bytes in use: with release at
 * synchronization RESERVED is max(0, USED) = USED. Without it, RESERVED is still `cached`,
 * and the program gives the cached bytes back itself, as one written for such a runtime does:
 * aclrtMemPoolTrimTo(pool, USED) (the least it may keep), after which RESERVED is USED.
 * Returns 1 when every check held. */
static int settle_threshold_0_pool(const struct sample_runtime *rt, aclrtMemPool pool, uint64_t used,
                                   uint64_t cached)
{
    int ok = CHECK_TRUE(USED(pool) == used);
    if (rt->releases) {
        return ok & CHECK_TRUE(RESERVED(pool) == used);
    }
    ok &= CHECK_TRUE(RESERVED(pool) == cached);
    ok &= CHECK_ACL(aclrtMemPoolTrimTo(pool, (size_t)used));
    return ok & CHECK_TRUE(RESERVED(pool) == used);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!CHECK_ACL(aclInit(NULL)) || !CHECK_ACL(aclrtSetDevice(0))) {
        return SAMPLE_FINISH();
    }
    aclrtStream stream = NULL;
    if (!CHECK_ACL(aclrtCreateStream(&stream))) {
        return SAMPLE_FINISH();
    }
    struct sample_runtime rt;
    if (!sample_measure_runtime(stream, &rt)) {
        return SAMPLE_FINISH();
    }
    size_t free0 = 0;
    size_t total = 0;
    if (!CHECK_ACL(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total))) {
        return SAMPLE_FINISH();
    }
    printf("device 0: %" PRIu64 " MiB, %" PRIu64 " MiB free\n", (uint64_t)total / MIB,
           (uint64_t)free0 / MIB);
    if (!CHECK_TRUE((uint64_t)free0 >= POOLS * POOL_SIZE)) {
        printf("two 10 GiB pools need a device of at least 20 GiB "
               "(on the drop-in library: MEMPOOL_EMU_DEVICE_MEMORY=32G)\n");
        return SAMPLE_FINISH();
    }

    /* ---- two pools: threshold 0 and threshold = the pool size */
    aclrtMemPool pools[POOLS] = {NULL, NULL};
    const uint64_t thresholds[POOLS] = {0, POOL_SIZE};
    for (int p = 0; p < POOLS; p++) {
        aclrtMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
        props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
        props.location.id = 0;
        props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        props.maxSize = (size_t)POOL_SIZE;
        if (!CHECK_ACL(aclrtMemPoolCreate(&pools[p], &props))) {
            return SAMPLE_FINISH();
        }
        uint64_t threshold = thresholds[p];
        CHECK_ACL(aclrtMemPoolSetAttr(pools[p], ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &threshold));
        CHECK_TRUE(attr(pools[p], ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD) == thresholds[p]);
        CHECK_TRUE(RESERVED(pools[p]) == 0); /* a new pool reserves nothing */
    }
    CHECK_TRUE(device_free() == (uint64_t)free0);

    /* ---- 1. alloc / free rounds, checked after every synchronization */
    void *earlier[ROUNDS][BLOCKS]; /* the caching pool's blocks of every round */
    memset(earlier, 0, sizeof earlier);
    uint64_t cached1 = 0; /* the caching pool's RESERVED expected */
    int addresses_as_expected = 0;
    int rule_held = 0;
    double pool_us = 0;
    for (int r = 0; r < ROUNDS; r++) {
        void *blocks[POOLS][BLOCKS];
        memset(blocks, 0, sizeof blocks);
        double t0 = now_us();
        for (int p = 0; p < POOLS; p++) {
            for (int b = 0; b < BLOCKS; b++) {
                if (CHECK_ACL(aclrtMemPoolMallocAsync(&blocks[p][b], (size_t)BLOCK, pools[p], stream))) {
                    CHECK_ACL(aclrtMemsetAsync(blocks[p][b], (size_t)BLOCK, r, TOUCHED, stream));
                }
            }
            for (int b = 0; b < BLOCKS; b++) {
                if (blocks[p][b] != NULL) {
                    CHECK_ACL(aclrtMemPoolFreeAsync(blocks[p][b], stream));
                }
            }
        }
        CHECK_ACL(aclrtSynchronizeStream(stream));
        pool_us += now_us() - t0;

        /* max(0, 0), by release or by the program's trim */
        int ok = settle_threshold_0_pool(&rt, pools[0], 0, BLOCKS * BLOCK);
        /* below the threshold: kept; without reuse, this round's blocks came on top */
        cached1 = rt.reuses ? BLOCKS * BLOCK : cached1 + BLOCKS * BLOCK;
        ok &= CHECK_TRUE(USED(pools[1]) == 0);
        ok &= CHECK_TRUE(RESERVED(pools[1]) == cached1);
        ok &= CHECK_TRUE(device_free() == (uint64_t)free0 - cached1);
        rule_held += ok;
        memcpy(earlier[r], blocks[1], sizeof earlier[r]);
        if (r > 0) {
            /* the first round's addresses again, or fresh address space */
            int as_expected = rt.reuses ? memcmp(earlier[0], blocks[1], sizeof earlier[0]) == 0
                                        : outside(blocks[1], earlier, r);
            CHECK_TRUE(as_expected);
            addresses_as_expected += as_expected;
        }
    }
    printf("rounds: the expected reservations held after %d of %d synchronizations; the caching "
           "pool %s in %d of %d rounds\n",
           rule_held, ROUNDS, rt.reuses ? "reused its addresses" : "took fresh addresses",
           addresses_as_expected, ROUNDS - 1);

    /* ---- 2. half the blocks live at the synchronization */
    void *half[POOLS][BLOCKS];
    memset(half, 0, sizeof half);
    for (int p = 0; p < POOLS; p++) {
        for (int b = 0; b < BLOCKS; b++) {
            CHECK_ACL(aclrtMemPoolMallocAsync(&half[p][b], (size_t)BLOCK, pools[p], stream));
        }
        for (int b = BLOCKS / 2; b < BLOCKS; b++) {
            if (half[p][b] != NULL) {
                CHECK_ACL(aclrtMemPoolFreeAsync(half[p][b], stream));
            }
        }
    }
    CHECK_ACL(aclrtSynchronizeStream(stream));
    settle_threshold_0_pool(&rt, pools[0], BLOCKS / 2 * BLOCK, BLOCKS * BLOCK); /* max(0, USED) */
    cached1 = rt.reuses ? BLOCKS * BLOCK : cached1 + BLOCKS * BLOCK;
    CHECK_TRUE(USED(pools[1]) == BLOCKS / 2 * BLOCK);
    CHECK_TRUE(RESERVED(pools[1]) == cached1); /* max(threshold, USED) >= all */
    for (int p = 0; p < POOLS; p++) {
        for (int b = 0; b < BLOCKS / 2; b++) {
            if (half[p][b] != NULL) {
                CHECK_ACL(aclrtMemPoolFreeAsync(half[p][b], stream));
            }
        }
    }
    CHECK_ACL(aclrtSynchronizeStream(stream));
    settle_threshold_0_pool(&rt, pools[0], 0, BLOCKS / 2 * BLOCK);
    CHECK_TRUE(RESERVED(pools[1]) == cached1);
    CHECK_TRUE(attr(pools[0], ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) == BLOCKS * BLOCK);
    CHECK_TRUE(attr(pools[1], ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == cached1);
    printf("half live: threshold-0 pool down to its used bytes, caching pool kept everything "
           "(%" PRIu64 " MiB)\n",
           cached1 / MIB);

    /* ---- 3. 8 GiB of each 10 GiB pool */
    for (int p = 0; p < POOLS; p++) {
        void *big = NULL;
        if (!CHECK_ACL(aclrtMemPoolMallocAsync(&big, (size_t)BIG, pools[p], stream))) {
            continue;
        }
        CHECK_TRUE(USED(pools[p]) == BIG);
        void *second = NULL;
        CHECK_CODE(aclrtMemPoolMallocAsync(&second, (size_t)BIG, pools[p], stream),
                   ACL_ERROR_RT_INTERNAL_ERROR); /* 16 GiB do not fit in 10 */
        CHECK_TRUE(second == NULL);
        CHECK_ACL(aclrtMemPoolFreeAsync(big, stream));
    }
    CHECK_ACL(aclrtSynchronizeStream(stream));
    settle_threshold_0_pool(&rt, pools[0], 0, BIG);
    uint64_t kept = RESERVED(pools[1]);
    if (rt.reuses) {
        CHECK_TRUE(kept >= BIG && kept <= BIG + BLOCKS * BLOCK);
    } else {
        CHECK_TRUE(kept == cached1 + BIG); /* fresh address space beside the cached bytes */
    }
    CHECK_TRUE(device_free() == (uint64_t)free0 - kept);
    CHECK_ACL(aclrtMemPoolTrimTo(pools[1], 0));
    CHECK_TRUE(RESERVED(pools[1]) == 0);
    CHECK_TRUE(device_free() == (uint64_t)free0);
    printf("8 GiB: allocated from both pools, %" PRIu64 " MiB kept by the caching pool until "
           "trimmed\n",
           kept / MIB);

    /* ---- 4. the same rounds with aclrtMalloc / aclrtFree */
    int malloc_rule = 0;
    double malloc_us = 0;
    for (int r = 0; r < ROUNDS; r++) {
        void *blocks[BLOCKS] = {NULL};
        double t0 = now_us();
        for (int b = 0; b < BLOCKS; b++) {
            if (CHECK_ACL(aclrtMalloc(&blocks[b], (size_t)BLOCK, ACL_MEM_MALLOC_HUGE_FIRST))) {
                CHECK_ACL(aclrtMemset(blocks[b], (size_t)BLOCK, r, TOUCHED));
            }
        }
        uint64_t during = device_free();
        for (int b = 0; b < BLOCKS; b++) {
            if (blocks[b] != NULL) {
                CHECK_ACL(aclrtFree(blocks[b]));
            }
        }
        malloc_us += now_us() - t0;
        uint64_t after = device_free();
        /* aclrtMalloc pads each size by up to 64 bytes, so each allocation takes at least
         * its size and at most one more 2 MiB page. */
        int ok = CHECK_TRUE(during <= (uint64_t)free0 - BLOCKS * BLOCK &&
                            during >= (uint64_t)free0 - BLOCKS * (BLOCK + 2 * MIB));
        ok &= CHECK_TRUE(after == (uint64_t)free0); /* all back, nothing cached */
        malloc_rule += ok;
    }
    printf("aclrtMalloc rounds: the memory was back after %d of %d rounds\n", malloc_rule, ROUNDS);
    printf("time per allocation and free: pools %.1f us (with their memsets and the "
           "synchronization), aclrtMalloc/aclrtFree %.1f us\n",
           pool_us / (ROUNDS * POOLS * BLOCKS), malloc_us / (ROUNDS * BLOCKS));

    /* ---- cleanup */
    for (int p = 0; p < POOLS; p++) {
        CHECK_ACL(aclrtMemPoolDestroy(pools[p]));
    }
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
