// expect: CE
#include </dev/random>
int main() {}
