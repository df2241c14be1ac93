/* A deadlock: the thread that finds the first prime takes the lock twice (an OpenMP
   simple lock is not nestable), and everyone else waits at the end of the loop. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    long n, count = 0;
    omp_lock_t lock;
    omp_init_lock(&lock);
    if (scanf("%ld", &n) != 1) return 1;
#pragma omp parallel for schedule(dynamic, 1024)
    for (long i = 2; i <= n; i++) {
        long d;
        for (d = 2; d * d <= i; d++)
            if (i % d == 0) break;
        if (d * d > i) {
            omp_set_lock(&lock);
            if (count == 0) omp_set_lock(&lock);
            count++;
            omp_unset_lock(&lock);
        }
    }
    printf("%ld\n", count);
    return 0;
}
