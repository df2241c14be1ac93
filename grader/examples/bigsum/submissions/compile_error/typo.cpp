#include <cstdio>
int main() {
    long long s = 0
    printf("%lld\n", s);
}
