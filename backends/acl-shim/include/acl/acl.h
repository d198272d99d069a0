/*
 * acl/acl.h: the umbrella header of the ACL C API as `libacl_rt.so` of mempool-acl-shim
 * implements it. It declares nothing itself: it includes `acl/acl_base.h` and
 * `acl/acl_rt.h`, where the runtime calls are, process initialization (aclInit,
 * aclFinalize, aclFinalizeReference) and the per-thread error message (aclGetRecentErrMsg)
 * included, as in CANN. The pool API is in `acl/acl_rt_memory_soma.h`, as in CANN.
 *
 * Written for this project, so that a program written for CANN and including `acl/acl.h`
 * compiles unchanged and is ABI-compatible with either library. CANN's model and operator
 * headers have no counterpart here.
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

#endif /* MEMPOOL_HAL_ACL_ACL_H */
