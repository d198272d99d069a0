/*
 * A program in the driver API's style, built against include/cuda.h and linked against
 * the drop-in libcuda.so by the `headers` test: initialization, a device and its primary
 * context, a pool and its attributes, allocation, free and trim, two streams ordered by an
 * event, a host function, copies with exact data, and the device's current pool with
 * cuMemAllocAsync. It prints one summary line and exits 0, or names the failing call.
 */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N (1u << 20)
#define MIB (1ull << 20)

static int failures = 0;

static const char *name_of(CUresult rc) {
    const char *name = NULL;
    if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == NULL) {
        return "?";
    }
    return name;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        CUresult rc_ = (call);                                                                 \
        if (rc_ != CUDA_SUCCESS) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #call, name_of(rc_),   \
                    (int)rc_);                                                                 \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

#define EXPECT_RC(call, want)                                                                  \
    do {                                                                                       \
        CUresult rc_ = (call);                                                                 \
        if (rc_ != (want)) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s (%d), expected %s\n", __FILE__, __LINE__, #call,    \
                    name_of(rc_), (int)rc_, name_of(want));                                    \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static void CUDA_CB count_calls(void *data) {
    int *calls = (int *)data;
    *calls += 1;
}

static cuuint64_t attr64(CUmemoryPool pool, CUmemPool_attribute attr) {
    cuuint64_t v = 0;
    if (cuMemPoolGetAttribute(pool, attr, &v) != CUDA_SUCCESS) {
        failures++;
    }
    return v;
}

int main(void) {
    int version = 0, count = 0, pools_supported = 0, handle_types = -1;
    CUdevice dev;
    CUcontext ctx = NULL, current = NULL;

    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    EXPECT(version == CUDA_VERSION);
    CHECK(cuDeviceGetCount(&count));
    EXPECT(count >= 1);
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetAttribute(&pools_supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
    EXPECT(pools_supported == 1);
    CHECK(cuDeviceGetAttribute(&handle_types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev));
    EXPECT(handle_types == 0 || handle_types == 1);
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuCtxGetCurrent(&current));
    EXPECT(current == ctx);

    /* A pool of 64 MiB, its reuse attributes on, a release threshold that keeps 32 MiB. */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    props.maxSize = 64 * MIB;
    CUmemoryPool pool;
    CHECK(cuMemPoolCreate(&pool, &props));
    for (int a = CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES; a <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
         a++) {
        int on = 0;
        CHECK(cuMemPoolGetAttribute(pool, (CUmemPool_attribute)a, &on));
        EXPECT(on == 1);
    }
    cuuint64_t threshold = 32 * MIB;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 32 * MIB);
    cuuint64_t ignored = 1;
    EXPECT_RC(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &ignored), CUDA_ERROR_INVALID_VALUE);

    /* Two streams: a fills x, b copies it to y after waiting for a's event, frees x, runs a
       host function and copies y back, into page-locked and into pageable memory. */
    CUstream a, b;
    CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
    unsigned char *in = NULL, *out = NULL;
    CHECK(cuMemAllocHost((void **)&in, N));
    CHECK(cuMemAllocHost((void **)&out, N));
    for (unsigned i = 0; i < N; i++) {
        in[i] = (unsigned char)(i * 7u + 3u);
    }
    memset(out, 0, N);
    CUevent start, filled, end;
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&filled, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&end, CU_EVENT_DEFAULT));
    CUdeviceptr x = 0, y = 0;
    CHECK(cuEventRecord(start, a));
    CHECK(cuMemAllocFromPoolAsync(&x, N, pool, a));
    CHECK(cuMemcpyHtoDAsync(x, in, N, a));
    CHECK(cuEventRecord(filled, a));
    CHECK(cuStreamWaitEvent(b, filled, 0));
    CHECK(cuMemAllocFromPoolAsync(&y, N, pool, b));
    CHECK(cuMemcpyDtoDAsync(y, x, N, b));
    CHECK(cuMemFreeAsync(x, b));
    int calls = 0;
    CHECK(cuLaunchHostFunc(b, count_calls, &calls));
    CHECK(cuMemcpyDtoHAsync(out, y, N, b));
    CHECK(cuEventRecord(end, b));
    CHECK(cuEventSynchronize(end));
    EXPECT(memcmp(in, out, N) == 0);
    EXPECT(calls == 1);
    EXPECT_RC(cuEventQuery(end), CUDA_SUCCESS);
    float ms = -1.0f;
    CHECK(cuEventElapsedTime(&ms, start, end));
    EXPECT(ms >= 0.0f);
    EXPECT_RC(cuEventElapsedTime(&ms, start, filled), CUDA_ERROR_INVALID_HANDLE);

    /* A memset, then a copy into pageable memory (done before the call returns). */
    static unsigned char page[4096];
    CHECK(cuMemsetD8Async(y, 0xab, sizeof page, b));
    CHECK(cuMemcpyDtoHAsync(page, y, sizeof page, b));
    int set = 1;
    for (size_t i = 0; i < sizeof page; i++) {
        set &= page[i] == 0xab;
    }
    EXPECT(set);

    /* Statistics: y is live (USED one granule or more); free it, synchronize, and the pool
       keeps what the threshold allows; a trim to 0 gives it back. */
    cuuint64_t used = attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    EXPECT(used >= N);
    CHECK(cuMemFreeAsync(y, b));
    CHECK(cuStreamSynchronize(b));
    CHECK(cuStreamSynchronize(a));
    EXPECT_RC(cuStreamQuery(b), CUDA_SUCCESS);
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
    cuuint64_t reserved = attr64(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    EXPECT(reserved > 0 && reserved <= 32 * MIB);
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= 2 * (cuuint64_t)N);

    /* A trim below USED releases what it can (the driver's rule). */
    CUdeviceptr z = 0;
    CHECK(cuMemAllocFromPoolAsync(&z, N, pool, a));
    CHECK(cuMemPoolTrimTo(pool, 0));
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
    CHECK(cuMemFreeAsync(z, a));
    CHECK(cuStreamSynchronize(a));
    CHECK(cuMemPoolTrimTo(pool, 0));
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
    cuuint64_t zero = 0, one = 1;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
    EXPECT_RC(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &one), CUDA_ERROR_INVALID_VALUE);

    /* The device's current pool: the default one until cuDeviceSetMemPool. */
    CUmemoryPool def, cur;
    CHECK(cuDeviceGetDefaultMemPool(&def, dev));
    CHECK(cuDeviceGetMemPool(&cur, dev));
    EXPECT(def == cur && def != pool);
    CHECK(cuDeviceSetMemPool(dev, pool));
    CUdeviceptr w = 0;
    CHECK(cuMemAllocAsync(&w, 3 * MIB, a));
    EXPECT(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= 3 * MIB);
    CHECK(cuMemFreeAsync(w, a));
    CHECK(cuDeviceSetMemPool(dev, def));
    CHECK(cuMemAllocAsync(&w, 1, NULL));
    CHECK(cuMemFreeAsync(w, NULL));
    CHECK(cuCtxSynchronize());
    EXPECT_RC(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);

    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cuMemGetInfo(&free_bytes, &total_bytes));
    EXPECT(total_bytes > 0 && free_bytes <= total_bytes);

    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(filled));
    CHECK(cuEventDestroy(end));
    CHECK(cuStreamDestroy(a));
    CHECK(cuStreamDestroy(b));
    CHECK(cuMemPoolDestroy(pool));
    CHECK(cuMemFreeHost(in));
    CHECK(cuMemFreeHost(out));
    CHECK(cuDevicePrimaryCtxRelease(dev));

    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("cuda pool: %d device(s), driver %d, %u bytes round-tripped, host function ran %d time(s), on %s\n", count,
           version, N, calls, mempool_cuda_shim_version());
    return 0;
}
