// expect: TLE MLE
// Exhausts its cgroup: TLE when the CPU limit wins, MLE when kernel memory of the
// forking processes reaches the memory limit first. Both mean "contained".
#include <unistd.h>
int main(void) { for (;;) fork(); }
