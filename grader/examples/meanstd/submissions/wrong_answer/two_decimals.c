/* Rounds to two decimals: outside the 1e-6 tolerance. */
#include <math.h>
#include <stdio.h>
int main(void) {
    int n; double x[10000], m = 0, q = 0;
    if (scanf("%d", &n) != 1) return 1;
    for (int i = 0; i < n; ++i) { scanf("%lf", &x[i]); m += x[i]; }
    m /= n;
    for (int i = 0; i < n; ++i) q += (x[i] - m) * (x[i] - m);
    printf("%.2f %.2f\n", m, sqrt(q / n));
    return 0;
}
