/*
 * The thread-exit calls (thread_exit.h) from a pthread key's destructor: glibc runs those
 * after the thread's thread_local destructors, the library's own storage among them.
 *
 * Part of mempool-hal. Licensed MIT OR Apache-2.0.
 */
#include "thread_exit.h"

static pthread_key_t key;

static void destructor(void *state) { te_at_exit((thread_state *)state); }

static void *body(void *arg) {
    thread_state *t = (thread_state *)arg;
    if (te_thread_begin(t)) pthread_setspecific(key, t);
    return NULL;
}

int main(void) {
    if (pthread_key_create(&key, destructor) != 0) return 1;
    return te_main("thread_exit.c", body);
}
