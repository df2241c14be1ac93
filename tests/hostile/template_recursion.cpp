// expect: CE
template <int N> struct R { static const int v = R<N + 1>::v + 1; };
int main() { return R<0>::v; }
