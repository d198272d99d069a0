/*
 * acl/acl.h: the umbrella header of the ACL C API as `libacl_rt.so` of mempool-acl-shim
 * implements it. Includes `acl/acl_base.h` and `acl/acl_rt.h`, and declares process
 * initialization and the per-thread error message. The pool API is in
 * `acl/acl_rt_memory_soma.h`, as in CANN.
 *
 * Written for this project. Names and prototypes match CANN's `acl/acl.h` for these calls,
 * so a program written for CANN compiles unchanged and is ABI-compatible with either
 * library. CANN's model and operator headers have no counterpart here.
 *
 * Build a program against the library:
 *   cc -I backends/acl-shim/include prog.c -L target/debug -lacl_rt
 */
#ifndef MEMPOOL_HAL_ACL_ACL_H
#define MEMPOOL_HAL_ACL_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL, "" or a readable file (its content is not read); another path: ACL_ERROR_INVALID_FILE.
 * Again before aclFinalize: ACL_ERROR_REPEAT_INITIALIZE; aclFinalize again without aclInit:
 * ACL_ERROR_REPEAT_FINALIZE. A bad emulator setting in the environment
 * (MEMPOOL_EMU_*) makes this and every later call fail with ACL_ERROR_RT_INTERNAL_ERROR and a
 * message naming the variable. */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
/* The counted finalize: every aclInit (a repeat answering ACL_ERROR_REPEAT_INITIALIZE too)
 * adds one reference; this takes one away and finalizes, as aclFinalize, when it takes the
 * last. No reference left: ACL_ERROR_REPEAT_FINALIZE. refCount may be NULL; otherwise it
 * receives the references left. aclFinalize clears the count. */
aclError aclFinalizeReference(uint64_t *refCount);

/* Takes the calling thread's last error message, as CANN "obtains and clears" it: NULL when
 * there is nothing to report (no failure yet, or the message was already taken), so check
 * for NULL before printing it. Owned by the library, valid until this function returns
 * another message on this thread. */
const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_H */
