/*
 * sample_runtime.h: what the runtime under a sample does with freed pool memory, measured the
 * way a CANN program that must run on any installed runtime measures it (C11 and C++17).
 *
 * CANN documents that a pool hands a block freed on a stream back to the next allocation on
 * that stream, and that a synchronization gives the cached bytes above the release threshold
 * back to the device. CANN's open runtime as it ships does neither: every allocation takes
 * fresh address space, and cached blocks go back only through aclrtMemPoolTrimTo. A program
 * cannot ask the runtime which of the two it is, so it tries, once, on a pool of its own:
 *
 *   reuse:   allocate, free, allocate again on one stream; reuse when the address came back;
 *   release: free that block too, synchronize, and read RESERVED with release threshold 0;
 *            release when it is 0.
 *
 * The probe pool is trimmed to 0 and destroyed, so it leaves nothing reserved behind.
 * sample_measure_runtime prints one line
 *
 *   runtime: same-stream reuse yes|no, release at synchronization yes|no
 *
 * which tests/c_samples.rs compares with the emulator profile it chose for the run
 * (documented: yes, yes; cann-open: no, no), so a library that ignored its profile would
 * still fail there although each sample's own checks follow what it measured.
 */
#ifndef MEMPOOL_SAMPLES_SAMPLE_RUNTIME_H
#define MEMPOOL_SAMPLES_SAMPLE_RUNTIME_H

#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What sample_measure_runtime found. */
struct sample_runtime {
    /* A block freed on a stream comes back to the next allocation on that stream. */
    int reuses;
    /* A synchronization gives cached bytes above the release threshold back. */
    int releases;
};

/* Measures *rt on `stream` with a pool of its own and prints the "runtime:" line. Returns 1
 * when every call succeeded (each is a check of its own). */
static inline int sample_measure_runtime(aclrtStream stream, struct sample_runtime *rt)
{
    const size_t bytes = (size_t)2 << 20; /* one granule of the drop-in library */
    rt->reuses = 0;
    rt->releases = 0;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.id = 0;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = (size_t)64 << 20;
    aclrtMemPool pool = NULL;
    if (!CHECK_ACL(aclrtMemPoolCreate(&pool, &props))) {
        return 0;
    }
    uint64_t threshold = 0;
    int ok = CHECK_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &threshold));
    void *first = NULL;
    void *again = NULL;
    if (CHECK_ACL(aclrtMemPoolMallocAsync(&first, bytes, pool, stream))) {
        ok &= CHECK_ACL(aclrtMemPoolFreeAsync(first, stream));
        if (CHECK_ACL(aclrtMemPoolMallocAsync(&again, bytes, pool, stream))) {
            rt->reuses = again == first;
            ok &= CHECK_ACL(aclrtMemPoolFreeAsync(again, stream));
        } else {
            ok = 0;
        }
    } else {
        ok = 0;
    }
    ok &= CHECK_ACL(aclrtSynchronizeStream(stream));
    uint64_t reserved = UINT64_MAX;
    ok &= CHECK_ACL(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
    rt->releases = reserved == 0;
    ok &= CHECK_ACL(aclrtMemPoolTrimTo(pool, 0));
    reserved = UINT64_MAX;
    ok &= CHECK_ACL(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
    ok &= CHECK_TRUE(reserved == 0); /* trimmed: the probe keeps nothing */
    ok &= CHECK_ACL(aclrtMemPoolDestroy(pool));
    printf("runtime: same-stream reuse %s, release at synchronization %s\n", rt->reuses ? "yes" : "no",
           rt->releases ? "yes" : "no");
    return ok;
}

#endif /* MEMPOOL_SAMPLES_SAMPLE_RUNTIME_H */
