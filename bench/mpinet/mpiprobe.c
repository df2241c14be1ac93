/* An MPI rank that says what it could reach: MPI_Init, an MPI_Allreduce across all
 * ranks, then a connect() (or for "/udp" a sendto()) to each HOST:PORT of $PROBE
 * (comma-separated). "ext+K" means 10.99.0.2 (the test's outside host) on the step's
 * first reserved port + K: a port the rank's own job may use, on an address it may not.
 * $HOLD keeps the ranks alive that many seconds (another job probes them meanwhile). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *probe(const char *spec) {
    static char out[128];
    char host[64], proto[8] = "tcp";
    int port;
    if (sscanf(spec, "%63[^:]:%d/%7s", host, &port, proto) < 2) return "bad spec";
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
    inet_pton(AF_INET, host, &a.sin_addr);
    int udp = !strcmp(proto, "udp");
    int s = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (s < 0) { snprintf(out, sizeof out, "socket: %s", strerror(errno)); return out; }
    if (udp) {
        if (sendto(s, "x", 1, 0, (void *)&a, sizeof a) < 0) snprintf(out, sizeof out, "sendto: %s", strerror(errno));
        else snprintf(out, sizeof out, "SENT");
        close(s);
        return out;
    }
    fcntl(s, F_SETFL, O_NONBLOCK);
    int r = connect(s, (void *)&a, sizeof a);
    if (r < 0 && errno == EINPROGRESS) {
        struct pollfd p = { s, POLLOUT, 0 };
        if (poll(&p, 1, 1000) == 0) { close(s); return "timeout"; }
        int e = 0; socklen_t l = sizeof e;
        getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l);
        errno = e; r = e ? -1 : 0;
    }
    if (r < 0) snprintf(out, sizeof out, "connect: %s", strerror(errno));
    else snprintf(out, sizeof out, "CONNECTED");
    close(s);
    return out;
}

int main(int argc, char **argv) {
    double t0 = now();
    MPI_Init(&argc, &argv);
    double t1 = now();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long v = rank + 1, sum = 0, want = (long)size * (size + 1) / 2;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const char *node = getenv("SLURMD_NODENAME"), *uri = getenv("PMIX_SERVER_URI41");
    const char *colon = uri ? strrchr(uri, ':') : NULL;
    printf("rank %d/%d node=%s pid=%d init=%.3fs allreduce=%ld (want %ld)\n", rank, size,
           node ? node : "?", (int)getpid(), t1 - t0, sum, want);
    printf("rank %d pmix server port %d\n", rank, colon ? atoi(colon + 1) : 0);
    char *list = getenv("PROBE");
    if (list) {
        char *d = strdup(list), *save = NULL;
        const char *resv = getenv("SLURM_STEP_RESV_PORTS");
        for (char *t = strtok_r(d, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            char spec[64];
            int k;
            snprintf(spec, sizeof spec, "%s", t);
            if (!strncmp(t, "ext+", 4) && resv && sscanf(t + 4, "%d", &k) == 1)
                snprintf(spec, sizeof spec, "10.99.0.2:%d%s", atoi(resv) + k,
                         strchr(t, '/') ? strchr(t, '/') : "");
            printf("rank %d probe %s -> %s\n", rank, spec, probe(spec));
        }
    }
    fflush(stdout);
    if (getenv("HOLD")) sleep((unsigned)atoi(getenv("HOLD")));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
