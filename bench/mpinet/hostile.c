/* What a confined rank may try besides a plain connect(): each line says whether it got
 * through.  10.99.0.2:9999 is the test's outside host (TCP and UDP listeners);
 * @glmpi-abstract and @glmpi-abstractd are abstract unix sockets another user holds in
 * the node's network namespace (matrix.sh starts them).  With an argument, the last
 * test (killing the supervisor) is skipped. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define TRY(what, expr)                                                                 \
    do {                                                                                \
        errno = 0;                                                                      \
        long r_ = (long)(expr);                                                         \
        printf("%-46s %s\n", what, r_ < 0 ? strerror(errno) : "GOT THROUGH");          \
    } while (0)

static socklen_t abstract(struct sockaddr_un *a, const char *name) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    strcpy(a->sun_path + 1, name);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

static int mptcp_connect(const struct sockaddr_in *to) {
    int s = socket(AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */);
    return s < 0 ? -1 : connect(s, (const void *)to, sizeof *to);
}

int main(int argc, char **argv) {
    (void)argv;
    struct sockaddr_in ext;
    memset(&ext, 0, sizeof ext);
    ext.sin_family = AF_INET;
    ext.sin_port = htons(9999);
    inet_pton(AF_INET, "10.99.0.2", &ext.sin_addr);
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    TRY("io_uring_setup", syscall(SYS_io_uring_setup, 4, &p));
    int t = socket(AF_INET, SOCK_STREAM, 0);
    TRY("sendto(MSG_FASTOPEN) to 10.99.0.2:9999", sendto(t, "x", 1, MSG_FASTOPEN, (void *)&ext, sizeof ext));
    struct iovec io = { "x", 1 };
    struct msghdr m = { .msg_name = &ext, .msg_namelen = sizeof ext, .msg_iov = &io, .msg_iovlen = 1 };
    int t2 = socket(AF_INET, SOCK_STREAM, 0);
    TRY("sendmsg(MSG_FASTOPEN) to 10.99.0.2:9999", sendmsg(t2, &m, MSG_FASTOPEN));
    int one = 1, t3 = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(t3, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
    TRY("TCP_FASTOPEN_CONNECT + connect 10.99.0.2:9999", connect(t3, (void *)&ext, sizeof ext));
    TRY("MPTCP socket + connect 10.99.0.2:9999", mptcp_connect(&ext));
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    TRY("UDP socket: sendto 10.99.0.2:9999", sendto(u, "x", 1, 0, (void *)&ext, sizeof ext));
    TRY("UDP socket: sendmsg 10.99.0.2:9999", sendmsg(u, &m, 0));
    TRY("UDP socket: connect 10.99.0.2:9999", connect(u, (void *)&ext, sizeof ext));
    TRY("ICMP ping socket", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
    TRY("raw socket", socket(AF_INET, SOCK_RAW, IPPROTO_UDP));
    TRY("packet socket", socket(AF_PACKET, SOCK_RAW, 0));
    TRY("netlink socket", socket(AF_NETLINK, SOCK_RAW, 0));
    TRY("SCTP socket", socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
    TRY("x32 socket()", syscall(41 | 0x40000000, AF_INET, SOCK_DGRAM, 0));
    struct sockaddr_un a;
    socklen_t al = abstract(&a, "glmpi-abstract");
    int x = socket(AF_UNIX, SOCK_STREAM, 0);
    TRY("connect abstract unix @glmpi-abstract", connect(x, (void *)&a, al));
    al = abstract(&a, "glmpi-abstractd");
    int xd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct msghdr md = { .msg_name = &a, .msg_namelen = al, .msg_iov = &io, .msg_iovlen = 1 };
    TRY("sendmsg abstract unix dgram @glmpi-abstractd", sendmsg(xd, &md, 0));
    if (argc < 2) {
        TRY("kill(parent, SIGKILL) (the supervisor)", kill(getppid(), SIGKILL));
        usleep(100000);
        int t4 = socket(AF_INET, SOCK_STREAM, 0);
        TRY("connect 10.99.0.2:9999 after that", connect(t4, (void *)&ext, sizeof ext));
    }
    return 0;
}
