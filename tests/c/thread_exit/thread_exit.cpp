/*
 * The thread-exit calls (thread_exit.h) from the destructor of a C++ thread_local object,
 * as a framework's per-thread cache frees its memory: the object is made before the
 * thread's first call into the library, so its destructor runs after the library's own
 * thread-local storage is destroyed.
 *
 * Part of mempool-hal. Licensed MIT OR Apache-2.0.
 */
#include "thread_exit.h"

namespace {

struct Cache {
    thread_state *state = nullptr;
    ~Cache() {
        if (state != nullptr) te_at_exit(state);
    }
};

thread_local Cache cache;

void *body(void *arg) {
    thread_state *t = static_cast<thread_state *>(arg);
    cache.state = nullptr; // made now, before any call into the library
    if (te_thread_begin(t)) cache.state = t;
    return nullptr;
}

} // namespace

int main() { return te_main("thread_exit.cpp", body); }
