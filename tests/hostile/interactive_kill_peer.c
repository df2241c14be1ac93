// expect: AC
// problem: chat
// Tries to signal every process it can (the interactor above all) before answering;
// it must see none of them: its PID namespace holds only itself.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    kill(-1, SIGKILL);  /* in its own PID namespace: nobody else to hit */
    for (int pid = 2; pid < 4096; pid++)
        if (pid != getpid()) kill(pid, SIGKILL);
    int a, b;
    if (scanf("%d %d", &a, &b) != 2) return 1;
    printf("%d\n", a + b);
    fflush(stdout);
    return 0;
}
