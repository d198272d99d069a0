/*
 * harness.h: what the protocol programs (protocol.c, protocol.cpp) share, in the subset of
 * C11 and C++17 both compile: the checks, the runtime of one flavour, the allocator
 * library reached only through dlsym'd function pointers, and host threads.
 *
 * The program stands in for a framework (PyTorch, torch_npu): it links the runtime itself
 * (the drop-in libacl_rt.so with -DFLAVOUR_ACL, the CPU libcuda.so.1 with -DFLAVOUR_CUDA),
 * makes its own streams, and only then dlopens libmempool_alloc.so and calls it through
 * pointers typed exactly as PyTorch casts them. The library finds the runtime already in
 * the process, so the streams it is handed are ones its runtime knows.
 */
#ifndef MEMPOOL_ALLOC_HARNESS_H
#define MEMPOOL_ALLOC_HARNESS_H

/* dladdr (a GNU extension), before any system header. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <mempool_alloc.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(FLAVOUR_ACL) == defined(FLAVOUR_CUDA)
#error "compile with exactly one of -DFLAVOUR_ACL and -DFLAVOUR_CUDA"
#endif

/* ------------------------------------------------------------------ checks */

static int h_passed;
static int h_failed;

static int h_check(int cond, const char *expr, const char *file, int line)
{
    if (cond) {
        __atomic_fetch_add(&h_passed, 1, __ATOMIC_SEQ_CST);
        return 1;
    }
    __atomic_fetch_add(&h_failed, 1, __ATOMIC_SEQ_CST);
    const char *slash = strrchr(file, '/');
    fprintf(stderr, "FAIL %s:%d: %s does not hold\n", slash != NULL ? slash + 1 : file, line, expr);
    return 0;
}

#define CHECK(cond) h_check((cond) ? 1 : 0, #cond, __FILE__, __LINE__)

/* The summary line, last; the exit status of main. */
static int h_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, h_passed, h_failed);
    fflush(stdout);
    return h_failed == 0 ? 0 : 1;
}

static void sleep_us(long us)
{
    struct timespec t;
    t.tv_sec = us / 1000000;
    t.tv_nsec = (us % 1000000) * 1000;
    nanosleep(&t, NULL);
}

/* ------------------------------------------------------------------ the runtime */

#define MAX_DEVICES 8

#ifdef FLAVOUR_ACL
#include <acl/acl.h>

#define FLAVOUR "ascend"
/* A function of the runtime, to find the file the process loaded it from. */
#define RT_SYMBOL aclInit
typedef aclrtStream rt_stream;
typedef aclrtEvent rt_event;

static int rt_ok(int rc, const char *expr, const char *file, int line)
{
    if (rc != ACL_SUCCESS) {
        const char *msg = aclGetRecentErrMsg();
        fprintf(stderr, "       %s returned %d: %s\n", expr, rc, msg != NULL ? msg : "(no message)");
    }
    return h_check(rc == ACL_SUCCESS, expr, file, line);
}
#define RT(call) rt_ok((int)(call), #call, __FILE__, __LINE__)

static int rt_device_count;

static void rt_init(void)
{
    uint32_t n = 0;
    RT(aclInit(NULL));
    RT(aclrtGetDeviceCount(&n));
    rt_device_count = (int)n;
}
/* Makes `dev` the calling thread's device, as a framework's device guard does. */
static void rt_bind(int dev) { RT(aclrtSetDevice(dev)); }
/* The calling thread's device, or -1 when it has none. */
static int rt_current(void)
{
    int32_t cur = -1;
    return aclrtGetDevice(&cur) == ACL_SUCCESS ? (int)cur : -1;
}
static rt_stream rt_stream_new(void)
{
    aclrtStream s = NULL;
    RT(aclrtCreateStream(&s));
    return s;
}
static void rt_stream_free(rt_stream s) { RT(aclrtDestroyStream(s)); }
static void rt_memset(void *p, int v, size_t n, rt_stream s) { RT(aclrtMemsetAsync(p, n, v, n, s)); }
static void rt_d2h(void *host, const void *dev, size_t n, rt_stream s)
{
    RT(aclrtMemcpyAsync(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, s));
}
static rt_event rt_event_new(void)
{
    aclrtEvent e = NULL;
    RT(aclrtCreateEvent(&e));
    return e;
}
static void rt_event_free(rt_event e) { RT(aclrtDestroyEvent(e)); }
/* `waiter` waits for everything enqueued on `s` so far. */
static void rt_order(rt_stream waiter, rt_stream s, rt_event e)
{
    RT(aclrtRecordEvent(e, s));
    RT(aclrtStreamWaitEvent(waiter, e));
}
static void rt_sync(rt_stream s) { RT(aclrtSynchronizeStream(s)); }
static void *rt_host_alloc(size_t n)
{
    void *p = NULL;
    RT(aclrtMallocHost(&p, n));
    return p;
}
static void rt_host_free(void *p) { RT(aclrtFreeHost(p)); }
/* Device memory of the runtime itself, not of the library. */
static void *rt_foreign_alloc(size_t n, rt_stream s)
{
    void *p = NULL;
    (void)s;
    RT(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}
static void rt_foreign_free(void *p, rt_stream s)
{
    (void)s;
    RT(aclrtFree(p));
}
static void rt_host_func(rt_stream s, void (*fn)(void *), void *arg) { RT(aclrtLaunchHostFunc(s, fn, arg)); }
#endif /* FLAVOUR_ACL */

#ifdef FLAVOUR_CUDA
#include <cuda.h>

#define FLAVOUR "cuda"
#define RT_SYMBOL cuInit
typedef CUstream rt_stream;
typedef CUevent rt_event;

static int rt_ok(int rc, const char *expr, const char *file, int line)
{
    if (rc != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName((CUresult)rc, &name);
        fprintf(stderr, "       %s returned %d (%s)\n", expr, rc, name != NULL ? name : "?");
    }
    return h_check(rc == CUDA_SUCCESS, expr, file, line);
}
#define RT(call) rt_ok((int)(call), #call, __FILE__, __LINE__)

static int rt_device_count;
static CUcontext rt_ctx[MAX_DEVICES];

static void rt_init(void)
{
    RT(cuInit(0));
    RT(cuDeviceGetCount(&rt_device_count));
    for (int d = 0; d < rt_device_count && d < MAX_DEVICES; d++) {
        CUdevice dev = 0;
        RT(cuDeviceGet(&dev, d));
        RT(cuDevicePrimaryCtxRetain(&rt_ctx[d], dev));
    }
}
/* Makes `dev`'s primary context current on the calling thread, as a framework does. */
static void rt_bind(int dev) { RT(cuCtxSetCurrent(rt_ctx[dev])); }
/* The device whose primary context is current on the calling thread, or -1. */
static int rt_current(void)
{
    CUcontext cur = NULL;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur == NULL) {
        return -1;
    }
    for (int d = 0; d < rt_device_count && d < MAX_DEVICES; d++) {
        if (rt_ctx[d] == cur) {
            return d;
        }
    }
    return -1;
}
static rt_stream rt_stream_new(void)
{
    CUstream s = NULL;
    RT(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
}
static void rt_stream_free(rt_stream s) { RT(cuStreamDestroy(s)); }
static void rt_memset(void *p, int v, size_t n, rt_stream s)
{
    RT(cuMemsetD8Async((CUdeviceptr)(uintptr_t)p, (unsigned char)v, n, s));
}
static void rt_d2h(void *host, const void *dev, size_t n, rt_stream s)
{
    RT(cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, n, s));
}
static rt_event rt_event_new(void)
{
    CUevent e = NULL;
    RT(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    return e;
}
static void rt_event_free(rt_event e) { RT(cuEventDestroy(e)); }
static void rt_order(rt_stream waiter, rt_stream s, rt_event e)
{
    RT(cuEventRecord(e, s));
    RT(cuStreamWaitEvent(waiter, e, 0));
}
static void rt_sync(rt_stream s) { RT(cuStreamSynchronize(s)); }
static void *rt_host_alloc(size_t n)
{
    void *p = NULL;
    RT(cuMemAllocHost(&p, n));
    return p;
}
static void rt_host_free(void *p) { RT(cuMemFreeHost(p)); }
/* Device memory of the driver itself (its default pool), not of the library. */
static void *rt_foreign_alloc(size_t n, rt_stream s)
{
    CUdeviceptr p = 0;
    RT(cuMemAllocAsync(&p, n, s));
    RT(cuStreamSynchronize(s));
    return (void *)(uintptr_t)p;
}
static void rt_foreign_free(void *p, rt_stream s)
{
    RT(cuMemFreeAsync((CUdeviceptr)(uintptr_t)p, s));
    RT(cuStreamSynchronize(s));
}
static void rt_host_func(rt_stream s, void (*fn)(void *), void *arg) { RT(cuLaunchHostFunc(s, fn, arg)); }
#endif /* FLAVOUR_CUDA */

/* Prints the file the runtime was loaded from: the copy the library must use. */
static void rt_print_path(void)
{
    Dl_info info;
    void *fn = (void *)(uintptr_t)&RT_SYMBOL;
    if (CHECK(dladdr(fn, &info) != 0 && info.dli_fname != NULL)) {
        printf("runtime: %s\n", info.dli_fname);
    }
}

/* ------------------------------------------------------------------ streams */

/* The program's streams live until its end, as a framework's stream pool keeps them
 * (PyTorch and torch_npu never destroy the streams they hand out): end_streams() destroys
 * them after the last check. */
#define STREAMS_MAX 64
static struct {
    rt_stream s;
    int dev;
} kept[STREAMS_MAX];
static int kept_count;

/* A new stream on `dev`, the calling thread's device. */
static rt_stream stream_on(int dev)
{
    rt_stream s = rt_stream_new();
    int i = __atomic_fetch_add(&kept_count, 1, __ATOMIC_SEQ_CST);
    if (h_check(i < STREAMS_MAX, "i < STREAMS_MAX", __FILE__, __LINE__)) {
        kept[i].s = s;
        kept[i].dev = dev;
    }
    return s;
}

static void end_streams(void)
{
    for (int i = 0; i < kept_count && i < STREAMS_MAX; i++) {
        rt_bind(kept[i].dev);
        rt_stream_free(kept[i].s);
    }
    kept_count = 0;
}

/* ------------------------------------------------------------------ the library */

/* The exports, typed as PyTorch's CUDAPluggableAllocator (and torch_npu's) casts them. */
typedef void *(*alloc_fn)(size_t, int, void *);
typedef void (*free_fn)(void *, size_t, int, void *);
typedef void (*init_fn)(int);
typedef void (*reset_fn)(void);
typedef void (*fraction_fn)(double, int);
typedef void (*record_fn)(void *, void *);
/* The rest, as the header declares them. */
typedef int (*stats_fn)(int, mempool_alloc_stats *);
typedef int (*reset_peak_fn)(int);
typedef int (*on_oom_fn)(mempool_oom_observer, void *);
typedef const char *(*text_fn)(void);
typedef void (*checked_fn)(bool);
typedef int (*history_fn)(size_t);
typedef int (*dump_fn)(const char *);
typedef int (*register_fn)(int, void *);

static struct {
    alloc_fn alloc;
    free_fn free;
    init_fn init;
    reset_fn empty_cache;
    checked_fn empty_cache_checked;
    fraction_fn set_fraction;
    record_fn record_stream;
    stats_fn stats;
    reset_peak_fn reset_peak;
    on_oom_fn on_oom;
    text_fn last_error;
    text_fn backend;
    history_fn record_history;
    dump_fn dump_snapshot;
    register_fn register_allocator;
    register_fn unregister_allocator;
} lib;

/* Resolves `name` into the function pointer at `slot` (`size` bytes). */
static int lib_sym(void *h, const char *name, void *slot, size_t size)
{
    void *sym = dlsym(h, name);
    if (sym == NULL) {
        fprintf(stderr, "FAIL: dlsym(%s): %s\n", name, dlerror());
        h_failed++;
        return 0;
    }
    memcpy(slot, &sym, size);
    return 1;
}
#define LIB_SYM(h, field, name) lib_sym((h), (name), &lib.field, sizeof lib.field)

/* dlopens the allocator library at `path` (after the runtime is loaded, as a framework does)
 * and resolves every export. */
static int lib_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "FAIL: dlopen(%s): %s\n", path, dlerror());
        h_failed++;
        return 0;
    }
    int ok = LIB_SYM(h, alloc, "mempool_alloc") & LIB_SYM(h, free, "mempool_free");
    ok &= LIB_SYM(h, init, "mempool_init") & LIB_SYM(h, empty_cache, "mempool_empty_cache");
    ok &= LIB_SYM(h, empty_cache_checked, "mempool_empty_cache_checked");
    ok &= LIB_SYM(h, set_fraction, "mempool_set_memory_fraction");
    ok &= LIB_SYM(h, record_stream, "mempool_record_stream") & LIB_SYM(h, stats, "mempool_stats");
    ok &= LIB_SYM(h, reset_peak, "mempool_reset_peak_stats") & LIB_SYM(h, on_oom, "mempool_on_oom");
    ok &= LIB_SYM(h, last_error, "mempool_last_error") & LIB_SYM(h, backend, "mempool_backend");
    ok &= LIB_SYM(h, record_history, "mempool_record_history");
    ok &= LIB_SYM(h, dump_snapshot, "mempool_dump_snapshot");
    ok &= LIB_SYM(h, register_allocator, "mempool_register_stream_allocator");
    ok &= LIB_SYM(h, unregister_allocator, "mempool_unregister_stream_allocator");
    return ok;
}

/* The calling thread's last error, or "(none)". */
static const char *lib_why(void)
{
    const char *e = lib.last_error();
    return e != NULL ? e : "(none)";
}

/* The call just made on this thread left no error; otherwise a failed check naming it. */
#define NO_ERROR(call) no_error_at((call), __FILE__, __LINE__)
static int no_error_at(const char *call, const char *file, int line)
{
    const char *e = lib.last_error();
    if (e != NULL) {
        fprintf(stderr, "       %s: %s\n", call, e);
    }
    return h_check(e == NULL, "no error after the call", file, line);
}

/* `dev`'s statistics (zeroed, and a failed check, when the call fails). */
static mempool_alloc_stats lib_stats(int dev)
{
    mempool_alloc_stats s;
    memset(&s, 0, sizeof s);
    s.version = MEMPOOL_ALLOC_STATS_VERSION;
    s.size = (uint32_t)sizeof s;
    int bound = rt_current();
    int rc = lib.stats(dev, &s);
    int now = rt_current();
    if (now != bound) {
        /* Reported once; rebinding keeps the rest of the program going. */
        static int reported;
        if (__atomic_fetch_add(&reported, 1, __ATOMIC_SEQ_CST) == 0) {
            CHECK(now == bound);
            fprintf(stderr, "       mempool_stats(%d) made device %d current (it was %d)\n", dev, now, bound);
        }
        if (bound >= 0) {
            rt_bind(bound);
        }
    }
    if (!CHECK(rc == 0)) {
        fprintf(stderr, "       mempool_stats(%d): %s\n", dev, lib_why());
        memset(&s, 0, sizeof s);
    }
    return s;
}

static void print_stats(const char *when, int dev, const mempool_alloc_stats *s)
{
    printf("stats %s, device %d: allocations %llu, used %llu (high %llu), reserved %llu (high %llu), requested %llu "
           "(high %llu), pending frees %llu, oom %llu, violations %llu, limit %llu\n",
           when, dev, (unsigned long long)s->allocations, (unsigned long long)s->used_current, (unsigned long long)s->used_high,
           (unsigned long long)s->reserved_current, (unsigned long long)s->reserved_high,
           (unsigned long long)s->requested_current, (unsigned long long)s->requested_high,
           (unsigned long long)s->pending_frees, (unsigned long long)s->oom_count,
           (unsigned long long)s->stream_order_violations, (unsigned long long)s->memory_limit);
}

/* Whether the `n` bytes at `p` all equal `v`; prints the first difference. */
static int all_bytes(const unsigned char *p, size_t n, int v, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)v) {
            fprintf(stderr, "       %s: byte %zu is %#x, expected %#x\n", what, i, p[i], (unsigned)(unsigned char)v);
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ host threads */

#ifdef __cplusplus
#include <thread>
#include <vector>

/* Runs fn(args[i]) on n threads of their own (std::thread) and joins them. */
static void run_threads(void (*fn)(void *), void **args, int n)
{
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++) {
        threads.emplace_back(fn, args[i]);
    }
    for (std::thread &t : threads) {
        t.join();
    }
}
#else
#include <pthread.h>

typedef struct {
    void (*fn)(void *);
    void *arg;
} thread_start;

static void *thread_main(void *p)
{
    thread_start *t = (thread_start *)p;
    t->fn(t->arg);
    return NULL;
}

/* Runs fn(args[i]) on n threads of their own (pthreads) and joins them. */
static void run_threads(void (*fn)(void *), void **args, int n)
{
    pthread_t ids[16];
    thread_start starts[16];
    int started = 0;
    for (int i = 0; i < n && i < 16; i++) {
        starts[i].fn = fn;
        starts[i].arg = args[i];
        if (!CHECK(pthread_create(&ids[i], NULL, thread_main, &starts[i]) == 0)) {
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(ids[i], NULL);
    }
}
#endif

/* Runs fn(arg) on a new thread and waits for it: the thread's last error starts empty. */
static void in_fresh_thread(void (*fn)(void *), void *arg)
{
    void *args[1];
    args[0] = arg;
    run_threads(fn, args, 1);
}

#endif /* MEMPOOL_ALLOC_HARNESS_H */
