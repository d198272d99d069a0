// The pluggable-allocator protocol (main.h) compiled as C++17, host threads on std::thread.
#include "main.h"

int main(int argc, char **argv)
{
    return protocol_main("protocol.cpp", argc, argv);
}
