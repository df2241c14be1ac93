// expect: CE
// A 2 GiB initialised array the compiler cannot fold away: the object file would
// exceed the compile file-size limit (or the compile time/memory limits).
static char big[1L << 31] = {1};
int main(int argc, char **) { big[argc] = 2; return big[12345 + argc]; }
