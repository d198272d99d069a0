// The teardown patterns (teardown.h) compiled as C++17.
#include "teardown.h"

int main()
{
    return teardown_main("teardown.cpp");
}
