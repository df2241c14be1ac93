#include <stdio.h>
int main(void) {
    int n; int *p = 0;
    if (scanf("%d", &n) != 1) return 1;
    if (n == 2 || n == 3) { puts("-1"); return 0; }
    if (n == 1) { puts("1"); return 0; }
    for (int i = 2; i <= n; i += 2) printf("%d ", i);
    for (int i = 1; i <= n; i += 2) printf("%d ", i);
    puts("");
    if (n > 4) *p = n;  /* crashes after printing */
    return 0;
}
