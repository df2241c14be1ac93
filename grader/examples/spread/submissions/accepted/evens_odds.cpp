#include <cstdio>
int main() {
    int n; if (scanf("%d", &n) != 1) return 1;
    if (n == 2 || n == 3) { puts("-1"); return 0; }
    for (int i = 2; i <= n; i += 2) printf("%d ", i);
    for (int i = 1; i <= n; i += 2) printf("%d ", i);
    puts("");
}
