// Overflows on the large group: passes small (30 points), fails large.
#include <iostream>
int main() {
    std::ios::sync_with_stdio(false);
    int n, s = 0, a;
    std::cin >> n;
    for (int i = 0; i < n; ++i) { std::cin >> a; s += a; }
    std::cout << s << "\n";
}
