/*
 * A program in the driver API's style, built against include/cuda.h and linked against
 * the drop-in libcuda.so by the `host_register` test: host memory the program allocated
 * itself (malloc), registered with cuMemHostRegister, reached by async copies on a stream
 * through the host pointer and through the device pointer cuMemHostGetDevicePointer
 * answers, synchronized and checked byte for byte, then unregistered; and the driver's
 * codes for misuse (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED for an overlap,
 * CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED for a pointer never registered,
 * CUDA_ERROR_INVALID_VALUE for an interior pointer, NULL, size 0 and bad flags). It prints
 * one summary line and exits 0, or names the failing call.
 */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE ((size_t)4096)
#define BYTES ((size_t)64 * PAGE)

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

static unsigned char pattern(size_t i, unsigned seed) {
    return (unsigned char)((i * 29u + seed) & 0xff);
}

static int holds(const unsigned char *p, unsigned seed) {
    for (size_t i = 0; i < BYTES; i++) {
        if (p[i] != pattern(i, seed)) {
            return 0;
        }
    }
    return 1;
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr d0, d1, mapped;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAllocAsync(&d0, BYTES, stream));
    CHECK(cuMemAllocAsync(&d1, BYTES, stream));

    unsigned char *block = malloc(BYTES + PAGE);
    unsigned char *check = malloc(BYTES);
    if (block == NULL || check == NULL) {
        fprintf(stderr, "malloc failed\n");
        return 1;
    }
    unsigned char *host = (unsigned char *)(((uintptr_t)block + PAGE - 1) & ~(uintptr_t)(PAGE - 1));

    /* Register, then copies both ways through the host pointer. */
    CHECK(cuMemHostRegister(host, BYTES, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(cuMemHostGetDevicePointer(&mapped, host, 0));
    for (size_t i = 0; i < BYTES; i++) {
        host[i] = pattern(i, 5);
    }
    CHECK(cuMemcpyHtoDAsync(d0, host, BYTES, stream));
    CHECK(cuMemcpyDtoDAsync(d1, d0, BYTES, stream));
    CHECK(cuStreamSynchronize(stream));
    memset(host, 0, BYTES);
    CHECK(cuMemcpyDtoHAsync(host, d1, BYTES, stream));
    CHECK(cuStreamSynchronize(stream));
    EXPECT(holds(host, 5));

    /* Through the device pointer, as device memory. */
    CHECK(cuMemsetD8Async(d0, 0, BYTES, stream));
    CHECK(cuMemcpyDtoDAsync(d0, mapped, BYTES, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemcpyDtoHAsync(check, d0, BYTES, stream)); /* pageable: done in the call */
    EXPECT(holds(check, 5));
    CHECK(cuMemsetD8Async(d1, 0x44, BYTES, stream));
    CHECK(cuMemcpyDtoDAsync(mapped, d1, BYTES, stream));
    CHECK(cuStreamSynchronize(stream));
    EXPECT(host[0] == 0x44 && host[BYTES - 1] == 0x44);

    /* Misuse. */
    EXPECT_RC(cuMemHostRegister(host, PAGE, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_RC(cuMemHostRegister(host + BYTES - 1, 2, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_RC(cuMemHostUnregister(host + PAGE), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemHostUnregister(check), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_RC(cuMemHostRegister(NULL, PAGE, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemHostRegister(check, 0, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemHostRegister(check, PAGE, 0x100), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuMemHostGetDevicePointer(&mapped, host, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostUnregister(host));
    EXPECT_RC(cuMemHostUnregister(host), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_RC(cuMemHostGetDevicePointer(&mapped, host, 0), CUDA_ERROR_INVALID_VALUE);

    CHECK(cuMemFreeAsync(d0, stream));
    CHECK(cuMemFreeAsync(d1, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(check);
    free(block);
    printf("cuda host register: %zu bytes round-tripped, %d failure(s)\n", BYTES, failures);
    return failures == 0 ? 0 : 1;
}
