#include "check.h"
#include "strutil.h"

int main(void) {
    char empty[] = "", one[] = "x", even[] = "abcd";
    reverse(empty);
    reverse(one);
    reverse(even);
    CHECK_STR(empty, "");
    CHECK_STR(one, "x");
    CHECK_STR(even, "dcba");
    return 0;
}
