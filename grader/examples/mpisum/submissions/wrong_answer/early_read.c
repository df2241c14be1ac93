/* A race: rank 0 starts receiving the other ranks' shares (MPI_Irecv) and adds them
   before waiting for them to arrive (MPI_Wait comes too late). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size;
    long long n = 0, mine = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && scanf("%lld", &n) != 1) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    long long lo = n * rank / size + 1, hi = n * (rank + 1) / size;
    for (long long i = lo; i <= hi; i++) mine += (i * i) % 1000;
    if (rank == 0) {
        long long theirs[64] = {0}, total = mine;
        MPI_Request req[64];
        for (int r = 1; r < size; r++)
            MPI_Irecv(&theirs[r], 1, MPI_LONG_LONG, r, 0, MPI_COMM_WORLD, &req[r]);
        for (int r = 1; r < size; r++) total += theirs[r];
        MPI_Waitall(size - 1, &req[1], MPI_STATUSES_IGNORE);
        printf("%lld\n", total);
    } else {
        MPI_Send(&mine, 1, MPI_LONG_LONG, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
