/* An MPI rank for test_mpi_runner.py: an Allreduce of the ranks' numbers across the
 * step's nodes, the node it ran on, and whether it reached PORT on 127.0.0.1 (the local
 * cluster's slurmctld: outside its job). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, mine, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int r = connect(s, (struct sockaddr *)&a, sizeof a);
    printf("rank %d of %d on %s sum %d probe %s\n", rank, size, getenv("SLURMD_NODENAME"), sum,
           r == 0 ? "REACHED" : strerrorname_np(errno));
    MPI_Finalize();
    return 0;
}
