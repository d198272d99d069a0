/*
 * notify_value_order.c: notifications and value waits order work across streams.
 *
 * Stream A fills a buffer (aclrtMemsetAsync) and records a notification; stream B waits on it
 * and copies the buffer back (aclrtMemcpyAsync). With the stream-order checker on, B's copy is
 * accepted only because of the wait: the same copy without it is refused (107000). Then the
 * same with the wait enqueued before the record, which another thread enqueues later: the copy
 * behind the open wait is checked when it runs. Then a value wait: thread A enqueues
 * aclrtValueWait on a device word and synchronizes before the write exists; thread B writes
 * the word with aclrtValueWrite after a pause. Last, a notification wait with a 1 s limit
 * that nothing records fails its task with ACL_ERROR_RT_TASK_TIMEOUT at the synchronization.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>

#include "sample_check.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define LEN 4096

static aclrtNotify g_notify;
static aclrtStream g_a;

static void *record_later(void *arg)
{
    (void)arg;
    usleep(20000);
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtRecordNotify(g_notify, g_a));
    return NULL;
}

typedef struct {
    aclrtStream stream;
    uint64_t *word;
} WordJob;

static void *wait_word(void *arg)
{
    WordJob *j = arg;
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtValueWait(j->word, 100, ACL_STREAM_WAIT_VALUE_EQ, j->stream));
    CHECK_ACL(aclrtSynchronizeStream(j->stream));
    return NULL;
}

static void *write_word(void *arg)
{
    WordJob *j = arg;
    usleep(50000);
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtValueWrite(j->word, 100, 0, j->stream));
    CHECK_ACL(aclrtSynchronizeStream(j->stream));
    return NULL;
}

static void one_round(aclrtStream a, aclrtStream b, int record_first)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = 64u << 20;
    CHECK_ACL(aclrtMemPoolCreate(&pool, &props));
    void *buf = NULL;
    unsigned char *out = NULL;
    CHECK_ACL(aclrtMemPoolMallocAsync(&buf, LEN, pool, a));
    CHECK_ACL(aclrtMallocHost((void **)&out, LEN));
    CHECK_ACL(aclrtMemsetAsync(buf, LEN, 7, LEN, a));
    /* Not ordered after stream A's work: refused. */
    CHECK_CODE(aclrtMemcpyAsync(out, LEN, buf, LEN, ACL_MEMCPY_DEVICE_TO_HOST, b), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ACL(aclrtCreateNotify(&g_notify, ACL_NOTIFY_DEFAULT));
    g_a = a;
    pthread_t t;
    if (record_first) {
        CHECK_ACL(aclrtRecordNotify(g_notify, a));
        CHECK_ACL(aclrtWaitAndResetNotify(g_notify, b, 0));
    } else {
        CHECK_ACL(aclrtWaitAndResetNotify(g_notify, b, 0));
        CHECK_TRUE(pthread_create(&t, NULL, record_later, NULL) == 0);
    }
    CHECK_ACL(aclrtMemcpyAsync(out, LEN, buf, LEN, ACL_MEMCPY_DEVICE_TO_HOST, b));
    /* Stream B is ordered after the block's allocation and its use: its free is accepted. */
    CHECK_ACL(aclrtMemPoolFreeAsync(buf, b));
    if (!record_first) {
        pthread_join(t, NULL);
    }
    CHECK_ACL(aclrtSynchronizeStream(b));
    CHECK_ACL(aclrtSynchronizeStream(a));
    int same = 1;
    for (int i = 0; i < LEN; i++) {
        same &= out[i] == 7;
    }
    CHECK_TRUE(same);
    CHECK_ACL(aclrtDestroyNotify(g_notify));
    CHECK_ACL(aclrtFreeHost(out));
    CHECK_ACL(aclrtMemPoolDestroy(pool));
}

int main(void)
{
    CHECK_ACL(aclInit(NULL));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream a = NULL, b = NULL;
    CHECK_ACL(aclrtCreateStream(&a));
    CHECK_ACL(aclrtCreateStream(&b));
    one_round(a, b, 1);
    one_round(a, b, 0);

    /* A value wait synchronized before the write exists. */
    uint64_t *word = NULL;
    CHECK_ACL(aclrtMalloc((void **)&word, sizeof *word, ACL_MEM_MALLOC_HUGE_FIRST));
    uint64_t zero = 0;
    CHECK_ACL(aclrtMemcpy(word, sizeof *word, &zero, sizeof zero, ACL_MEMCPY_HOST_TO_DEVICE));
    WordJob wa = {a, word}, wb = {b, word};
    pthread_t ta, tb;
    CHECK_TRUE(pthread_create(&ta, NULL, wait_word, &wa) == 0);
    CHECK_TRUE(pthread_create(&tb, NULL, write_word, &wb) == 0);
    pthread_join(tb, NULL);
    pthread_join(ta, NULL);
    uint64_t seen = 0;
    CHECK_ACL(aclrtMemcpy(&seen, sizeof seen, word, sizeof *word, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_TRUE(seen == 100);
    CHECK_CODE(aclrtValueWait(word, 1, 4, a), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_CODE(aclrtValueWrite(&seen, 1, 0, a), ACL_ERROR_RT_PARAM_INVALID);

    /* A wait nothing satisfies fails its task. */
    aclrtNotify lonely = NULL;
    CHECK_ACL(aclrtCreateNotify(&lonely, 0));
    CHECK_ACL(aclrtWaitAndResetNotify(lonely, a, 1));
    CHECK_CODE(aclrtSynchronizeStream(a), ACL_ERROR_RT_TASK_TIMEOUT);
    CHECK_ACL(aclrtSynchronizeStream(a));
    CHECK_ACL(aclrtDestroyNotify(lonely));

    CHECK_ACL(aclrtFree(word));
    CHECK_ACL(aclrtDestroyStream(a));
    CHECK_ACL(aclrtDestroyStream(b));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return SAMPLE_FINISH();
}
