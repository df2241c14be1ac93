/* The second thread follows a null pointer: a crash in one thread ends the program. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    long n, count = 0;
    int *table = NULL;
    if (scanf("%ld", &n) != 1) return 1;
#pragma omp parallel for schedule(static) reduction(+ : count)
    for (long i = 2; i <= n; i++) {
        if (omp_get_thread_num() == 1) count += table[i];
        long d;
        for (d = 2; d * d <= i; d++)
            if (i % d == 0) break;
        count += d * d > i;
    }
    printf("%ld\n", count);
    return 0;
}
