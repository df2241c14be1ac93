// Left its debug output on, in a loop that never ends.
#include <cstdio>
int main() {
    for (unsigned long i = 0;; ++i) printf("debug: i=%lu still computing the mean...\n", i);
}
