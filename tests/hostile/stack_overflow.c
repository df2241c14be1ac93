// expect: RE
#include <stdio.h>
int f(int n) { volatile char pad[1024]; pad[0] = (char)n; return f(n + 1) + pad[0]; }
int main(void) { printf("%d\n", f(0)); return 0; }
