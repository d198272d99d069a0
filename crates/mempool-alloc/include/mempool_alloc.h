/*
 * mempool_alloc.h: the C interface of libmempool_alloc.so, a stream-ordered pool
 * allocator for frameworks that take an outside allocator through a small C interface
 * (PyTorch's CUDAPluggableAllocator, torch_npu's NPUPluggableAllocator, MindSpore's
 * PluggableAllocator).
 *
 * One pool per device, with a small-block layer over it, on the backend chosen at the
 * first call (MEMPOOL_ALLOC_BACKEND: the CUDA driver, the Ascend runtime, or the CPU
 * emulator). Every function may be called from any thread, in any order; the first call
 * initializes the library. No function unwinds into the caller: a failure is a NULL
 * pointer, a non-zero return or nothing, with the reason in mempool_last_error().
 *
 * Part of mempool-hal. Licensed MIT OR Apache-2.0.
 */
#ifndef MEMPOOL_ALLOC_H
#define MEMPOOL_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#else
#include <stdbool.h>
#endif

/* The layout version of struct mempool_alloc_stats this header describes. */
#define MEMPOOL_ALLOC_STATS_VERSION 1u

/*
 * Statistics of one device's pool. The caller sets `version` to
 * MEMPOOL_ALLOC_STATS_VERSION and `size` to sizeof(struct mempool_alloc_stats);
 * mempool_stats() fills at most `size` bytes and writes its own version and size back.
 * Later versions only append fields.
 */
typedef struct mempool_alloc_stats {
    uint32_t version;              /* in: the caller's version; out: the library's */
    uint32_t size;                 /* in: bytes the caller provides; out: bytes written */
    uint64_t used_current;         /* pool bytes in live allocations (USED) */
    uint64_t used_high;            /* high-water mark of used_current */
    uint64_t reserved_current;     /* pool bytes taken from the device (RESERVED) */
    uint64_t reserved_high;        /* high-water mark of reserved_current */
    uint64_t requested_current;    /* bytes the framework asked for, live */
    uint64_t requested_high;       /* high-water mark of requested_current */
    uint64_t small_held_current;   /* pool bytes the small-block layer holds */
    uint64_t small_held_high;      /* high-water mark of small_held_current */
    uint64_t small_wasted;         /* held but not requested (rounding, free ranges) */
    uint64_t allocations;          /* live allocations */
    uint64_t pending_frees;        /* frees waiting for streams named by record_stream */
    uint64_t oom_count;            /* allocations answered NULL for lack of memory */
    uint64_t oom_retries;          /* synchronize-trim-retry rounds after out of memory */
    uint64_t stream_order_violations; /* frees the stream-order checker refused */
    uint64_t memory_limit;         /* the cap set by a memory fraction; 0: none */
} mempool_alloc_stats;

/*
 * An out-of-memory observer: called, on the allocating thread, when an allocation of
 * `size` bytes on `device` fails after the retry, before it returns NULL. `stats` is the
 * device's statistics at that moment. It must not call back into the library's
 * allocation functions.
 */
typedef void (*mempool_oom_observer)(int device, size_t size, const mempool_alloc_stats *stats,
                                     void *user_data);

/*
 * Allocates `size` bytes on `device` in stream order on `stream` (an aclrtStream or a
 * CUstream the framework owns; NULL: the device's default stream). NULL on failure
 * (size 0, an unknown device, out of memory, a stream the backend refuses), with the
 * reason in mempool_last_error().
 */
void *mempool_alloc(size_t size, int device, void *stream);

/*
 * Frees `ptr`, allocated with `size` bytes on `device` and `stream` (the allocation's own
 * stream, as the frameworks pass it). Uses on other streams must have been announced with
 * mempool_record_stream(); the memory is reused only after they are complete. A pointer
 * the library did not hand out, a second free, or a wrong size or device changes nothing
 * and is described by mempool_last_error().
 */
void mempool_free(void *ptr, size_t size, int device, void *stream);

/* Initializes the library for `device_count` devices (PyTorch's and torch_npu's init hook).
 * Optional: the first call of any function initializes it. */
void mempool_init(int device_count);

/* Gives every cached byte that no live allocation holds back to the devices (PyTorch's
 * reset hook, torch.cuda.empty_cache). Waits for the device's queued work. */
void mempool_empty_cache(void);

/* torch_npu's reset hook: as mempool_empty_cache(); with `check_error` the first failing
 * step stops it, without it the remaining steps still run. Failures go to
 * mempool_last_error() either way. */
void mempool_empty_cache_checked(bool check_error);

/* Caps `device`'s pool at `fraction` of the device's memory, as PyTorch's
 * set_per_process_memory_fraction does. A fraction that is NaN or outside (0, 1] changes
 * nothing and is described by mempool_last_error(). */
void mempool_set_memory_fraction(double fraction, int device);

/* Announces that `stream` uses the allocation at `ptr` (PyTorch's record_stream): its free
 * records an event on `stream`, and the memory is reused only after the event completes. */
void mempool_record_stream(void *ptr, void *stream);

/* Fills `out` with `device`'s statistics (see struct mempool_alloc_stats). 0 on success,
 * -1 on failure (NULL, version 0, a size below the 8 bytes of version and size, an unknown
 * device). A later version is answered with this one's fields and version. */
int mempool_stats(int device, mempool_alloc_stats *out);

/* Resets the high-water marks of `device` to their current values (torch_npu's
 * reset_peak_status hook). 0 on success, -1 on failure. */
int mempool_reset_peak_stats(int device);

/* Registers an out-of-memory observer (at most 16). 0 on success, -1 for NULL or when full. */
int mempool_on_oom(mempool_oom_observer observer, void *user_data);

/* Records the allocation history of every device from now on, keeping the last
 * `max_entries` events of each (alloc, free_requested, free_completed, oom); 0 stops
 * recording and forgets it (PyTorch's _record_memory_history). Off by default, unless
 * MEMPOOL_ALLOC_HISTORY sets a count. Returns 0. */
int mempool_record_history(size_t max_entries);

/* Writes the recorded history to `path` as a PyTorch memory snapshot (the pickle
 * torch.cuda.memory._dump_snapshot writes), for PyTorch's memory viewer. 0 on success, -1
 * for NULL or a path that cannot be written (the reason is in mempool_last_error()). */
int mempool_dump_snapshot(const char *path);

/* The calling thread's last failure, as text, or NULL when there was none. Valid until the
 * thread's next call into the library. */
const char *mempool_last_error(void);

/* The backend the library runs on ("cuda", "ascend" or "emulator") and where it was found,
 * or NULL when initialization failed (the reason is in mempool_last_error()). */
const char *mempool_backend(void);

/* Registers the library's pool of `device` (through its small-block layer) as the external
 * allocator of `stream` in CANN's registry (aclrtAllocatorRegister), so that CANN's operators
 * on `stream` take their workspaces from it, in the stream's order; a registration the
 * library made on the stream before is replaced. 0 on success; -1 (the reason is in
 * mempool_last_error()) for NULL, an unknown device, a stream the runtime refuses, a runtime
 * without the registry, or a backend other than Ascend. */
int mempool_register_stream_allocator(int device, void *stream);

/* Drops the library's registration on `stream` (aclrtAllocatorUnregister, unless another
 * allocator was registered on it since); the workspaces still handed out are freed in the
 * stream's order, so call it once no queued operator holds one. 0 on success; -1 when the
 * library registered nothing there, or for an unknown device. */
int mempool_unregister_stream_allocator(int device, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_ALLOC_H */
