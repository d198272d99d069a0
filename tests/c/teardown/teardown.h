/*
 * teardown.h: the teardown patterns of CANN's own programs, in the subset of C11 and C++17
 * both compile (teardown.c and teardown.cpp include it). Host functions stand in for
 * kernels and read device memory through raw pointers, as a kernel would.
 *
 * The rule every variant checks: each task queued on a stream before a stream destroy or
 * a device reset has completed when the call returns, or never runs. A task records when
 * it starts and when it is done; after the call, each task is done or not started, and a
 * task not started then must still not have started at the end of the program.
 *
 * Nothing may crash: the process exits 0 and prints "<name>: N passed, 0 failed" last.
 */
#ifndef MEMPOOL_TEARDOWN_H
#define MEMPOOL_TEARDOWN_H

#include "../samples/sample_check.h"

#include <acl/acl_rt_memory_soma.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TASKS 8
#define BUF_LEN ((size_t)1 << 20)

typedef struct {
    const unsigned char *buf;
    size_t len;
    long delay_us;
    int started;
    int done;
    unsigned sum;
} Task;

static Task tasks[TASKS];
/* Tasks not started when the destroy or reset returned: they must never start. */
static int never[TASKS];

static void sleep_us(long us)
{
    struct timespec t;
    t.tv_sec = us / 1000000;
    t.tv_nsec = (us % 1000000) * 1000;
    nanosleep(&t, NULL);
}

/* A kernel stand-in: reads the whole buffer through its raw device pointer. */
static void reader(void *arg)
{
    Task *t = (Task *)arg;
    __atomic_store_n(&t->started, 1, __ATOMIC_SEQ_CST);
    if (t->delay_us > 0) {
        sleep_us(t->delay_us);
    }
    unsigned sum = 0;
    for (size_t i = 0; i < t->len; i += 64) {
        sum += t->buf[i];
    }
    t->sum = sum;
    __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
}

/* Queues TASKS readers of `buf` on `s`, the first sleeping `first_delay_us` so the others
 * are still queued when the caller goes on. */
static void queue_readers(aclrtStream s, const void *buf, size_t len, long first_delay_us)
{
    for (int i = 0; i < TASKS; i++) {
        tasks[i].buf = (const unsigned char *)buf;
        tasks[i].len = len;
        tasks[i].delay_us = i == 0 ? first_delay_us : 0;
        tasks[i].started = 0;
        tasks[i].done = 0;
        tasks[i].sum = 0;
        never[i] = 0;
        CHECK_ACL(aclrtLaunchHostFunc(s, reader, &tasks[i]));
    }
}

/* Right after the destroy or reset: each task is done, or not started (and then never). */
static void check_rule(const char *after)
{
    for (int i = 0; i < TASKS; i++) {
        int started = __atomic_load_n(&tasks[i].started, __ATOMIC_SEQ_CST);
        int done = __atomic_load_n(&tasks[i].done, __ATOMIC_SEQ_CST);
        if (!CHECK_TRUE(done || !started)) {
            printf("       task %d after %s: started, not done\n", i, after);
        }
        never[i] = !started;
    }
}

/* At the end: the tasks not started at the call never ran. */
static void check_never_ran(void)
{
    sleep_us(20000);
    for (int i = 0; i < TASKS; i++) {
        if (never[i]) {
            CHECK_TRUE(__atomic_load_n(&tasks[i].started, __ATOMIC_SEQ_CST) == 0);
        }
    }
}

static int all_done(void)
{
    for (int i = 0; i < TASKS; i++) {
        if (!__atomic_load_n(&tasks[i].done, __ATOMIC_SEQ_CST)) {
            return 0;
        }
    }
    return 1;
}

static void *device_buffer(void)
{
    void *buf = NULL;
    CHECK_ACL(aclrtMalloc(&buf, BUF_LEN, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemset(buf, BUF_LEN, 1, BUF_LEN));
    return buf;
}

/* A program's start: aclInit, device 0, a stream. */
static aclrtStream begin(void)
{
    CHECK_ACL(aclInit(NULL));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK_ACL(aclrtCreateStream(&s));
    return s;
}

/* A program's end, as CANN's samples end: aclrtResetDeviceForce, aclFinalize. */
static void end(void)
{
    CHECK_ACL(aclrtResetDeviceForce(0));
    CHECK_ACL(aclFinalize());
}

/* A 64 MiB pool on device 0. */
static aclrtMemPool new_pool(void)
{
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = (size_t)64 << 20;
    aclrtMemPool pool = NULL;
    CHECK_ACL(aclrtMemPoolCreate(&pool, &props));
    return pool;
}

/* CANN's samples: kernels queued, then at once DestroyStreamForce, FreeHost, Free,
 * ResetDeviceForce, Finalize (force = 1), or the same with the plain destroy. */
static void destroy_then_free(int force)
{
    aclrtStream s = begin();
    void *host = NULL;
    CHECK_ACL(aclrtMallocHost(&host, 4096));
    void *buf = device_buffer();
    queue_readers(s, buf, BUF_LEN, 2000);
    CHECK_ACL(force ? aclrtDestroyStreamForce(s) : aclrtDestroyStream(s));
    check_rule(force ? "aclrtDestroyStreamForce" : "aclrtDestroyStream");
    if (!force) {
        CHECK_TRUE(all_done());
    }
    CHECK_ACL(aclrtFreeHost(host));
    CHECK_ACL(aclrtFree(buf));
    end();
    check_never_ran();
}

/* A device reset with the stream's kernels still queued (no destroy). */
static void reset_with_queued_work(int force)
{
    aclrtStream s = begin();
    void *buf = device_buffer();
    queue_readers(s, buf, BUF_LEN, 2000);
    CHECK_ACL(force ? aclrtResetDeviceForce(0) : aclrtResetDevice(0));
    check_rule(force ? "aclrtResetDeviceForce" : "aclrtResetDevice");
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtDestroyStream(s));
    CHECK_ACL(aclrtFree(buf));
    end();
    check_never_ran();
}

/* The kernels read a pool buffer; the stream is force-destroyed, the buffer freed on
 * another stream, the pool destroyed. */
static void pool_buffer(void)
{
    aclrtStream s = begin(), s2 = NULL;
    CHECK_ACL(aclrtCreateStream(&s2));
    aclrtMemPool pool = new_pool();
    void *buf = NULL;
    CHECK_ACL(aclrtMemPoolMallocAsync(&buf, BUF_LEN, pool, s));
    CHECK_ACL(aclrtMemsetAsync(buf, BUF_LEN, 2, BUF_LEN, s));
    queue_readers(s, buf, BUF_LEN, 2000);
    CHECK_ACL(aclrtDestroyStreamForce(s));
    check_rule("aclrtDestroyStreamForce (pool buffer)");
    CHECK_ACL(aclrtMemPoolFreeAsync(buf, s2));
    CHECK_ACL(aclrtSynchronizeStream(s2));
    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtDestroyStream(s2));
    end();
    check_never_ran();
}

/* Copies instead of kernels: device-to-host copies queued behind a slow host function,
 * then the force destroy and the frees. */
static void copies(void)
{
    aclrtStream s = begin();
    void *host = NULL;
    CHECK_ACL(aclrtMallocHost(&host, BUF_LEN));
    void *buf = device_buffer();
    queue_readers(s, buf, 64, 2000);
    for (int i = 0; i < 4; i++) {
        CHECK_ACL(aclrtMemcpyAsync(host, BUF_LEN, buf, BUF_LEN, ACL_MEMCPY_DEVICE_TO_HOST, s));
    }
    CHECK_ACL(aclrtDestroyStreamForce(s));
    check_rule("aclrtDestroyStreamForce (copies)");
    CHECK_ACL(aclrtFreeHost(host));
    CHECK_ACL(aclrtFree(buf));
    end();
    check_never_ran();
}

/* The force destroy comes while the first host function runs: it completes first. */
static void host_function_running(void)
{
    aclrtStream s = begin();
    void *buf = device_buffer();
    queue_readers(s, buf, BUF_LEN, 5000);
    while (!__atomic_load_n(&tasks[0].started, __ATOMIC_SEQ_CST)) {
        sleep_us(100);
    }
    CHECK_ACL(aclrtDestroyStreamForce(s));
    CHECK_TRUE(__atomic_load_n(&tasks[0].done, __ATOMIC_SEQ_CST) == 1);
    check_rule("aclrtDestroyStreamForce (a host function running)");
    CHECK_ACL(aclrtFree(buf));
    end();
    check_never_ran();
}

/* aclrtFree does not wait (as on CANN): kernels still queued read the freed buffer, whose
 * memory stays mapped until they have run. */
static void free_under_queued_work(void)
{
    aclrtStream s = begin();
    void *buf = device_buffer();
    queue_readers(s, buf, BUF_LEN, 2000);
    CHECK_ACL(aclrtFree(buf));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_TRUE(all_done());
    CHECK_ACL(aclrtDestroyStream(s));
    end();
}

/* Copies whose kind names a device range as host memory, live and freed, sync and async:
 * corrected (async) or refused (sync), never copied raw. */
static void wrong_kind_copies(void)
{
    aclrtStream s = begin();
    static unsigned char host[4096];
    memset(host, 0, sizeof host);
    void *live = device_buffer();
    void *freed = device_buffer();
    CHECK_ACL(aclrtFree(freed));
    /* Sync: a side named host lies in device memory: 107000. */
    CHECK_CODE(aclrtMemcpy(host, sizeof host, live, sizeof host, ACL_MEMCPY_HOST_TO_HOST),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemcpy(host, sizeof host, freed, sizeof host, ACL_MEMCPY_HOST_TO_HOST),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemcpy(freed, sizeof host, host, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST),
               ACL_ERROR_RT_PARAM_INVALID);
    /* Async: the kind is corrected from the addresses; a live range is copied, a freed one
     * refused. */
    CHECK_ACL(aclrtMemcpyAsync(host, sizeof host, live, sizeof host, ACL_MEMCPY_HOST_TO_HOST, s));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_TRUE(host[0] == 1 && host[sizeof host - 1] == 1);
    CHECK_CODE(aclrtMemcpyAsync(host, sizeof host, freed, sizeof host, ACL_MEMCPY_HOST_TO_HOST, s),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemcpyAsync(freed, sizeof host, host, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST, s),
               ACL_ERROR_RT_PARAM_INVALID);
    /* A pool block freed and released: the same answers. */
    aclrtMemPool pool = new_pool();
    void *block = NULL;
    CHECK_ACL(aclrtMemPoolMallocAsync(&block, BUF_LEN, pool, s));
    CHECK_ACL(aclrtMemPoolFreeAsync(block, s));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_ACL(aclrtMemPoolTrimTo(pool, 0));
    CHECK_CODE(aclrtMemcpy(host, sizeof host, block, sizeof host, ACL_MEMCPY_HOST_TO_HOST),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemcpyAsync(host, sizeof host, block, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST, s),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtMemcpyAsync(block, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_HOST, s),
               ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtMemPoolDestroy(pool));
    CHECK_ACL(aclrtFree(live));
    CHECK_ACL(aclrtDestroyStream(s));
    end();
}

static int teardown_main(const char *name)
{
    destroy_then_free(1);
    destroy_then_free(0);
    reset_with_queued_work(0);
    reset_with_queued_work(1);
    pool_buffer();
    copies();
    host_function_running();
    free_under_queued_work();
    wrong_kind_copies();
    return sample_finish(name);
}

#endif /* MEMPOOL_TEARDOWN_H */
