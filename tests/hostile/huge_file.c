// expect: OLE
/* Tries to fill the host's disk through a file in /tmp (and /work, read-only). */
#include <stdio.h>
#include <string.h>
int main(void) {
    static char buf[1 << 16];
    memset(buf, 'z', sizeof buf);
    FILE *w = fopen("/work/big", "w");
    if (w) { puts("PWNED: /work writable during the run"); return 0; }
    FILE *f = fopen("/tmp/big", "w");
    if (!f) return 3;
    for (;;) if (fwrite(buf, 1, sizeof buf, f) != sizeof buf) { puts("3"); return 0; }
}
