#include "check.h"
#include "strutil.h"

int main(void) {
    CHECK_SIZE(count_words(""), 0);
    CHECK_SIZE(count_words("  two\t words \n"), 2);
    return 0;
}
