#include <iostream>
#include <string>
int main() {
    long long lo = 1, hi = 1000000000;
    while (lo <= hi) {
        long long mid = (lo + hi) / 2;
        std::cout << "? " << mid << std::endl;
        std::string r;
        if (!(std::cin >> r) || r == "=") return 0;
        if (r == "<") hi = mid - 1; else lo = mid + 1;
    }
}
