/* A test's one assertion: says what was expected and fails the test program. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_SIZE(got, want) do { size_t g_ = (got), w_ = (want); if (g_ != w_) { \
    printf("%s: expected %zu, got %zu\n", #got, w_, g_); exit(1); } } while (0)
#define CHECK_STR(got, want) do { if (strcmp((got), (want))) { \
    printf("%s: expected \"%s\", got \"%s\"\n", #got, (want), (got)); exit(1); } } while (0)
#endif
