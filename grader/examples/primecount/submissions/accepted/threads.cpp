// std::thread instead of OpenMP: as many threads as the cores it may use.
#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

static bool is_prime(long n) {
    if (n < 2) return false;
    for (long d = 2; d * d <= n; d++)
        if (n % d == 0) return false;
    return true;
}

int main() {
    long n;
    if (!(std::cin >> n)) return 1;
    unsigned k = std::thread::hardware_concurrency();
    std::atomic<long> next{2}, count{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < (k ? k : 1); t++)
        pool.emplace_back([&] {
            long mine = 0;
            for (long a; (a = next.fetch_add(1024)) <= n;)
                for (long i = a; i < a + 1024 && i <= n; i++) mine += is_prime(i);
            count += mine;
        });
    for (auto &th : pool) th.join();
    std::cout << count << "\n";
}
