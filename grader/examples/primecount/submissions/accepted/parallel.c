/* Trial division shared among the threads; dynamic scheduling, since large numbers
   cost more than small ones. */
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
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : count)
    for (long i = 2; i <= n; i++)
        count += is_prime(i);
    printf("%ld\n", count);
    return 0;
}
