#include "check.h"
#include "strutil.h"

int main(void) {
    char s[] = "stressed";
    reverse(s);
    CHECK_STR(s, "desserts");
    return 0;
}
