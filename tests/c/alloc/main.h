/*
 * main.h: the program's entry (protocol.c and protocol.cpp include it last).
 *
 *   protocol VARIANT [LIBRARY]
 *
 * VARIANT: protocol, no-record, fraction or hostile. LIBRARY: the path of
 * libmempool_alloc.so (default: $MEMPOOL_ALLOC_LIBRARY). The runtime is initialized and
 * linked first; the allocator library is dlopened afterwards. The last line is
 * "<name> VARIANT: N passed, M failed"; the exit status is 0 when no check failed.
 */
#ifndef MEMPOOL_ALLOC_MAIN_H
#define MEMPOOL_ALLOC_MAIN_H

#include "hostile.h"

static int protocol_main(const char *name, int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s protocol|no-record|fraction|hostile [libmempool_alloc.so]\n", argv[0]);
        return 2;
    }
    /* Lines in order with stderr's, also when the output goes to a file. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *variant = argv[1];
    const char *path = argc > 2 ? argv[2] : getenv("MEMPOOL_ALLOC_LIBRARY");
    if (path == NULL) {
        fprintf(stderr, "%s: no library path (argument or MEMPOOL_ALLOC_LIBRARY)\n", name);
        return 2;
    }
    void (*run)(void) = NULL;
    if (strcmp(variant, "protocol") == 0) {
        run = variant_protocol;
    } else if (strcmp(variant, "no-record") == 0) {
        run = variant_no_record;
    } else if (strcmp(variant, "fraction") == 0) {
        run = variant_fraction;
    } else if (strcmp(variant, "hostile") == 0) {
        run = variant_hostile;
    } else {
        fprintf(stderr, "%s: unknown variant %s\n", name, variant);
        return 2;
    }
    printf("%s %s on the %s runtime\n", name, variant, FLAVOUR);
    rt_init();
    rt_print_path();
    if (!CHECK(rt_device_count >= DEVICES)) {
        fprintf(stderr, "       the runtime has %d devices\n", rt_device_count);
    } else if (lib_open(path)) {
        run();
        end_streams();
    }
    char label[128];
    snprintf(label, sizeof label, "%s %s", name, variant);
    return h_finish(label);
}

#endif /* MEMPOOL_ALLOC_MAIN_H */
