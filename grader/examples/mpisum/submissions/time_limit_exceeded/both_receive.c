/* A deadlock: each rank first waits to receive the other's share, and only then
   sends its own. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size;
    long long n = 0, mine = 0, other = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && scanf("%lld", &n) != 1) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    long long lo = n * rank / size + 1, hi = n * (rank + 1) / size;
    for (long long i = lo; i <= hi; i++) mine += (i * i) % 1000;
    int peer = 1 - rank;
    MPI_Recv(&other, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&mine, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%lld\n", mine + other);
    MPI_Finalize();
    return 0;
}
