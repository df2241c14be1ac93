/* Correct, and slower on two cores than one thread alone: the whole loop body is a
   critical section, so the threads take turns -- one works while the other waits --
   and every turn hands the lock (and count) over from one core to the other. Where
   the node is busy a turn can wait for a whole time slice: it may then run out of
   time on the largest test, and earns no performance points either way. */
#include <stdio.h>

static int is_prime(long n) {
    if (n < 2) return 0;
    for (long d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}

int main(void) {
    long n, count = 0;
    if (scanf("%ld", &n) != 1) return 1;
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 2; i <= n; i++) {
#pragma omp critical
        count += is_prime(i);
    }
    printf("%ld\n", count);
    return 0;
}
