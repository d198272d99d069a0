/*
 * A CPU stand-in for the CUDA driver calls mempool-cuda makes, for its tests: every piece
 * of work runs when it is enqueued, device memory is host memory, and a pool is a list of
 * blocks rounded to 2 MiB. It answers with the driver's codes where the backend's rules
 * depend on them. Compile-time switches make the variants the tests need:
 *
 *   FAKE_VERSION        cuDriverGetVersion's answer (12060); below 12020 the pool's
 *                       maxSize is not read, and a non-zero one is refused as a non-zero
 *                       reserved byte
 *   FAKE_POOLS          CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED (1); -1 refuses the
 *                       attribute as a driver older than it does
 *   FAKE_HANDLE_TYPES   CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES (1)
 *   FAKE_NO_POOL_CALLS  leave out the cuMemPool* calls (an older driver)
 *   FAKE_NO_RELEASE     leave out cuDevicePrimaryCtxRelease_v2
 *
 * fake_primary_refs(), fake_host_live() and fake_pools_live() let a test check what the
 * backend gave back.
 */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 12060
#endif
#ifndef FAKE_POOLS
#define FAKE_POOLS 1
#endif
#ifndef FAKE_HANDLE_TYPES
#define FAKE_HANDLE_TYPES 1
#endif

#define MEMORY (1ull << 30)
#define GRAN (2ull << 20)

enum {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201,
    INVALID_HANDLE = 400,
    NOT_READY = 600,
};

typedef unsigned long long devptr;
typedef void (*host_fn)(void *);

struct block {
    devptr addr;
    size_t size; /* rounded to GRAN */
    int live;
    struct block *next;
};

struct pool {
    size_t max; /* 0: the device's memory */
    int flags[3];
    unsigned long long threshold, reserved, reserved_high, used, used_high;
    struct block *blocks;
    struct pool *next;
};

struct props {
    int alloc_type, handle_types, location_type, location_id;
    void *win32;
    size_t max_size;
    unsigned short usage;
    unsigned char reserved[54];
};

struct event {
    int recorded;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ctx_token;
static int primary_refs;
static long host_live;
static long pools_live;
static unsigned long long device_reserved;
static __thread void *current_ctx;
static struct pool default_pool = {0, {1, 1, 1}, 0, 0, 0, 0, 0, NULL, NULL};
static struct pool *pools = &default_pool;
static struct pool *current_pool = &default_pool;

int fake_primary_refs(void) { return primary_refs; }
long fake_host_live(void) { return host_live; }
long fake_pools_live(void) { return pools_live; }

/* ---- errors ---- */

static const char *names[][2] = {
    {"CUDA_SUCCESS", "no error"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
};

int cuGetErrorName(int rc, const char **s) {
    switch (rc) {
    case 0: case 1: case 2: *s = names[rc][0]; return OK;
    case INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; return OK;
    case INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; return OK;
    case INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case NOT_READY: *s = "CUDA_ERROR_NOT_READY"; return OK;
    default: *s = NULL; return INVALID_VALUE;
    }
}

int cuGetErrorString(int rc, const char **s) {
    switch (rc) {
    case 0: case 1: case 2: *s = names[rc][1]; return OK;
    case INVALID_DEVICE: *s = "invalid device ordinal"; return OK;
    case INVALID_CONTEXT: *s = "invalid device context"; return OK;
    case INVALID_HANDLE: *s = "invalid resource handle"; return OK;
    case NOT_READY: *s = "device not ready"; return OK;
    default: *s = NULL; return INVALID_VALUE;
    }
}

/* ---- driver, devices, contexts ---- */

int cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
int cuDriverGetVersion(int *v) { *v = FAKE_VERSION; return OK; }
int cuDeviceGetCount(int *n) { *n = 1; return OK; }
int cuDeviceGet(int *d, int ordinal) {
    if (ordinal != 0) return INVALID_DEVICE;
    *d = 0;
    return OK;
}
int cuDeviceGetAttribute(int *v, int attr, int dev) {
    if (dev != 0) return INVALID_DEVICE;
    if (attr == 115 && FAKE_POOLS < 0) return INVALID_VALUE; /* a driver older than the attribute */
    *v = attr == 115 ? FAKE_POOLS : attr == 119 ? FAKE_HANDLE_TYPES : 0;
    return OK;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    if (dev != 0) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    primary_refs++;
    pthread_mutex_unlock(&lock);
    *ctx = &ctx_token;
    return OK;
}

#ifndef FAKE_NO_RELEASE
int cuDevicePrimaryCtxRelease_v2(int dev) {
    int rc = OK;
    if (dev != 0) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    if (primary_refs == 0) rc = INVALID_CONTEXT;
    else primary_refs--;
    pthread_mutex_unlock(&lock);
    return rc;
}
#endif

int cuCtxSetCurrent(void *ctx) { current_ctx = ctx; return OK; }
int cuCtxGetCurrent(void **ctx) { *ctx = current_ctx; return OK; }

static int need_ctx(void) { return current_ctx == &ctx_token ? OK : INVALID_CONTEXT; }

/* ---- pools (the parts the memory calls need too) ---- */

static void release_block(struct pool *p, struct block **link) {
    struct block *b = *link;
    *link = b->next;
    p->reserved -= b->size;
    device_reserved -= b->size;
    free((void *)(uintptr_t)b->addr);
    free(b);
}

/* Releases cached blocks while the pool reserves more than `keep`. */
static void release_down_to(struct pool *p, unsigned long long keep) {
    struct block **link = &p->blocks;
    while (*link && p->reserved > keep) {
        if (!(*link)->live) release_block(p, link);
        else link = &(*link)->next;
    }
}

/* A synchronization: every pool releases down to its threshold. */
static void synchronized(void) {
    pthread_mutex_lock(&lock);
    for (struct pool *p = pools; p; p = p->next) release_down_to(p, p->threshold);
    pthread_mutex_unlock(&lock);
}

/* Whether [addr, addr + n) lies inside one live block. */
static int inside_live(devptr addr, size_t n) {
    int found = 0;
    pthread_mutex_lock(&lock);
    for (struct pool *p = pools; p && !found; p = p->next)
        for (struct block *b = p->blocks; b && !found; b = b->next)
            found = b->live && addr >= b->addr && addr + n <= b->addr + b->size;
    pthread_mutex_unlock(&lock);
    return found;
}

static int pool_alloc(devptr *out, size_t size, struct pool *p) {
    size_t need;
    struct block *b;
    unsigned long long limit;
    if (size == 0 || size > MEMORY) return INVALID_VALUE;
    need = (size + GRAN - 1) / GRAN * GRAN;
    pthread_mutex_lock(&lock);
    for (b = p->blocks; b; b = b->next)
        if (!b->live && b->size >= need) break;
    if (!b) {
        limit = p->max ? p->max : MEMORY;
        if (p->reserved + need > limit || device_reserved + need > MEMORY) {
            pthread_mutex_unlock(&lock);
            return OUT_OF_MEMORY;
        }
        b = calloc(1, sizeof *b);
        b->addr = (devptr)(uintptr_t)malloc(need);
        b->size = need;
        b->next = p->blocks;
        p->blocks = b;
        p->reserved += need;
        device_reserved += need;
        if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
    }
    b->live = 1;
    p->used += b->size;
    if (p->used > p->used_high) p->used_high = p->used;
    *out = b->addr;
    pthread_mutex_unlock(&lock);
    return OK;
}

/* ---- streams and events ---- */

int cuStreamCreate(void **s, unsigned flags) {
    (void)flags;
    if (need_ctx()) return INVALID_CONTEXT;
    *s = malloc(1);
    return OK;
}
int cuStreamDestroy_v2(void *s) { free(s); return OK; }
int cuStreamSynchronize(void *s) { (void)s; synchronized(); return OK; }
int cuStreamQuery(void *s) { (void)s; return OK; }
int cuStreamWaitEvent(void *s, void *e, unsigned flags) { (void)s; (void)e; return flags ? INVALID_VALUE : OK; }
int cuCtxSynchronize(void) {
    if (need_ctx()) return INVALID_CONTEXT;
    synchronized();
    return OK;
}

int cuEventCreate(void **e, unsigned flags) {
    (void)flags;
    if (need_ctx()) return INVALID_CONTEXT;
    *e = calloc(1, sizeof(struct event));
    return OK;
}
int cuEventRecord(void *e, void *s) { (void)s; ((struct event *)e)->recorded = 1; return OK; }
int cuEventSynchronize(void *e) { (void)e; synchronized(); return OK; }
int cuEventQuery(void *e) { (void)e; return OK; }
int cuEventDestroy_v2(void *e) { free(e); return OK; }
int cuEventElapsedTime(float *ms, void *a, void *b) {
    if (!((struct event *)a)->recorded || !((struct event *)b)->recorded) return INVALID_HANDLE;
    *ms = 0.5f;
    return OK;
}

int cuLaunchHostFunc(void *s, host_fn f, void *data) {
    (void)s;
    if (!f) return INVALID_VALUE;
    f(data);
    return OK;
}

/* ---- memory ---- */

int cuMemcpyHtoDAsync_v2(devptr dst, const void *src, size_t n, void *s) {
    (void)s;
    if (!inside_live(dst, n)) return INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}
int cuMemcpyDtoHAsync_v2(void *dst, devptr src, size_t n, void *s) {
    (void)s;
    if (!inside_live(src, n)) return INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}
int cuMemcpyDtoDAsync_v2(devptr dst, devptr src, size_t n, void *s) {
    (void)s;
    if (!inside_live(dst, n) || !inside_live(src, n)) return INVALID_VALUE;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return OK;
}
int cuMemsetD8Async(devptr dst, unsigned char v, size_t n, void *s) {
    (void)s;
    if (!inside_live(dst, n)) return INVALID_VALUE;
    memset((void *)(uintptr_t)dst, v, n);
    return OK;
}

int cuMemAllocHost_v2(void **p, size_t n) {
    if (need_ctx()) return INVALID_CONTEXT;
    *p = malloc(n);
    if (!*p) return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    host_live++;
    pthread_mutex_unlock(&lock);
    return OK;
}
int cuMemFreeHost(void *p) {
    free(p);
    pthread_mutex_lock(&lock);
    host_live--;
    pthread_mutex_unlock(&lock);
    return OK;
}

int cuMemGetInfo_v2(size_t *free_, size_t *total) {
    if (need_ctx()) return INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    *free_ = MEMORY - device_reserved;
    pthread_mutex_unlock(&lock);
    *total = MEMORY;
    return OK;
}

#ifndef FAKE_NO_POOL_CALLS

int cuMemPoolCreate(struct pool **out, const struct props *pr) {
    struct pool *p;
    if (pr->alloc_type != 1 || pr->location_type != 1 || pr->location_id != 0 || pr->win32) return INVALID_VALUE;
    if (pr->handle_types & ~FAKE_HANDLE_TYPES) return INVALID_VALUE;
    if (FAKE_VERSION < 12020 && pr->max_size != 0) return INVALID_VALUE; /* a reserved byte there */
    for (size_t i = 0; i < sizeof pr->reserved; i++)
        if (pr->reserved[i]) return INVALID_VALUE;
    p = calloc(1, sizeof *p);
    p->max = FAKE_VERSION >= 12020 ? pr->max_size : 0;
    p->flags[0] = p->flags[1] = p->flags[2] = 1;
    pthread_mutex_lock(&lock);
    p->next = pools;
    pools = p;
    pools_live++;
    pthread_mutex_unlock(&lock);
    *out = p;
    return OK;
}

int cuMemPoolDestroy(struct pool *p) {
    struct pool **link;
    if (p == &default_pool) return INVALID_VALUE;
    pthread_mutex_lock(&lock);
    for (link = &pools; *link && *link != p; link = &(*link)->next) {}
    if (!*link) {
        pthread_mutex_unlock(&lock);
        return INVALID_VALUE;
    }
    *link = p->next;
    while (p->blocks) release_block(p, &p->blocks);
    if (current_pool == p) current_pool = &default_pool;
    pools_live--;
    pthread_mutex_unlock(&lock);
    free(p);
    return OK;
}

int cuMemPoolSetAttribute(struct pool *p, int attr, void *v) {
    int rc = OK;
    unsigned long long u = 0;
    if (attr >= 4 && attr <= 8) memcpy(&u, v, sizeof u);
    pthread_mutex_lock(&lock);
    switch (attr) {
    case 1: case 2: case 3: p->flags[attr - 1] = *(int *)v; break;
    case 4: p->threshold = u; break;
    case 6: if (u) rc = INVALID_VALUE; else p->reserved_high = p->reserved; break;
    case 8: if (u) rc = INVALID_VALUE; else p->used_high = p->used; break;
    default: rc = INVALID_VALUE;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int cuMemPoolGetAttribute(struct pool *p, int attr, void *v) {
    unsigned long long u;
    pthread_mutex_lock(&lock);
    switch (attr) {
    case 1: case 2: case 3: *(int *)v = p->flags[attr - 1]; pthread_mutex_unlock(&lock); return OK;
    case 4: u = p->threshold; break;
    case 5: u = p->reserved; break;
    case 6: u = p->reserved_high; break;
    case 7: u = p->used; break;
    case 8: u = p->used_high; break;
    default: pthread_mutex_unlock(&lock); return INVALID_VALUE;
    }
    pthread_mutex_unlock(&lock);
    memcpy(v, &u, sizeof u);
    return OK;
}

int cuMemPoolTrimTo(struct pool *p, size_t keep) {
    pthread_mutex_lock(&lock);
    release_down_to(p, keep);
    pthread_mutex_unlock(&lock);
    return OK;
}

int cuMemAllocFromPoolAsync(devptr *out, size_t size, struct pool *p, void *s) {
    (void)s;
    return pool_alloc(out, size, p);
}

int cuMemAllocAsync(devptr *out, size_t size, void *s) {
    (void)s;
    return pool_alloc(out, size, current_pool);
}

int cuMemFreeAsync(devptr addr, void *s) {
    (void)s;
    pthread_mutex_lock(&lock);
    for (struct pool *p = pools; p; p = p->next)
        for (struct block *b = p->blocks; b; b = b->next)
            if (b->live && b->addr == addr) {
                b->live = 0;
                p->used -= b->size;
                pthread_mutex_unlock(&lock);
                return OK;
            }
    pthread_mutex_unlock(&lock);
    return INVALID_VALUE;
}

int cuDeviceGetDefaultMemPool(struct pool **p, int dev) {
    if (dev != 0) return INVALID_DEVICE;
    *p = &default_pool;
    return OK;
}

int cuDeviceGetMemPool(struct pool **p, int dev) {
    if (dev != 0) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    *p = current_pool;
    pthread_mutex_unlock(&lock);
    return OK;
}

int cuDeviceSetMemPool(int dev, struct pool *p) {
    if (dev != 0) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    current_pool = p;
    pthread_mutex_unlock(&lock);
    return OK;
}

#endif
