// Every thread sums a grid-stride share, a block adds its threads' sums in shared
// memory (a tree, synchronised at each level), and one atomic per block adds it in.
#include <cstdio>
#include <cstdlib>

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

__global__ void sum(unsigned long long n, unsigned seed, unsigned long long *out) {
    __shared__ unsigned long long part[256];
    unsigned long long mine = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        mine += ((unsigned)i * 2654435761u + seed) % 1000u;
    part[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
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
