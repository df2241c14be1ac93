// expect: CE
#include "/dev/zero"
int main() {}
