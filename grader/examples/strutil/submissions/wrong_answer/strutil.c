#include <string.h>

#include "strutil.h"

size_t count_words(const char *s) {  /* counts single spaces: wrong on runs and tabs */
    size_t n = *s ? 1 : 0;
    for (; *s; s++)
        if (*s == ' ') n++;
    return n;
}

void reverse(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) {
        char t = s[i];
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = t;
    }
}
