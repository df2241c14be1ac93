#include "check.h"
#include "strutil.h"

int main(void) {
    CHECK_SIZE(count_words("the quick brown fox"), 4);
    CHECK_SIZE(count_words("one"), 1);
    return 0;
}
