// expect: AC
// expect-rlimits: AC WA
// Asks for every CPU there is (sched_setaffinity) from a one-core run: the run's
// cpuset (its cgroup, or the Slurm job's) keeps it on its own core. Prints the
// answer only if it still runs on one CPU. Without any cpuset (an ordinary user
// outside Slurm, rlimits only) it may re-pin itself onto the other CPUs gradeline
// itself may use, never beyond them (CONTRACT.md, "CPU pinning").
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
int main(void) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    cpu_set_t now;
    sched_getaffinity(0, sizeof now, &now);
    printf("%d\n", CPU_COUNT(&now) == 1 ? 3 : 0);
    return 0;
}
