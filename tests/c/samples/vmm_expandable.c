/*
 * vmm_expandable.c: one reserved address range grown chunk by chunk, as torch_npu's
 * expandable segments grow theirs, and the codes of the virtual-memory calls' misuse.
 *
 *  1. aclrtMemGetAllocationGranularity: 2 MiB for MINIMUM and RECOMMENDED, 1 GiB for the
 *     1 GiB page kind;
 *  2. aclrtReserveMemAddress of 8 chunks' worth (flags 1, huge pages, as torch_npu asks),
 *     then, chunk by chunk: aclrtMallocPhysical, aclrtMapMem at the end of what is mapped, a
 *     pattern copied in; the mapped part is one contiguous range: a copy across chunk
 *     boundaries, device to device and back to the host, finds every pattern;
 *  3. aclrtMemSetAccess of one mapping read-write (what CANN grants), and the codes of the
 *     rest;
 *  4. a chunk freed while mapped keeps its memory until it is unmapped;
 *  5. the shrink: synchronize, unmap each chunk, free it, then release the range;
 *  6. misuse of every call answers CANN's code: 100000 from the ACL layer, 107000 and 107001
 *     from the runtime and the driver library, 207000 for what the driver does not support,
 *     507899 from the driver's kernel module.
 */
#include <acl/acl.h>

#include "sample_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS 4
#define RESERVED_CHUNKS 8

static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + seed * 7u + 1u) & 0xff);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = pattern(i, seed);
    }
}

static int holds(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != pattern(i, seed)) {
            return 0;
        }
    }
    return 1;
}

static aclrtPhysicalMemProp device_prop(aclrtMemAttr attr)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = attr;
    prop.location.id = 0;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.reserve = 0;
    return prop;
}

static void *at(void *base, size_t offset)
{
    return (unsigned char *)base + offset;
}

/* Misuse of the granularity query and of aclrtMallocPhysical. */
static void physical_misuse(size_t g)
{
    aclrtPhysicalMemProp prop = device_prop(ACL_HBM_MEM_HUGE);
    size_t out = 0;
    aclrtDrvMemHandle h = NULL;
    CHECK_CODE(aclrtMemGetAllocationGranularity(NULL, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &out),
               ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL),
               ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &out),
               ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

    CHECK_CODE(aclrtMallocPhysical(NULL, g, &prop, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtMallocPhysical(&h, g, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtMallocPhysical(&h, 0, &prop, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtMallocPhysical(&h, g, &prop, 1), ACL_ERROR_INVALID_PARAM);
    aclrtPhysicalMemProp bad = prop;
    bad.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = device_prop(ACL_HBM_MEM);
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = device_prop(ACL_DDR_MEM_HUGE);
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.id = 99;
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    bad = prop;
    bad.reserve = 1;
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_RT_PARAM_INVALID);
    bad = prop;
    bad.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    CHECK_CODE(aclrtMallocPhysical(&h, g, &bad, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK_CODE(aclrtMallocPhysical(&h, g + 4096, &prop, 0), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_TRUE(h == NULL);
}

/* Misuse of the reservation calls. */
static void reserve_misuse(size_t g)
{
    void *p = NULL;
    CHECK_CODE(aclrtReserveMemAddress(NULL, g, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtReserveMemAddress(&p, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtReserveMemAddress(&p, g, 0, NULL, 2), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtReserveMemAddress(&p, g, 4096, NULL, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtReserveMemAddress(&p, g, 0, (void *)(uintptr_t)4096, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_TRUE(p == NULL);
    CHECK_CODE(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM);
    /* A size below the granularity reserves one granule. */
    if (CHECK_ACL(aclrtReserveMemAddress(&p, 4096, 0, NULL, 0))) {
        CHECK_TRUE((uintptr_t)p % g == 0);
        CHECK_ACL(aclrtReleaseMemAddress(p));
        CHECK_CODE(aclrtReleaseMemAddress(p), ACL_ERROR_RT_PARAM_INVALID);
    }
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

    /* 1. The granularity. */
    aclrtPhysicalMemProp prop = device_prop(ACL_HBM_MEM_HUGE);
    size_t g = 0, recommended = 0, giant = 0;
    CHECK_ACL(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    CHECK_ACL(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &recommended));
    aclrtPhysicalMemProp giant_prop = device_prop(ACL_HBM_MEM_HUGE1G);
    CHECK_ACL(aclrtMemGetAllocationGranularity(&giant_prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &giant));
    if (!CHECK_TRUE(g == ((size_t)2 << 20)) || !CHECK_TRUE(recommended == g)) {
        return SAMPLE_FINISH();
    }
    CHECK_TRUE(giant == ((size_t)1 << 30));

    physical_misuse(g);
    reserve_misuse(g);

    /* 2. Reserve, then grow chunk by chunk. */
    void *base = NULL;
    if (!CHECK_ACL(aclrtReserveMemAddress(&base, RESERVED_CHUNKS * g, 0, NULL, 1))) {
        return SAMPLE_FINISH();
    }
    CHECK_TRUE(base != NULL && (uintptr_t)base % g == 0);
    unsigned char *host = NULL;
    unsigned char *back = NULL;
    if (!CHECK_ACL(aclrtMallocHost((void **)&host, CHUNKS * g)) ||
        !CHECK_ACL(aclrtMallocHost((void **)&back, CHUNKS * g))) {
        return SAMPLE_FINISH();
    }
    aclrtDrvMemHandle chunk[CHUNKS] = {NULL};
    for (unsigned i = 0; i < CHUNKS; i++) {
        if (!CHECK_ACL(aclrtMallocPhysical(&chunk[i], g, &prop, 0)) ||
            !CHECK_ACL(aclrtMapMem(at(base, i * g), g, 0, chunk[i], 0))) {
            return SAMPLE_FINISH();
        }
        fill(host + i * g, g, i);
        CHECK_ACL(aclrtMemcpyAsync(at(base, i * g), g, host + i * g, g, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    }
    /* The mapped part is one range: out in one copy across every chunk boundary, then a
     * device-to-device copy into a range that straddles chunks 0 and 1. */
    CHECK_ACL(aclrtMemcpyAsync(back, CHUNKS * g, base, CHUNKS * g, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    int all_back = 1;
    for (unsigned i = 0; i < CHUNKS; i++) {
        all_back &= holds(back + i * g, g, i);
    }
    CHECK_TRUE(all_back);
    CHECK_ACL(aclrtMemcpyAsync(at(base, g / 2), g, at(base, 2 * g), g, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    CHECK_ACL(aclrtMemcpyAsync(back, g, at(base, g / 2), g, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(holds(back, g, 2));

    /* Map misuse, with the range partly mapped. */
    aclrtDrvMemHandle spare = NULL;
    if (CHECK_ACL(aclrtMallocPhysical(&spare, g, &prop, 0))) {
        CHECK_CODE(aclrtMapMem(NULL, g, 0, spare, 0), ACL_ERROR_INVALID_PARAM);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g), g, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g), 0, 0, spare, 0), ACL_ERROR_INVALID_PARAM);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g), g, 0, spare, 1), ACL_ERROR_INVALID_PARAM);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g), g, g, spare, 0), ACL_ERROR_RT_PARAM_INVALID);
        CHECK_CODE(aclrtMapMem(at(base, 0), g, 0, spare, 0), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g + 4096), g, 0, spare, 0), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
        CHECK_CODE(aclrtMapMem(at(base, (RESERVED_CHUNKS - 1) * g), 2 * g, 0, spare, 0),
                   ACL_ERROR_RT_DRV_INTERNAL_ERROR);
        CHECK_ACL(aclrtFreePhysical(spare));
        CHECK_CODE(aclrtFreePhysical(spare), ACL_ERROR_RT_PARAM_INVALID);
        CHECK_CODE(aclrtMapMem(at(base, CHUNKS * g), g, 0, spare, 0), ACL_ERROR_RT_PARAM_INVALID);
    }
    CHECK_CODE(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);

    /* 3. Access: read-write over exactly one mapping is what CANN grants. */
    aclrtMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    desc.location.id = 0;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    CHECK_ACL(aclrtMemSetAccess(base, g, &desc, 1));
    CHECK_CODE(aclrtMemSetAccess(NULL, g, &desc, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemSetAccess(base, g, NULL, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemSetAccess(base, g, &desc, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemSetAccess(base, 2 * g, &desc, 1), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    aclrtMemAccessDesc other = desc;
    other.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    CHECK_CODE(aclrtMemSetAccess(base, g, &other, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    other.flags = (aclrtMemAccessFlags)7;
    CHECK_CODE(aclrtMemSetAccess(base, g, &other, 1), ACL_ERROR_RT_PARAM_INVALID);
    other = desc;
    other.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
    CHECK_CODE(aclrtMemSetAccess(base, g, &other, 1), ACL_ERROR_RT_PARAM_INVALID);

    /* Unmap and release misuse while mapped. */
    CHECK_CODE(aclrtUnmapMem(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_CODE(aclrtUnmapMem(at(base, 4096)), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_CODE(aclrtUnmapMem(at(base, (RESERVED_CHUNKS - 1) * g)), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK_CODE(aclrtReleaseMemAddress(base), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtReleaseMemAddress(at(base, g)), ACL_ERROR_RT_PARAM_INVALID);

    /* 4. A chunk freed while mapped keeps its memory until it is unmapped. */
    CHECK_ACL(aclrtFreePhysical(chunk[CHUNKS - 1]));
    chunk[CHUNKS - 1] = NULL;
    CHECK_ACL(aclrtMemcpyAsync(back, g, at(base, (CHUNKS - 1) * g), g, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_TRUE(holds(back, g, CHUNKS - 1));

    /* 5. The shrink, from the end, as torch_npu gives pages back. */
    CHECK_ACL(aclrtSynchronizeDevice());
    for (unsigned i = CHUNKS; i-- > 0;) {
        CHECK_ACL(aclrtUnmapMem(at(base, i * g)));
        if (chunk[i] != NULL) {
            CHECK_ACL(aclrtFreePhysical(chunk[i]));
        }
    }
    CHECK_CODE(aclrtUnmapMem(base), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    /* Nothing is mapped any more: the checker refuses a copy from the range. */
    CHECK_CODE(aclrtMemcpyAsync(back, g, base, g, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtReleaseMemAddress(base));
    CHECK_CODE(aclrtReleaseMemAddress(base), ACL_ERROR_RT_PARAM_INVALID);

    CHECK_ACL(aclrtFreeHost(host));
    CHECK_ACL(aclrtFreeHost(back));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
