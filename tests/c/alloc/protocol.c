/* The pluggable-allocator protocol (main.h) compiled as C11, host threads on pthreads. */
#include "main.h"

int main(int argc, char **argv)
{
    return protocol_main("protocol.c", argc, argv);
}
