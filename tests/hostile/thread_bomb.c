// expect: TLE RE
// problem: tiny2
// A thread bomb: threads without end, each asleep. The process and thread limit of the
// shape (pids.max, or RLIMIT_NPROC per run) makes pthread_create fail; it keeps trying
// until the wall clock ends it, or gives up and crashes. Nothing is left running.
#include <pthread.h>
#include <unistd.h>
static void *nap(void *arg) { (void)arg; for (;;) pause(); return 0; }
int main(void) {
    for (;;) {
        pthread_t t;
        pthread_create(&t, 0, nap, 0);
    }
}
