/*
 * A program in the driver API's style, built against include/cuda.h and linked against the
 * drop-in libcuda.so by the `vmm_c` test: one reserved address range grown chunk by chunk
 * as PyTorch's expandable segments grow theirs (cuMemAddressReserve once; per chunk
 * cuMemCreate, cuMemMap at the end of what is mapped, cuMemSetAccess read-write; data
 * copied in and out across chunk boundaries; cuMemUnmap and cuMemRelease per chunk; one
 * cuMemAddressFree), the handle and property queries, and the codes of misuse. The
 * profile comes from MEMPOOL_EMU_PROFILE: on `cuda` a fresh mapping has no access until
 * cuMemSetAccess, on the Ascend profiles it is read-write at once. It prints one summary
 * line and exits 0, or names the failing calls.
 */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS 4u
#define RESERVED 8u

static int failures = 0;
static int checks = 0;

static const char *name_of(CUresult rc) {
    const char *name = NULL;
    if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == NULL) {
        return "?";
    }
    return name;
}

#define EXPECT_RC(call, want)                                                                  \
    do {                                                                                       \
        CUresult rc_ = (call);                                                                 \
        checks++;                                                                              \
        if (rc_ != (want)) {                                                                   \
            const char *m_ = mempool_cuda_shim_last_error();                                   \
            fprintf(stderr, "%s:%d: %s: %s (%d), expected %s; %s\n", __FILE__, __LINE__,       \
                    #call, name_of(rc_), (int)rc_, name_of(want), m_ != NULL ? m_ : "");       \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define CHECK(call) EXPECT_RC(call, CUDA_SUCCESS)

#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        checks++;                                                                              \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static unsigned char pattern(size_t i, unsigned seed) {
    return (unsigned char)((i * 131u + seed * 7u + 1u) & 0xff);
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        p[i] = pattern(i, seed);
    }
}

static int holds(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != pattern(i, seed)) {
            return 0;
        }
    }
    return 1;
}

static CUmemAllocationProp device_prop(int device) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; /* as PyTorch asks */
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
}

static CUmemAccessDesc read_write(int device) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = device;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

/* Misuse of the granularity query, cuMemCreate and the reservation calls. */
static void misuse(size_t g) {
    CUmemAllocationProp prop = device_prop(0);
    size_t out = 0;
    EXPECT_RC(cuMemGetAllocationGranularity(NULL, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemGetAllocationGranularity(&out, NULL, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemGetAllocationGranularity(&out, &prop, (CUmemAllocationGranularity_flags)2),
              CUDA_ERROR_INVALID_VALUE);

    CUmemGenericAllocationHandle h = 0;
    EXPECT_RC(cuMemCreate(NULL, g, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemCreate(&h, g, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemCreate(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemCreate(&h, g, &prop, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemCreate(&h, g + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CUmemAllocationProp bad = prop;
    bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
    EXPECT_RC(cuMemCreate(&h, g, &bad, 0), CUDA_ERROR_INVALID_VALUE);
    bad = prop;
    bad.location.type = CU_MEM_LOCATION_TYPE_INVALID;
    EXPECT_RC(cuMemCreate(&h, g, &bad, 0), CUDA_ERROR_INVALID_VALUE);
    bad = prop;
    bad.requestedHandleTypes = (CUmemAllocationHandleType)0x8; /* fabric */
    EXPECT_RC(cuMemCreate(&h, g, &bad, 0), CUDA_ERROR_NOT_SUPPORTED);
    bad = device_prop(99);
    EXPECT_RC(cuMemCreate(&h, g, &bad, 0), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(h == 0);
    EXPECT_RC(cuMemRelease(0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemRelease(0x1234), CUDA_ERROR_INVALID_VALUE);

    CUdeviceptr p = 0;
    EXPECT_RC(cuMemAddressReserve(NULL, g, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemAddressReserve(&p, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemAddressReserve(&p, g, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemAddressReserve(&p, g, 3, 0, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(p == 0);
    EXPECT_RC(cuMemAddressFree(0, g), CUDA_ERROR_INVALID_VALUE);
    if (cuMemAddressReserve(&p, 2 * g, 0, 0, 0) == CUDA_SUCCESS) {
        EXPECT(p % g == 0);
        EXPECT_RC(cuMemAddressFree(p, g), CUDA_ERROR_INVALID_VALUE);     /* not its size */
        EXPECT_RC(cuMemAddressFree(p + g, g), CUDA_ERROR_INVALID_VALUE); /* not its start */
        CHECK(cuMemAddressFree(p, 2 * g));
        EXPECT_RC(cuMemAddressFree(p, 2 * g), CUDA_ERROR_INVALID_VALUE);
    } else {
        fprintf(stderr, "cuMemAddressReserve of two granules failed\n");
        failures++;
    }
}

int main(void) {
    const char *profile = getenv("MEMPOOL_EMU_PROFILE");
    const int cuda_profile = profile != NULL && strcmp(profile, "cuda") == 0;
    size_t g = 0;
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "cuInit failed\n");
        return 1;
    }
    CUmemAllocationProp prop = device_prop(0);
    /* No context is current yet: the virtual-memory calls do not need one. */
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t recommended = 0;
    CHECK(cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    if (g != (2u << 20) || recommended != g) {
        fprintf(stderr, "granularity %zu, recommended %zu\n", g, recommended);
        return 1;
    }
    misuse(g);

    CUcontext ctx = NULL;
    CUstream stream = NULL;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    /* Reserve once, as an expandable segment does (alignment 0, address 0). */
    CUdeviceptr base = 0;
    CHECK(cuMemAddressReserve(&base, RESERVED * g, 0, 0, 0));
    EXPECT(base != 0 && base % g == 0);
    unsigned char *host = NULL;
    unsigned char *back = NULL;
    CHECK(cuMemAllocHost((void **)&host, CHUNKS * g));
    CHECK(cuMemAllocHost((void **)&back, CHUNKS * g));
    if (failures > 0 || host == NULL || back == NULL) {
        fprintf(stderr, "cuda vmm: setup failed\n");
        return 1;
    }

    /* Grow: create, map at the end, set access, copy a pattern in. */
    CUmemGenericAllocationHandle chunk[CHUNKS] = {0};
    const CUmemAccessDesc rw = read_write(0);
    CUmemLocation dev0;
    dev0.type = CU_MEM_LOCATION_TYPE_DEVICE;
    dev0.id = 0;
    for (unsigned i = 0; i < CHUNKS; i++) {
        CHECK(cuMemCreate(&chunk[i], g, &prop, 0));
        CHECK(cuMemMap(base + i * g, g, 0, chunk[i], 0));
        if (cuda_profile && i == 0) {
            /* No access yet: the checker refuses the copy. */
            EXPECT_RC(cuMemcpyHtoDAsync(base, host, 16, stream), CUDA_ERROR_INVALID_VALUE);
        }
        unsigned long long flags = 99;
        CHECK(cuMemGetAccess(&flags, &dev0, base + i * g));
        EXPECT(flags == (cuda_profile ? CU_MEM_ACCESS_FLAGS_PROT_NONE : CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
        CHECK(cuMemSetAccess(base + i * g, g, &rw, 1));
        CHECK(cuMemGetAccess(&flags, &dev0, base + i * g));
        EXPECT(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        fill(host + i * g, g, i);
        CHECK(cuMemcpyHtoDAsync(base + i * g, host + i * g, g, stream));
    }
    /* The mapped part is one range: out in one copy, and device to device across chunks. */
    CHECK(cuMemcpyDtoHAsync(back, base, CHUNKS * g, stream));
    CHECK(cuStreamSynchronize(stream));
    int all_back = 1;
    for (unsigned i = 0; i < CHUNKS; i++) {
        all_back &= holds(back + i * g, g, i);
    }
    EXPECT(all_back);
    CHECK(cuMemcpyDtoDAsync(base + g / 2, base + 2 * g, g, stream));
    CHECK(cuMemcpyDtoHAsync(back, base + g / 2, g, stream));
    CHECK(cuStreamSynchronize(stream));
    EXPECT(holds(back, g, 2));

    /* The handle and its properties from any address of a mapping. */
    CUmemGenericAllocationHandle again = 0;
    CHECK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(base + g + 12345)));
    EXPECT(again == chunk[1]);
    CHECK(cuMemRelease(again));
    CUmemAllocationProp got;
    memset(&got, 0xff, sizeof got);
    CHECK(cuMemGetAllocationPropertiesFromHandle(&got, chunk[1]));
    EXPECT(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT(got.location.id == 0 && got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    EXPECT(got.win32HandleMetaData == NULL && got.allocFlags.compressionType == 0);
    EXPECT_RC(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(base + (RESERVED - 1) * g)),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemRetainAllocationHandle(NULL, (void *)(uintptr_t)base), CUDA_ERROR_INVALID_VALUE);

    /* Misuse with the range partly mapped. */
    CUmemGenericAllocationHandle spare = 0;
    CHECK(cuMemCreate(&spare, g, &prop, 0));
    EXPECT_RC(cuMemMap(0, g, 0, spare, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemMap(base + CHUNKS * g, 0, 0, spare, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemMap(base + CHUNKS * g, g, g, spare, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemMap(base + CHUNKS * g, g, 0, spare, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemMap(base, g, 0, spare, 0), CUDA_ERROR_INVALID_VALUE);                  /* mapped */
    EXPECT_RC(cuMemMap(base + CHUNKS * g + 4096, g, 0, spare, 0), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    EXPECT_RC(cuMemMap(base + (RESERVED - 1) * g, 2 * g, 0, spare, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemRelease(spare));
    EXPECT_RC(cuMemRelease(spare), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemMap(base + CHUNKS * g, g, 0, spare, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemSetAccess(base, g, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemSetAccess(base, g, &rw, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemSetAccess(base + (CHUNKS - 1) * g, 2 * g, &rw, 1), CUDA_ERROR_INVALID_VALUE); /* a hole */
    CUmemAccessDesc bad = read_write(7);
    EXPECT_RC(cuMemSetAccess(base, g, &bad, 1), CUDA_ERROR_INVALID_DEVICE);
    bad = read_write(0);
    bad.flags = (CUmemAccess_flags)2;
    EXPECT_RC(cuMemSetAccess(base, g, &bad, 1), CUDA_ERROR_INVALID_VALUE);
    unsigned long long flags = 0;
    EXPECT_RC(cuMemGetAccess(&flags, &dev0, base + (RESERVED - 1) * g), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemGetAccess(&flags, NULL, base), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemUnmap(base, g / 2), CUDA_ERROR_INVALID_VALUE);       /* part of a mapping */
    EXPECT_RC(cuMemUnmap(base + 4096, g), CUDA_ERROR_INVALID_VALUE);    /* not a start */
    EXPECT_RC(cuMemAddressFree(base, RESERVED * g), CUDA_ERROR_INVALID_VALUE); /* still mapped */

    /* Released while mapped: the memory stays until the unmap (as cuda.core does it). */
    CHECK(cuMemRelease(chunk[CHUNKS - 1]));
    CHECK(cuMemcpyDtoHAsync(back, base + (CHUNKS - 1) * g, g, stream));
    CHECK(cuStreamSynchronize(stream));
    EXPECT(holds(back, g, CHUNKS - 1));

    /* Shrink: synchronize, then unmap and release chunk by chunk; one unmap may also span
     * several whole mappings. */
    CHECK(cuCtxSynchronize());
    CHECK(cuMemUnmap(base + (CHUNKS - 2) * g, 2 * g));
    CHECK(cuMemRelease(chunk[CHUNKS - 2]));
    for (unsigned i = CHUNKS - 2; i-- > 0;) {
        CHECK(cuMemUnmap(base + i * g, g));
        CHECK(cuMemRelease(chunk[i]));
    }
    EXPECT_RC(cuMemUnmap(base, g), CUDA_ERROR_INVALID_VALUE);
    /* Nothing is mapped any more: the checker refuses a copy from the range. */
    EXPECT_RC(cuMemcpyDtoHAsync(back, base, 16, stream), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAddressFree(base, RESERVED * g));

    CHECK(cuMemFreeHost(host));
    CHECK(cuMemFreeHost(back));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuDevicePrimaryCtxRelease(0));
    printf("cuda vmm: %d checks, %d failed, granularity %zu, on %s\n", checks, failures, g,
           mempool_cuda_shim_version());
    return failures == 0 ? 0 : 1;
}
