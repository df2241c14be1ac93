/* glnet: run one MPI rank so that its network reaches its node's PMIx server and its
 * job's peers, and nothing else.  A prototype of what gl-runner would do for an MPI run
 * (issue 53); bench/mpinet/README.md has the measurements.
 *
 *   glnet [-L] [-S] [-B] [-p HOST:PORT] [-a PEER]... [-r LO-HI] [-v] -- PROGRAM ARGS...
 *
 *   -L  Landlock (ABI >= 4): TCP connect only to the PMIx port and to ports LO-HI, TCP
 *       bind only to LO-HI (and port 0, an ephemeral source port); ABI >= 6 also scopes
 *       abstract unix sockets and signals to the rank.  Alone it is not enough: rules are
 *       by port, not address, UDP is not covered, and TCP fast open (sendto/sendmsg with
 *       MSG_FASTOPEN) and MPTCP sockets bypass the TCP rules (measured on 6.18).
 *   -S  seccomp: socket() only AF_UNIX and TCP (AF_INET/AF_INET6, SOCK_STREAM, protocol
 *       0 or 6): no UDP, raw, netlink, packet, SCTP or MPTCP socket; no io_uring; no
 *       MSG_FASTOPEN; no sendto() with an address; x86_64 only (i386 and x32 refused).
 *   -B  broker (implies -S): connect() and bind() are performed by this process (the
 *       supervisor, outside the filter) on the rank's own socket (pidfd_getfd) with the
 *       address it read and checked, so a thread that rewrites the address afterwards
 *       changes nothing: connect only to HOST:PORT (PMIx) or to a PEER on a port in LO-HI,
 *       bind only to LO-HI or 0; AF_UNIX connect and bind refused (a pathname would be
 *       resolved in the supervisor's file system).  socket(AF_INET, SOCK_DGRAM), which Open
 *       MPI makes only for its SIOCGIF* ioctls, gets a NETLINK_ROUTE socket instead: it
 *       answers those ioctls and sends nothing; SIOCGIFADDR/NETMASK/BRDADDR/DSTADDR, which
 *       only an AF_INET socket answers, are answered by the supervisor.  Needs Linux 5.14
 *       (SECCOMP_ADDFD_FLAG_SEND; pidfd_getfd is 5.6).
 *   -p  the PMIx server (default: from PMIX_SERVER_URI41, tcp4://HOST:PORT)
 *   -a  a peer address (the step's nodes' addresses on the MPI network), repeatable
 *   -r  the job's port range (SLURM_STEP_RESV_PORTS; Open MPI's btl_tcp_port_min_v4 and
 *       btl_tcp_port_range_v4, and the same for v6)
 * Prototype limits: the supervisor answers one request at a time (a blocking connect to
 * a peer that does not answer holds the others); IPv6 peers are not supported.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Landlock, from the 6.7+ uapi (Debian 12's headers are older) */
struct ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct ll_net_port_attr { uint64_t allowed_access, port; } __attribute__((packed));
#define LL_NET_BIND (1ULL << 0)
#define LL_NET_CONNECT (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_RULE_NET_PORT 2
#define LL_CREATE_VERSION (1U << 0)

static int verbose;
#define VLOG(...) do { if (verbose) fprintf(stderr, "glnet: " __VA_ARGS__); } while (0)
static void die(const char *m) { fprintf(stderr, "glnet: %s: %s\n", m, strerror(errno)); exit(126); }

static struct in_addr pmix_addr, peers[16];
static int pmix_port, npeers, lo_port, hi_port;

static int landlock(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
    if (abi < 4) { fprintf(stderr, "glnet: Landlock ABI %ld has no TCP rules\n", abi); return -1; }
    struct ll_ruleset_attr a = { .handled_access_net = LL_NET_BIND | LL_NET_CONNECT };
    size_t sz = 16;
    if (abi >= 6) { a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL; sz = sizeof a; }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &a, sz, 0);
    if (rs < 0) die("landlock_create_ruleset");
    struct ll_net_port_attr r = { LL_NET_CONNECT, (uint64_t)pmix_port };
    if (pmix_port && syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &r, 0)) die("landlock pmix");
    /* port 0: an ephemeral source port (Open MPI binds its outgoing socket to the
     * interface's address, port 0, before it connects) */
    r.allowed_access = LL_NET_BIND; r.port = 0;
    if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &r, 0)) die("landlock port 0");
    for (int p = lo_port; p && p <= hi_port; p++) {
        r.allowed_access = LL_NET_BIND | LL_NET_CONNECT; r.port = (uint64_t)p;
        if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &r, 0)) die("landlock port");
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0)) die("landlock_restrict_self");
    close(rs);
    VLOG("Landlock ABI %ld: connect %d,%d-%d bind %d-%d%s\n", abi, pmix_port, lo_port, hi_port,
         lo_port, hi_port, abi >= 6 ? ", abstract unix + signals scoped" : "");
    return (int)abi;
}

/* -- a tiny BPF assembler with forward labels -- */
static struct sock_filter prog[128];
static int n, jt_lab[128], jf_lab[128], lab_at[32];
enum { L_ALLOW = 1, L_INET, L_DGRAM, L_DENY_SOCK, L_NEXT1, L_NEXT2, L_NEXT3, L_NEXT4, L_NEXT5,
       L_NEXT6, L_NEXT7, L_NEXT8, L_NOTIF, L_ERRNO_PERM, L_NEXT9, L_NEXT10, L_NEXT11 };
static void st(uint16_t code, uint32_t k) { prog[n] = (struct sock_filter)BPF_STMT(code, k); jt_lab[n] = jf_lab[n] = 0; n++; }
static void jeq(uint32_t k, int jt, int jf) {  /* jt/jf: label ids, 0 = next */
    prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0);
    jt_lab[n] = jt; jf_lab[n] = jf; n++;
}
static void jset(uint32_t k, int jt, int jf) {
    prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0);
    jt_lab[n] = jt; jf_lab[n] = jf; n++;
}
static void jge(uint32_t k, int jt, int jf) {
    prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, k, 0, 0);
    jt_lab[n] = jt; jf_lab[n] = jf; n++;
}
static void label(int l) { lab_at[l] = n; }
static void resolve(void) {
    for (int i = 0; i < n; i++) {
        if (jt_lab[i]) prog[i].jt = (uint8_t)(lab_at[jt_lab[i]] - i - 1);
        if (jf_lab[i]) prog[i].jf = (uint8_t)(lab_at[jf_lab[i]] - i - 1);
    }
}
#define ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define NR offsetof(struct seccomp_data, nr)
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (e))

static int seccomp_filter(int broker) {
    n = 0;
    st(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    jeq(AUDIT_ARCH_X86_64, L_NEXT1, 0);
    st(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    label(L_NEXT1);
    st(BPF_LD | BPF_W | BPF_ABS, NR);
    jge(0x40000000, L_ERRNO_PERM, 0);                   /* x32 */
    jeq(SYS_io_uring_setup, L_ERRNO_PERM, 0);
    jeq(SYS_socket, 0, L_NEXT2);
    /* socket(domain, type, protocol) */
    st(BPF_LD | BPF_W | BPF_ABS, ARG(0));
    jeq(AF_UNIX, L_ALLOW, 0);
    jeq(AF_INET, L_INET, 0);
    jeq(AF_INET6, L_INET, L_DENY_SOCK);
    label(L_INET);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(1));
    st(BPF_ALU | BPF_AND | BPF_K, 0xf);
    jeq(SOCK_STREAM, 0, L_DGRAM);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(2));
    jeq(0, L_ALLOW, 0);
    jeq(IPPROTO_TCP, L_ALLOW, L_DENY_SOCK);
    label(L_DGRAM);
    jeq(SOCK_DGRAM, 0, L_DENY_SOCK);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(2));               /* UDP only, not ICMP ping */
    jeq(0, broker ? L_NOTIF : L_DENY_SOCK, 0);
    jeq(IPPROTO_UDP, broker ? L_NOTIF : L_DENY_SOCK, L_DENY_SOCK);
    label(L_DENY_SOCK);
    st(BPF_RET | BPF_K, RET_ERRNO(EACCES));
    label(L_NEXT2);
    jeq(SYS_socketpair, 0, L_NEXT3);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(0));
    jeq(AF_UNIX, L_ALLOW, L_ERRNO_PERM);
    label(L_NEXT3);
    jeq(SYS_sendto, 0, L_NEXT4);                        /* no address, no fast open */
    st(BPF_LD | BPF_W | BPF_ABS, ARG(3));
    jset(MSG_FASTOPEN, L_ERRNO_PERM, 0);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(4));
    jeq(0, 0, L_ERRNO_PERM);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(4) + 4);
    jeq(0, L_ALLOW, L_ERRNO_PERM);
    label(L_NEXT4);
    st(BPF_LD | BPF_W | BPF_ABS, NR);
    jeq(SYS_sendmsg, 0, L_NEXT5);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(2));
    jset(MSG_FASTOPEN, L_ERRNO_PERM, L_ALLOW);
    label(L_NEXT5);
    jeq(SYS_sendmmsg, 0, L_NEXT6);
    st(BPF_LD | BPF_W | BPF_ABS, ARG(3));
    jset(MSG_FASTOPEN, L_ERRNO_PERM, L_ALLOW);
    label(L_NEXT6);
    if (broker) {
        jeq(SYS_connect, L_NOTIF, 0);
        jeq(SYS_bind, L_NOTIF, 0);
        jeq(SYS_ioctl, 0, L_ALLOW);
        st(BPF_LD | BPF_W | BPF_ABS, ARG(1));
        jeq(SIOCGIFADDR, L_NOTIF, 0);
        jeq(SIOCGIFNETMASK, L_NOTIF, 0);
        jeq(SIOCGIFBRDADDR, L_NOTIF, 0);
        jeq(SIOCGIFDSTADDR, L_NOTIF, L_ALLOW);
        label(L_NOTIF);
        st(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
    }
    label(L_ALLOW);
    st(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    label(L_ERRNO_PERM);
    st(BPF_RET | BPF_K, RET_ERRNO(EPERM));
    resolve();
    struct sock_fprog fp = { (unsigned short)n, prog };
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                          broker ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fp);
    if (fd < 0) die("seccomp");
    return fd;
}

/* -- the broker: the supervisor's side -- */
static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len) {
    struct iovec l = { buf, len }, r = { (void *)addr, len };
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}
static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len) {
    struct iovec l = { (void *)buf, len }, r = { (void *)addr, len };
    return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}
static int target_fd(pid_t pid, int fd) {
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) return -1;
    int f = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    close(pfd);
    return f;
}
static int allowed_connect(struct in_addr a, int port) {
    if (pmix_port && a.s_addr == pmix_addr.s_addr && port == pmix_port) return 1;
    if (port < lo_port || port > hi_port) return 0;
    for (int i = 0; i < npeers; i++) if (peers[i].s_addr == a.s_addr) return 1;
    return 0;
}
/* the IPv4 address and port of an AF_INET or v4-mapped AF_INET6 sockaddr; -1 if neither */
static int v4_of(const struct sockaddr_storage *ss, socklen_t len, struct in_addr *a, int *port) {
    if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *s = (const void *)ss; *a = s->sin_addr; *port = ntohs(s->sin_port); return 0;
    }
    if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *s = (const void *)ss;
        *port = ntohs(s->sin6_port);
        if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) { memcpy(a, &s->sin6_addr.s6_addr[12], 4); return 0; }
        if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr)) { a->s_addr = 0; return 0; }
    }
    return -1;
}

static int broker_one(int lfd, int ifsock) {
    struct seccomp_notif req; struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) return errno == EINTR || errno == ENOENT ? 0 : -1;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id; resp.error = -EACCES;
    pid_t pid = (pid_t)req.pid;
    int nr = req.data.nr;
    if (nr == SYS_socket) {                             /* UDP: a NETLINK_ROUTE socket instead */
        int flags = (int)req.data.args[1] & (SOCK_CLOEXEC | SOCK_NONBLOCK);
        int s = socket(AF_NETLINK, SOCK_DGRAM | flags, NETLINK_ROUTE);
        struct seccomp_notif_addfd add = { .id = req.id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)s,
                                           .newfd_flags = (flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0 };
        int r = s < 0 ? -1 : ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
        VLOG("pid %d socket(INET, DGRAM) -> netlink fd %d\n", pid, r);
        if (s >= 0) close(s);
        if (r >= 0) return 0;                           /* answered by ADDFD_FLAG_SEND */
        resp.error = -EACCES;
    } else if (nr == SYS_ioctl) {                        /* SIOCGIF{ADDR,NETMASK,...}: read-only */
        struct ifreq ifr;
        if (read_mem(pid, req.data.args[2], &ifr, sizeof ifr) == 0) {
            ifr.ifr_name[IFNAMSIZ - 1] = 0;
            if (ioctl(ifsock, (unsigned long)req.data.args[1], &ifr) == 0) {
                if (write_mem(pid, req.data.args[2], &ifr, sizeof ifr) == 0) resp.error = 0;
                else resp.error = -EFAULT;
            } else resp.error = -errno;
            VLOG("pid %d ioctl(%#lx, %s) -> %d\n", pid, (unsigned long)req.data.args[1], ifr.ifr_name, resp.error);
        } else resp.error = -EFAULT;
    } else if (nr == SYS_connect || nr == SYS_bind) {
        struct sockaddr_storage ss; memset(&ss, 0, sizeof ss);
        socklen_t len = (socklen_t)req.data.args[2];
        if (len > sizeof ss) len = sizeof ss;
        struct in_addr a; int port = -1, ok = 0, fd = -1;
        if (len < 2 || read_mem(pid, req.data.args[1], &ss, len)) resp.error = -EFAULT;
        else if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id)) return 0;
        else if ((fd = target_fd(pid, (int)req.data.args[0])) < 0) resp.error = -EBADF;
        else {
            int type = 0; socklen_t tl = sizeof type;
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
            if (ss.ss_family == AF_UNSPEC && nr == SYS_connect) ok = 1;     /* disconnect */
            else if (type == SOCK_STREAM && v4_of(&ss, len, &a, &port) == 0)
                ok = nr == SYS_connect ? allowed_connect(a, port)
                                       : port == 0 || (port >= lo_port && port <= hi_port);
            if (ok) {
                int r = nr == SYS_connect ? connect(fd, (struct sockaddr *)&ss, len)
                                          : bind(fd, (struct sockaddr *)&ss, len);
                resp.error = r < 0 ? -errno : 0;
            }
            char h[INET6_ADDRSTRLEN] = "?";
            if (port >= 0) inet_ntop(AF_INET, &a, h, sizeof h);
            VLOG("pid %d %s(fam %d %s:%d) %s -> %d\n", pid, nr == SYS_connect ? "connect" : "bind",
                 ss.ss_family, h, port, ok ? "allowed" : "REFUSED", resp.error);
            close(fd);
        }
    }
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) return -1;
    return 0;
}

static int broker_loop(int lfd, pid_t child) {
    int ifsock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);  /* the supervisor's own: never lent */
    for (;;) {
        struct pollfd p = { lfd, POLLIN, 0 };
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR) continue;
        if (p.revents & POLLIN) { if (broker_one(lfd, ifsock) < 0) break; continue; }
        if (p.revents & (POLLHUP | POLLERR)) break;      /* every process of the filter is gone */
    }
    int st;
    if (waitpid(child, &st, 0) < 0) return 125;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void send_fd(int sock, int fd) {
    char c = 0; struct iovec io = { &c, 1 };
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    if (sendmsg(sock, &m, 0) < 0) die("sendmsg");
}
static int recv_fd(int sock) {
    char c; struct iovec io = { &c, 1 };
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
    if (recvmsg(sock, &m, 0) <= 0) return -1;
    int fd; memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}

int main(int argc, char **argv) {
    int use_ll = 0, use_sc = 0, use_br = 0, opt;
    while ((opt = getopt(argc, argv, "+LSBp:a:r:v")) != -1) {
        switch (opt) {
        case 'L': use_ll = 1; break;
        case 'S': use_sc = 1; break;
        case 'B': use_br = use_sc = 1; break;
        case 'p': { char h[64]; if (sscanf(optarg, "%63[^:]:%d", h, &pmix_port) != 2 || !inet_aton(h, &pmix_addr)) { fprintf(stderr, "glnet: -p HOST:PORT\n"); return 2; } break; }
        case 'a': if (npeers == 16 || !inet_aton(optarg, &peers[npeers++])) { fprintf(stderr, "glnet: -a ADDR\n"); return 2; } break;
        case 'r': if (sscanf(optarg, "%d-%d", &lo_port, &hi_port) != 2) { fprintf(stderr, "glnet: -r LO-HI\n"); return 2; } break;
        case 'v': verbose = 1; break;
        default: return 2;
        }
    }
    if (optind >= argc) { fprintf(stderr, "usage: glnet [-L] [-S] [-B] [-p H:P] [-a PEER].. [-r LO-HI] -- PROG ARGS\n"); return 2; }
    if (!pmix_port) {                                   /* tcp4://127.0.0.1:PORT from the stepd */
        const char *u = getenv("PMIX_SERVER_URI41"), *t = u ? strstr(u, "tcp4://") : NULL;
        char h[64];
        if (t && sscanf(t + 7, "%63[^:]:%d", h, &pmix_port) == 2) inet_aton(h, &pmix_addr);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
    int sv[2] = { -1, -1 };
    if (use_br && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) die("socketpair");
    pid_t child = use_br ? fork() : 0;
    if (child < 0) die("fork");
    if (child == 0) {
        if (use_ll && landlock() < 0) return 126;
        if (use_sc) {
            int lfd = seccomp_filter(use_br);
            if (use_br) { send_fd(sv[1], lfd); close(lfd); }
        }
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "glnet: exec %s: %s\n", argv[optind], strerror(errno));
        return 127;
    }
    close(sv[1]);
    signal(SIGPIPE, SIG_IGN);
    int lfd = recv_fd(sv[0]);
    if (lfd < 0) { int st; waitpid(child, &st, 0); return 126; }
    return broker_loop(lfd, child);
}
