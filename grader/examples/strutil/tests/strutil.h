/* The functions students write in strutil.c. */
#ifndef STRUTIL_H
#define STRUTIL_H
#include <stddef.h>

/* Words in s: runs of characters that are not spaces, tabs or newlines. */
size_t count_words(const char *s);
/* Reverse s in place. */
void reverse(char *s);

#endif
