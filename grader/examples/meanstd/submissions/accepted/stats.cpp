#include <cmath>
#include <cstdio>
#include <vector>
int main() {
    int n; if (scanf("%d", &n) != 1) return 1;
    std::vector<double> x(n); double m = 0;
    for (auto &v : x) { scanf("%lf", &v); m += v; }
    m /= n; double q = 0;
    for (double v : x) q += (v - m) * (v - m);
    printf("%.10f %.10f\n", m, std::sqrt(q / n));
}
