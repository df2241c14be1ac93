/* Assumes n <= 100 and aborts otherwise: correct on the samples only. */
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n; long long a[100], s = 0;
    if (scanf("%d", &n) != 1) return 1;
    if (n > 10) abort();
    for (int i = 0; i < n; ++i) { scanf("%lld", &a[i]); s += a[i]; }
    printf("%lld\n", s);
    return 0;
}
