/*
 * pool_basics.c: two stream-ordered memory pools of 10 GiB each, one with release threshold 0
 * and one with the threshold at the pool size, next to plain aclrtMalloc / aclrtFree.
 *
 * 1. Ten rounds of four 32 MiB allocations from each pool on one stream, a memset on each,
 *    four frees, then aclrtSynchronizeStream. After every synchronization the threshold rule
 *    holds: a pool keeps max(threshold, USED) bytes reserved, so the threshold-0 pool has
 *    given everything back (RESERVED == 0) and the other keeps its 128 MiB cached, gets the
 *    same four addresses every round, and aclrtGetMemInfo shows exactly that much in use.
 * 2. Half the blocks still live at the synchronization: the threshold-0 pool comes down to
 *    its USED bytes exactly, the other keeps everything.
 * 3. An 8 GiB allocation from each pool (address space only, never touched); a second one
 *    does not fit in a 10 GiB pool; aclrtMemPoolTrimTo(pool, 0) empties the caching pool.
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
    void *first[BLOCKS] = {NULL};
    int same_addresses = 0;
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

        int ok = CHECK_TRUE(USED(pools[0]) == 0) & CHECK_TRUE(USED(pools[1]) == 0);
        ok &= CHECK_TRUE(RESERVED(pools[0]) == 0);               /* max(0, 0) */
        ok &= CHECK_TRUE(RESERVED(pools[1]) == BLOCKS * BLOCK);  /* below the threshold: kept */
        ok &= CHECK_TRUE(device_free() == (uint64_t)free0 - BLOCKS * BLOCK);
        rule_held += ok;
        if (r == 0) {
            memcpy(first, blocks[1], sizeof first);
        } else {
            int same = memcmp(first, blocks[1], sizeof first) == 0;
            CHECK_TRUE(same);
            same_addresses += same;
        }
    }
    printf("rounds: the threshold rule held after %d of %d synchronizations; the caching pool "
           "reused its addresses in %d of %d rounds\n",
           rule_held, ROUNDS, same_addresses, ROUNDS - 1);

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
    CHECK_TRUE(USED(pools[0]) == BLOCKS / 2 * BLOCK);
    CHECK_TRUE(RESERVED(pools[0]) == BLOCKS / 2 * BLOCK); /* max(0, USED) */
    CHECK_TRUE(USED(pools[1]) == BLOCKS / 2 * BLOCK);
    CHECK_TRUE(RESERVED(pools[1]) == BLOCKS * BLOCK);     /* max(threshold, USED) >= all */
    for (int p = 0; p < POOLS; p++) {
        for (int b = 0; b < BLOCKS / 2; b++) {
            if (half[p][b] != NULL) {
                CHECK_ACL(aclrtMemPoolFreeAsync(half[p][b], stream));
            }
        }
    }
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(RESERVED(pools[0]) == 0);
    CHECK_TRUE(RESERVED(pools[1]) == BLOCKS * BLOCK);
    CHECK_TRUE(attr(pools[0], ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) == BLOCKS * BLOCK);
    CHECK_TRUE(attr(pools[1], ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == BLOCKS * BLOCK);
    printf("half live: threshold-0 pool down to its used bytes, caching pool kept everything\n");

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
    CHECK_TRUE(RESERVED(pools[0]) == 0);
    uint64_t kept = RESERVED(pools[1]);
    CHECK_TRUE(kept >= BIG && kept <= BIG + BLOCKS * BLOCK);
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
        /* aclrtMalloc pads each size by up to 64 bytes, so each allocation takes at least
         * its size and at most one more 2 MiB page. */
        int ok = CHECK_TRUE(during <= (uint64_t)free0 - BLOCKS * BLOCK &&
                            during >= (uint64_t)free0 - BLOCKS * (BLOCK + 2 * MIB));
        ok &= CHECK_TRUE(device_free() == (uint64_t)free0); /* all back, nothing cached */
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
