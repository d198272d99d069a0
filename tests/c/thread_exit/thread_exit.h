/*
 * Calls made as a thread ends: 20 threads each allocate memory on a stream of their own
 * and make one failing call, then, from a destructor that runs at thread exit (after the
 * library's own per-thread storage is gone), make calls that must fail (garbage handles,
 * a bad pointer) and calls that must succeed (freeing the thread's memory, synchronizing
 * and destroying its stream). Each failing call must return its error code, each
 * succeeding call success, and the process must exit normally.
 *
 * One flavour per library, chosen when compiling: FLAVOUR_ACL (libacl_rt.so),
 * FLAVOUR_CUDA (the CPU libcuda.so.1), FLAVOUR_ALLOC (libmempool_alloc.so on the
 * emulator). thread_exit.c runs the destructor from a pthread key, thread_exit.cpp from a
 * C++ thread_local object. The last line is "<file>: N of 20 threads passed".
 *
 * Part of mempool-hal. Licensed MIT OR Apache-2.0.
 */
#ifndef THREAD_EXIT_H
#define THREAD_EXIT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(FLAVOUR_ACL)
#include <acl/acl.h>
#elif defined(FLAVOUR_CUDA)
#include <cuda.h>
#elif defined(FLAVOUR_ALLOC)
#include <mempool_alloc.h>
#else
#error "define FLAVOUR_ACL, FLAVOUR_CUDA or FLAVOUR_ALLOC"
#endif

#define THREADS 20
#define BYTES (1u << 20)
/* A handle no library ever hands out. */
#define GARBAGE ((void *)(uintptr_t)0x1234)

/* What one thread keeps for its exit. */
typedef struct thread_state {
    int index;
    void *stream;
    void *mem;
} thread_state;

static pthread_mutex_t te_lock = PTHREAD_MUTEX_INITIALIZER;
static int te_passed; /* threads whose every call at exit answered as it must */

/* Whether `rc` is `want`; prints the call when it is not. */
static int te_expect(const thread_state *t, const char *call, long rc, long want) {
    if (rc == want) return 1;
    pthread_mutex_lock(&te_lock);
    fprintf(stderr, "thread %d: %s returned %ld, expected %ld\n", t->index, call, rc, want);
    pthread_mutex_unlock(&te_lock);
    return 0;
}

#define EXPECT(t, call, want) te_expect((t), #call, (long)(call), (long)(want))

#if defined(FLAVOUR_ACL)

static int te_process_begin(void) { return aclInit(NULL) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS; }
static void te_process_end(void) {
    aclrtResetDevice(0);
    aclFinalize();
}
static int te_thread_begin(thread_state *t) {
    aclrtStream s = NULL;
    int ok = EXPECT(t, aclrtSetDevice(0), ACL_SUCCESS) && EXPECT(t, aclrtCreateStream(&s), ACL_SUCCESS) &&
             EXPECT(t, aclrtMalloc(&t->mem, BYTES, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    t->stream = s;
    /* A failing call while the thread lives: the library keeps its message. */
    return ok && EXPECT(t, aclrtSynchronizeStream((aclrtStream)GARBAGE), ACL_ERROR_RT_INVALID_HANDLE);
}
static int te_thread_end(thread_state *t) {
    int ok = EXPECT(t, aclrtSynchronizeStream((aclrtStream)GARBAGE), ACL_ERROR_RT_INVALID_HANDLE);
    ok &= EXPECT(t, aclrtDestroyEvent((aclrtEvent)GARBAGE), ACL_ERROR_RT_INVALID_HANDLE);
    ok &= EXPECT(t, aclrtFree((char *)t->mem + 8), ACL_ERROR_RT_PARAM_INVALID);
    ok &= EXPECT(t, aclrtMalloc(NULL, BYTES, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    ok &= EXPECT(t, aclrtFree(t->mem), ACL_SUCCESS);
    ok &= EXPECT(t, aclrtSynchronizeStream((aclrtStream)t->stream), ACL_SUCCESS);
    ok &= EXPECT(t, aclrtDestroyStream((aclrtStream)t->stream), ACL_SUCCESS);
    ok &= EXPECT(t, aclrtResetDevice(0), ACL_SUCCESS);
    return ok;
}

#elif defined(FLAVOUR_CUDA)

static CUcontext te_ctx;
static int te_process_begin(void) {
    CUdevice dev = 0;
    return cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
           cuDevicePrimaryCtxRetain(&te_ctx, dev) == CUDA_SUCCESS;
}
static void te_process_end(void) { cuDevicePrimaryCtxRelease(0); }
static int te_thread_begin(thread_state *t) {
    CUstream s = NULL;
    CUdeviceptr p = 0;
    int ok = EXPECT(t, cuCtxSetCurrent(te_ctx), CUDA_SUCCESS) &&
             EXPECT(t, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS) &&
             EXPECT(t, cuMemAllocAsync(&p, BYTES, s), CUDA_SUCCESS);
    t->stream = s;
    t->mem = (void *)(uintptr_t)p;
    return ok && EXPECT(t, cuStreamSynchronize((CUstream)GARBAGE), CUDA_ERROR_INVALID_HANDLE);
}
static int te_thread_end(thread_state *t) {
    CUstream s = (CUstream)t->stream;
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)t->mem;
    int ok = EXPECT(t, cuStreamSynchronize((CUstream)GARBAGE), CUDA_ERROR_INVALID_HANDLE);
    ok &= EXPECT(t, cuEventDestroy((CUevent)GARBAGE), CUDA_ERROR_INVALID_HANDLE);
    ok &= EXPECT(t, cuMemFreeAsync(p + 8, s), CUDA_ERROR_INVALID_VALUE);
    ok &= EXPECT(t, cuMemAllocAsync(NULL, BYTES, s), CUDA_ERROR_INVALID_VALUE);
    ok &= EXPECT(t, cuMemFreeAsync(p, s), CUDA_SUCCESS);
    ok &= EXPECT(t, cuStreamSynchronize(s), CUDA_SUCCESS);
    ok &= EXPECT(t, cuStreamDestroy(s), CUDA_SUCCESS);
    return ok;
}

#else /* FLAVOUR_ALLOC */

static int te_process_begin(void) { return 1; }
static void te_process_end(void) {}
static int te_thread_begin(thread_state *t) {
    t->stream = NULL;
    t->mem = mempool_alloc(BYTES, 0, NULL);
    return te_expect(t, "mempool_alloc", t->mem != NULL, 1) && EXPECT(t, mempool_stats(0, NULL), -1);
}
static int te_thread_end(thread_state *t) {
    int ok = EXPECT(t, mempool_stats(0, NULL), -1);
    ok &= EXPECT(t, mempool_reset_peak_stats(-7), -1);
    ok &= te_expect(t, "mempool_alloc(0)", mempool_alloc(0, 0, NULL) == NULL, 1);
    mempool_free((char *)t->mem + 8, BYTES, 0, NULL); /* refused: not an allocation */
    mempool_record_stream(GARBAGE, GARBAGE);          /* refused: not an allocation */
    mempool_free(t->mem, BYTES, 0, NULL);
    ok &= EXPECT(t, mempool_reset_peak_stats(0), 0);
    return ok;
}

#endif

/* Runs at thread exit, from the destructor of thread_exit.c or thread_exit.cpp. */
static void te_at_exit(thread_state *t) {
    int ok = te_thread_end(t);
    pthread_mutex_lock(&te_lock);
    te_passed += ok;
    pthread_mutex_unlock(&te_lock);
}

/* Whatever the library still holds once every thread has ended: 0 when every thread's
 * memory was freed at its exit (only the allocator library counts it here). */
static long te_bytes_left(void) {
#if defined(FLAVOUR_ALLOC)
    mempool_alloc_stats st;
    memset(&st, 0, sizeof st);
    st.version = MEMPOOL_ALLOC_STATS_VERSION;
    st.size = (uint32_t)sizeof st;
    if (mempool_stats(0, &st) != 0) return -1;
    return (long)st.requested_current;
#else
    return 0;
#endif
}

/* Starts the threads with `body`, waits for them, and reports. */
static int te_main(const char *file, void *(*body)(void *)) {
    if (!te_process_begin()) {
        printf("%s: the runtime did not start\n", file);
        return 1;
    }
    pthread_t threads[THREADS];
    thread_state states[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&states[i], 0, sizeof states[i]);
        states[i].index = i;
        if (pthread_create(&threads[i], NULL, body, &states[i]) != 0) {
            printf("%s: thread %d did not start\n", file, i);
            return 1;
        }
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    long left = te_bytes_left();
    te_process_end();
    if (left != 0) printf("%s: %ld bytes still allocated after every thread ended\n", file, left);
    printf("%s: %d of %d threads passed\n", file, te_passed, THREADS);
    return te_passed == THREADS && left == 0 ? 0 : 1;
}

#endif
