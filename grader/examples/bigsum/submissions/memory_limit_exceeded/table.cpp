// Keeps a 512 MiB lookup table it never needs.
#include <cstdio>
#include <vector>
int main() {
    std::vector<long long> table(64u << 20, 1);  // 512 MiB, touched
    int n; long long s = 0, a;
    if (scanf("%d", &n) != 1) return 1;
    for (int i = 0; i < n; ++i) { scanf("%lld", &a); s += a * table[i & 1023]; }
    printf("%lld\n", s);
}
