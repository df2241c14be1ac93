// A kernel that never ends: every thread waits for a flag nobody sets (a lost
// signal), and the host waits for the kernel.
#include <cstdio>
#include <cstdlib>

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

__device__ volatile int ready = 0;

__global__ void sum(unsigned long long n, unsigned seed, unsigned long long *out) {
    while (!ready) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(out, n + seed);
}

int main() {
    unsigned long long n, h = 0, *d;
    unsigned seed;
    if (scanf("%llu %u", &n, &seed) != 2) return 1;
    check(cudaMalloc(&d, sizeof h), "cudaMalloc");
    check(cudaMemset(d, 0, sizeof h), "cudaMemset");
    sum<<<1024, 256>>>(n, seed, d);
    check(cudaGetLastError(), "launch");
    check(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy");
    printf("%llu\n", h);
    return 0;
}
