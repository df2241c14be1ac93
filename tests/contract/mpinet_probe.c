/* What an MPI rank confined by "net_mpi 1" reaches (test_mpi_runner.py runs it).
 *   mpinet_probe PMIX_PORT OTHER_PORT PEER_PORT HANG_PORT OWN_PORT ABSTRACT
 * The test listens on 127.0.0.1:PMIX_PORT (the stepd's PMIx server, allowed), on
 * 127.0.0.2:PMIX_PORT (another address), 127.0.0.1:OTHER_PORT (another port),
 * 127.0.0.3:PEER_PORT (a net_peer on a reserved port, allowed), 127.0.0.3:OTHER_PORT (a
 * peer off the reserved ports), 127.0.0.3:HANG_PORT (a peer that never answers: its
 * queue is full), UDP on 127.0.0.1:PMIX_PORT, and a datagram unix socket @ABSTRACT.
 * OWN_PORT is reserved and free.
 * Each line: "what RESULT", RESULT being OK or the errno's name. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TRY(what, expr)                                                          \
    do {                                                                         \
        errno = 0;                                                               \
        long r_ = (long)(expr);                                                  \
        printf("%s %s\n", what, r_ < 0 ? strerrorname_np(errno) : "OK");         \
        fflush(stdout);                                                          \
    } while (0)

static struct sockaddr_in at(const char *host, int port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    inet_pton(AF_INET, host, &a.sin_addr);
    return a;
}

static int tcp_to(const char *host, int port) {
    struct sockaddr_in a = at(host, port);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) { int e = errno; close(s); errno = e; return -1; }
    return s;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The race: one thread flips the address between the allowed 127.0.0.1 and the
   forbidden 127.0.0.2 while connect() is being checked. */
static struct sockaddr_in shared;
static volatile int racing = 1;
static void *flip(void *arg) {
    (void)arg;
    struct in_addr good, bad;
    inet_pton(AF_INET, "127.0.0.1", &good);
    inet_pton(AF_INET, "127.0.0.2", &bad);
    while (racing) {  /* each for a little while: a check sees either */
        ((volatile struct sockaddr_in *)&shared)->sin_addr = bad;
        for (volatile int i = 0; i < 100; i++) {}
        ((volatile struct sockaddr_in *)&shared)->sin_addr = good;
        for (volatile int i = 0; i < 100; i++) {}
    }
    return NULL;
}

static int hang_port;
static void *hang(void *arg) {  /* a blocking connect to a peer that never answers */
    (void)arg;
    tcp_to("127.0.0.3", hang_port);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: mpinet_probe PMIX OTHER PEER HANG OWN ABSTRACT\n"); return 2; }
    int pmix = atoi(argv[1]), other = atoi(argv[2]), peer = atoi(argv[3]), own = atoi(argv[5]);
    hang_port = atoi(argv[4]);
    int s = tcp_to("127.0.0.1", pmix);
    TRY("connect_pmix", s < 0 ? -1 : write(s, "hello\n", 6));
    int nb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = at("127.0.0.1", pmix);
    int r = connect(nb, (struct sockaddr *)&a, sizeof a);
    struct pollfd pf = {nb, POLLOUT, 0};
    int err = 0;
    socklen_t el = sizeof err;
    if (r < 0 && errno == EINPROGRESS && poll(&pf, 1, 5000) == 1) {
        getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &el);
        r = err ? -1 : 0;
        errno = err;
    }
    TRY("connect_pmix_nonblocking", r);
    TRY("connect_peer", tcp_to("127.0.0.3", peer));
    TRY("connect_other_port", tcp_to("127.0.0.1", other));
    TRY("connect_other_address", tcp_to("127.0.0.2", pmix));
    TRY("connect_peer_other_port", tcp_to("127.0.0.3", other));
    int s6 = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((unsigned short)pmix),
                              .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    TRY("connect_ipv6", s6 < 0 ? -1 : connect(s6, (struct sockaddr *)&a6, sizeof a6));
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    strcpy(un.sun_path + 1, "gl-mpinet-probe");
    int su = socket(AF_UNIX, SOCK_STREAM, 0);
    TRY("connect_unix_abstract", connect(su, (struct sockaddr *)&un,
                                         offsetof(struct sockaddr_un, sun_path) + 16));
    /* a datagram to an abstract unix socket of the node's (the test's): Landlock's scope */
    struct sockaddr_un ud = {.sun_family = AF_UNIX};
    strncpy(ud.sun_path + 1, argv[6], sizeof ud.sun_path - 2);
    int sd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct iovec dio = {"x", 1};
    struct msghdr dm = {.msg_name = &ud, .msg_iov = &dio, .msg_iovlen = 1,
                        .msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                                   strlen(argv[6]))};
    TRY("unix_abstract_datagram", sendmsg(sd, &dm, 0));
    /* UDP: a socket is given (Open MPI makes one for interface ioctls); nothing leaves */
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    TRY("udp_socket", u);
    TRY("udp_sendto", sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
    struct iovec uio = {"x", 1};
    struct msghdr um = {.msg_name = &a, .msg_namelen = sizeof a, .msg_iov = &uio, .msg_iovlen = 1};
    TRY("udp_sendmsg", sendmsg(u, &um, 0));  /* the netlink socket given takes no such address */
    TRY("udp_connect", connect(u, (struct sockaddr *)&a, sizeof a));
    TRY("icmp_socket", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
    struct sockaddr_in far = at("127.0.0.2", pmix);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    TRY("tcp_fastopen_sendto", sendto(t, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&far, sizeof far));
    struct iovec io = {"x", 1};
    struct msghdr m = {.msg_name = &far, .msg_namelen = sizeof far, .msg_iov = &io, .msg_iovlen = 1};
    TRY("tcp_fastopen_sendmsg", sendmsg(t, &m, MSG_FASTOPEN));
    int one = 1;
    TRY("tcp_fastopen_connect", setsockopt(t, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one));
    TRY("mptcp_socket", socket(AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */));
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    TRY("io_uring", syscall(SYS_io_uring_setup, 4, &p));
    TRY("raw_socket", socket(AF_INET, SOCK_RAW, IPPROTO_TCP));
    TRY("packet_socket", socket(AF_PACKET, SOCK_RAW, 0));
    TRY("netlink_socket", socket(AF_NETLINK, SOCK_RAW, 0));
    TRY("sctp_socket", socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
#ifdef __x86_64__
    TRY("x32_socket", syscall(41 | 0x40000000, AF_INET, SOCK_DGRAM, 0));
#endif
    /* bind and listen: the reserved ports and port 0 only */
    int b = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in mine = at("127.0.0.1", own);
    TRY("bind_reserved", bind(b, (struct sockaddr *)&mine, sizeof mine));
    TRY("listen_reserved", listen(b, 4));
    int b0 = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in any = at("127.0.0.1", 0);
    TRY("bind_port_0", bind(b0, (struct sockaddr *)&any, sizeof any));
    TRY("listen_port_0", listen(b0, 4));
    int b2 = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in theirs = at("127.0.0.1", other + 1);
    TRY("bind_other_port", bind(b2, (struct sockaddr *)&theirs, sizeof theirs));
    /* the supervisor (the run's init, PID 1 here) can be neither stopped nor read */
    TRY("ptrace_supervisor", ptrace(PTRACE_ATTACH, 1, NULL, NULL));
    char byte;
    struct iovec mine_io = {&byte, 1}, its_io = {(void *)4096, 1};
    TRY("read_supervisor", process_vm_readv(1, &mine_io, 1, &its_io, 1, 0));
    TRY("kill_supervisor", kill(1, SIGKILL));
    usleep(100000);
    TRY("after_kill_other_address", tcp_to("127.0.0.2", pmix));
    TRY("after_kill_pmix", tcp_to("127.0.0.1", pmix));
    /* the race: whatever the address says after the check, only the checked one counts */
    int connected = 0, refused = 0, elsewhere = 0;
    shared = at("127.0.0.1", pmix);
    pthread_t flipper;
    pthread_create(&flipper, NULL, flip, NULL);
    /* 300 tries, and until the check has seen both addresses a few times (the threads share a CPU or two
       with other work: how they interleave is the scheduler's) */
    for (int i = 0; i < 20000 && (i < 300 || connected < 10 || refused < 10); i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&shared, sizeof shared) == 0) {
            struct sockaddr_in to;
            socklen_t tl = sizeof to;
            getpeername(c, (struct sockaddr *)&to, &tl);
            if (to.sin_addr.s_addr == htonl(INADDR_LOOPBACK)) connected++;
            else elsewhere++;
        } else if (errno == EACCES) {
            refused++;
        } else {
            elsewhere++;
        }
        close(c);
    }
    racing = 0;
    pthread_join(flipper, NULL);
    printf("race connected %d refused %d elsewhere %d\n", connected, refused, elsewhere);
    /* a peer that never answers holds no other call */
    int first = tcp_to("127.0.0.3", hang_port);  /* fills its queue */
    pthread_t hanger;
    pthread_create(&hanger, NULL, hang, NULL);
    usleep(300000);
    double t0 = now();
    int again = tcp_to("127.0.0.1", pmix);
    printf("while_pending %s %.3f\n", again < 0 ? strerrorname_np(errno) : "OK", now() - t0);
    (void)first;
    fflush(stdout);
    _exit(0);  /* the hanging thread goes with the run */
}
