#include <cstdio>
#include <iostream>
#include <string>
int main() {
    std::string mode, data;
    std::cin >> mode >> data;
    if (mode == "encode") {
        for (char c : data) std::printf("%02d", c - 'a' + 1);
    } else {
        for (size_t i = 0; i + 1 < data.size(); i += 2)
            std::putchar('a' + std::stoi(data.substr(i, 2)) - 1);
    }
    std::puts("");
}
