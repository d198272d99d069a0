// mempool_alloc.hpp: a header-only C++ wrapper of libmempool_alloc.so for frameworks that
// expect an allocation failure as an exception (std::bad_alloc) rather than NULL.
//
//   #include <mempool_alloc.hpp>
//   void *p = mempool_alloc_cpp::allocate(bytes, device, stream);   // throws on failure
//   mempool_alloc_cpp::deallocate(p, bytes, device, stream);
//
// To hand a framework C functions that throw (RMM's style, for a loader that calls
// through `extern "C"` and catches), build a small library of your own with
//
//   MEMPOOL_ALLOC_THROWING_EXPORTS(my_alloc, my_free)
//
// which defines `void *my_alloc(size_t, int, void *)` (throwing mempool_alloc_cpp::bad_alloc)
// and `void my_free(void *, size_t, int, void *)`.
//
// Part of mempool-hal. Licensed MIT OR Apache-2.0.
#ifndef MEMPOOL_ALLOC_HPP
#define MEMPOOL_ALLOC_HPP

#include <cstddef>
#include <new>
#include <string>

#include "mempool_alloc.h"

namespace mempool_alloc_cpp {

// An allocation failure, with the library's reason (mempool_last_error()) as what().
class bad_alloc : public std::bad_alloc {
  public:
    explicit bad_alloc(std::string why) : why_(std::move(why)) {}
    const char *what() const noexcept override { return why_.c_str(); }

  private:
    std::string why_;
};

// mempool_alloc(), throwing bad_alloc instead of answering NULL.
inline void *allocate(std::size_t size, int device, void *stream) {
    void *p = mempool_alloc(size, device, stream);
    if (p == nullptr) {
        const char *why = mempool_last_error();
        throw bad_alloc(why != nullptr ? why : "mempool_alloc failed");
    }
    return p;
}

// mempool_free(); never throws (a failure is described by mempool_last_error()).
inline void deallocate(void *ptr, std::size_t size, int device, void *stream) noexcept {
    mempool_free(ptr, size, device, stream);
}

}  // namespace mempool_alloc_cpp

// Defines two C-linkage functions named ALLOC and FREE over the wrapper: ALLOC throws
// mempool_alloc_cpp::bad_alloc on failure.
#define MEMPOOL_ALLOC_THROWING_EXPORTS(ALLOC, FREE)                                  \
    extern "C" void *ALLOC(std::size_t size, int device, void *stream) {             \
        return mempool_alloc_cpp::allocate(size, device, stream);                    \
    }                                                                                \
    extern "C" void FREE(void *ptr, std::size_t size, int device, void *stream) {    \
        mempool_alloc_cpp::deallocate(ptr, size, device, stream);                    \
    }

#endif  // MEMPOOL_ALLOC_HPP
