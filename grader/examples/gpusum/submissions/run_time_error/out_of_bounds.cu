// A write far past the end of the result: the kernel faults (an illegal address),
// the next CUDA call reports it, and the program exits with an error.
#include <cstdio>
#include <cstdlib>

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

__global__ void sum(unsigned long long n, unsigned seed, unsigned long long *out) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out + (i << 20), ((unsigned)i * 2654435761u + seed) % 1000u);
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
