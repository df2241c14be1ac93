#include "strutil.h"

size_t count_words(const char *s) {
    return strlen(s)  /* no semicolon, no <string.h> */
}
