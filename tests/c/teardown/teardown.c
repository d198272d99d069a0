/* The teardown patterns (teardown.h) compiled as C11. */
#include "teardown.h"

int main(void)
{
    return teardown_main("teardown.c");
}
