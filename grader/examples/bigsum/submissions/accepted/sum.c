#include <stdio.h>
int main(void) {
    int n; long long s = 0, a;
    if (scanf("%d", &n) != 1) return 1;
    while (n-- > 0 && scanf("%lld", &a) == 1) s += a;
    printf("%lld\n", s);
    return 0;
}
