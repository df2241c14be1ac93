// expect: TLE
// problem: tiny2
// Eight threads spinning on a two-core shape, past the wall limit: every core of the
// allocation held, none beyond it, and the run ends at its wall limit.
#include <pthread.h>
static void *spin(void *arg) { volatile unsigned long x = 0; (void)arg; for (;;) ++x; return 0; }
int main(void) {
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], 0, spin, 0);
    for (int i = 0; i < 8; i++) pthread_join(t[i], 0);
}
