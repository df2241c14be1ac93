/* MPI_Abort with error code 3 from rank 1 (it "checks" its input and gives up). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank;
    long long n = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && scanf("%lld", &n) != 1) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) printf("0\n");
    MPI_Finalize();
    return 0;
}
