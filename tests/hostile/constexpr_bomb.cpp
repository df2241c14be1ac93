// expect: CE
// Billions of compile-time operations: stopped by the compile CPU limit.
constexpr unsigned long spin() {
    unsigned long s = 0;
    for (unsigned long i = 0; i < 200000; ++i)
        for (unsigned long j = 0; j < 200000; ++j) s += i ^ j;
    return s;
}
static_assert(spin() != 1, "");
int main() {}
