/*
 * sample_check.h: the check bookkeeping the samples in this folder share (C11 and C++17).
 *
 * Every ACL call of a sample goes through CHECK_ACL (success expected) or CHECK_CODE (an exact
 * code expected), and every result through CHECK_TRUE. A failing check prints the file, the
 * line, the expression, what came back and aclGetRecentErrMsg. SAMPLE_FINISH prints the
 * summary line "<name>: N passed, M failed" last and gives the exit status: 0 if no check
 * failed, 1 otherwise.
 */
#ifndef MEMPOOL_SAMPLES_SAMPLE_CHECK_H
#define MEMPOOL_SAMPLES_SAMPLE_CHECK_H

#include <acl/acl.h>

#include <stdio.h>
#include <string.h>

static int sample_passed;
static int sample_failed;

static inline const char *sample_file(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static inline const char *sample_recent_msg(void)
{
    const char *msg = aclGetRecentErrMsg();
    return (msg != NULL && msg[0] != '\0') ? msg : "(empty)";
}

/* One call's code against the exact code expected. Returns 1 when it matched. */
static inline int sample_check_code(const char *expr, const char *file, int line, aclError got,
                                    aclError want)
{
    if (got == want) {
        sample_passed++;
        return 1;
    }
    sample_failed++;
    printf("  FAIL %s:%d: %s\n       returned %d, expected %d; aclGetRecentErrMsg: %s\n",
           sample_file(file), line, expr, got, want, sample_recent_msg());
    return 0;
}

/* One condition. Returns 1 when it held. */
static inline int sample_check_true(const char *expr, const char *file, int line, int cond)
{
    if (cond) {
        sample_passed++;
        return 1;
    }
    sample_failed++;
    printf("  FAIL %s:%d: %s does not hold\n", sample_file(file), line, expr);
    return 0;
}

/* The summary line, last; the exit status of main. */
static inline int sample_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, sample_passed, sample_failed);
    return sample_failed == 0 ? 0 : 1;
}

#define CHECK_ACL(call) sample_check_code(#call, __FILE__, __LINE__, (call), ACL_SUCCESS)
#define CHECK_CODE(call, want) sample_check_code(#call, __FILE__, __LINE__, (call), (want))
#define CHECK_TRUE(cond) sample_check_true(#cond, __FILE__, __LINE__, (cond) ? 1 : 0)
#define SAMPLE_FINISH() sample_finish(sample_file(__FILE__))

#endif /* MEMPOOL_SAMPLES_SAMPLE_CHECK_H */
