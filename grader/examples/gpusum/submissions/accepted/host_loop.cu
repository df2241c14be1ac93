// Correct, but the GPU is never used: the host sums the array in one loop (accepted;
// the performance tests score it low).
#include <cstdio>

int main() {
    unsigned long long n, total = 0;
    unsigned seed;
    if (scanf("%llu %u", &n, &seed) != 2) return 1;
    for (unsigned long long i = 0; i < n; i++)
        total += ((unsigned)i * 2654435761u + seed) % 1000u;
    printf("%llu\n", total);
    return 0;
}
