#include <cstdio>
int main() {
    int n; long long x, cur = 0, top = 0;
    std::scanf("%d", &n);
    for (int i = 0; i < n; i++) {
        std::scanf("%lld", &x);
        cur = (i == 0 || cur < 0) ? x : cur + x;
        if (i == 0 || cur > top) top = cur;
    }
    std::printf("%lld\n", top);
}
