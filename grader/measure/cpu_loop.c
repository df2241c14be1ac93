/* The pure CPU loop of a scaling campaign: a dependent chain of multiply-adds with
 * no memory traffic beyond registers, so it scales with cores unless the cores
 * themselves are shared (SMT siblings, a noisy hypervisor). Usage: cpu_loop ITERATIONS */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000000UL;
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    printf("%lu\n", x & 1);
    return 0;
}
