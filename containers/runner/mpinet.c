/* mpinet: what an MPI rank's run may reach on the node's network ("net_mpi 1").
 *
 * An MPI rank's container shares its node's network namespace (a rank must reach its
 * slurmstepd's PMIx server on the node's loopback and its step's other ranks over
 * TCP); this confines the run to exactly those (bench/results/mpinet has the designs
 * measured, of which this one alone reached nothing else in every combination):
 *   - a seccomp filter, installed in the program just before exec: socket() only
 *     AF_UNIX, and AF_INET/AF_INET6 TCP (no UDP, raw, packet, netlink, SCTP or MPTCP
 *     socket); no io_uring; no MSG_FASTOPEN, no TCP_FASTOPEN_CONNECT, no sendto() with
 *     an address; socketpair() only AF_UNIX; the native CPU's system calls only (x32
 *     and i386 refused). connect(), bind(), listen(), socket(AF_INET*, SOCK_DGRAM) and
 *     four SIOCGIF ioctls go to the supervisor (user notification);
 *   - the supervisor, the run's init (PID 1 of the run's namespaces, outside the filter;
 *     the program cannot ptrace it, having none of its capabilities, nor kill it, being
 *     in its PID namespace): it reads the address once, checks it, and performs the call
 *     itself on the program's own socket (pidfd_getfd), so a thread that rewrites the
 *     address after the check changes nothing. Allowed: connect to the stepd's PMIx
 *     address:port (the runner's PMIX_SERVER_URI41, else URI4, URI3), or to a net_peer
 *     of the request on a port of the step's reservation (SLURM_STEP_RESV_PORTS); bind
 *     to such a port or port 0; listen on a socket bound to such a port. Everything
 *     else is EACCES. A blocking connect is made non-blocking here and answered when it
 *     completes, so one peer that does not answer holds no other call. Open MPI's UDP
 *     socket (made only for interface ioctls) is answered with a NETLINK_ROUTE socket,
 *     which answers those ioctls and sends nothing; the four ioctls only an AF_INET
 *     socket answers, the supervisor answers. AF_UNIX connect and bind are refused (the
 *     supervisor would resolve the path with its own credentials). If the supervisor
 *     dies, the run's PID namespace dies with it: nothing is left unconfined;
 *   - Landlock, where the kernel has network rules (ABI >= 4): TCP bind and connect only
 *     to those ports, as a second layer; with ABI >= 6 also abstract unix sockets and
 *     signals scoped to the run (without it a datagram can still reach an abstract unix
 *     socket of the node).
 * Needs Linux >= 5.14 (SECCOMP_ADDFD_FLAG_SEND; pidfd_getfd is 5.6); x86_64 or aarch64.
 */
#define _GNU_SOURCE
#include "mpinet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of a thread, not only of a leader */
#endif
#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif

/* Landlock, from the 6.7+ uapi (Debian 12's headers are older). */
struct ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct ll_net_port_attr { uint64_t allowed_access, port; } __attribute__((packed));
#define LL_NET_BIND (1ULL << 0)
#define LL_NET_CONNECT (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_RULE_NET_PORT 2
#define LL_CREATE_VERSION (1U << 0)

#if defined(__x86_64__)
#define NET_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NET_ARCH AUDIT_ARCH_AARCH64
#endif

int net_supported(void) {
#ifdef NET_ARCH
    return 1;
#else
    return 0;
#endif
}

/* --- what is allowed ------------------------------------------------------------ */

/* "pmix-server.<pid>;tcp4://127.0.0.1:<port>": the server's address and port. */
static int parse_uri(struct net_allow *a, const char *uri) {
    const char *t = uri ? strstr(uri, "tcp4://") : NULL;
    const char *colon = t ? strchr(t + 7, ':') : NULL;
    char host[16];
    if (!colon || colon - (t + 7) >= (long)sizeof host) return -1;
    memcpy(host, t + 7, (size_t)(colon - (t + 7)));
    host[colon - (t + 7)] = 0;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || port <= 0 || port > 65535 ||
        inet_pton(AF_INET, host, &a->pmix_addr) != 1)
        return -1;
    a->pmix_port = (int)port;
    return 0;
}

void net_allow_from_env(struct net_allow *a) {
    memset(a, 0, sizeof *a);
    static const char *uris[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3"};
    for (int i = 0; i < 3; i++)
        if (parse_uri(a, getenv(uris[i])) == 0) break;
    const char *p = getenv("SLURM_STEP_RESV_PORTS");  /* "20001-20002", "20001", "1-3,7" */
    while (p && *p && a->nranges < NET_MAXRANGES) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p) break;
        if (*end == '-') { p = end + 1; hi = strtol(p, &end, 10); if (end == p) break; }
        if (lo > 0 && lo <= hi && hi <= 65535) {
            a->lo[a->nranges] = (int)lo;
            a->hi[a->nranges++] = (int)hi;
        }
        p = *end == ',' ? end + 1 : "";
    }
}

int net_add_peer(struct net_allow *a, const char *text) {
    struct in_addr ad;
    if (a->npeers == NET_MAXPEERS || inet_pton(AF_INET, text, &ad) != 1 ||
        ad.s_addr == htonl(INADDR_ANY) || ad.s_addr == htonl(INADDR_BROADCAST))
        return -1;
    a->peers[a->npeers++] = ad;
    return 0;
}

static int reserved(const struct net_allow *a, int port) {
    for (int i = 0; i < a->nranges; i++)
        if (port >= a->lo[i] && port <= a->hi[i]) return 1;
    return 0;
}

static int may_connect(const struct net_allow *a, struct in_addr ad, int port) {
    if (a->pmix_port && ad.s_addr == a->pmix_addr.s_addr && port == a->pmix_port) return 1;
    if (!reserved(a, port)) return 0;
    for (int i = 0; i < a->npeers; i++)
        if (a->peers[i].s_addr == ad.s_addr) return 1;
    return 0;
}

/* The IPv4 address and port of an AF_INET, v4-mapped or unspecified AF_INET6
   address; -1 for anything else (other IPv6 addresses: refused). */
static int v4_of(const struct sockaddr_storage *ss, socklen_t len, struct in_addr *ad, int *port) {
    if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *s = (const void *)ss;
        *ad = s->sin_addr;
        *port = ntohs(s->sin_port);
        return 0;
    }
    if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *s = (const void *)ss;
        *port = ntohs(s->sin6_port);
        if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) { memcpy(ad, &s->sin6_addr.s6_addr[12], 4); return 0; }
        if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr)) { ad->s_addr = 0; return 0; }
    }
    return -1;
}

/* --- in the program: Landlock, then the filter ------------------------------------- */

static int landlock(const struct net_allow *a) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
    if (abi < 4) return 0;  /* no network rules here (or no Landlock): the filter alone */
    struct ll_ruleset_attr attr = {.handled_access_net = LL_NET_BIND | LL_NET_CONNECT};
    size_t size = offsetof(struct ll_ruleset_attr, scoped);
    if (abi >= 6) { attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL; size = sizeof attr; }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) return -1;
    struct ll_net_port_attr rule = {LL_NET_BIND, 0};  /* port 0: an ephemeral source port */
    int bad = (int)syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &rule, 0);
    if (a->pmix_port) {
        rule = (struct ll_net_port_attr){LL_NET_CONNECT, (uint64_t)a->pmix_port};
        bad |= (int)syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &rule, 0);
    }
    for (int i = 0; i < a->nranges; i++)
        for (int p = a->lo[i]; p <= a->hi[i]; p++) {
            rule = (struct ll_net_port_attr){LL_NET_BIND | LL_NET_CONNECT, (uint64_t)p};
            bad |= (int)syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &rule, 0);
        }
    if (bad || syscall(SYS_landlock_restrict_self, rs, 0)) { close(rs); return -1; }
    close(rs);
    return abi >= 6 ? 6 : 4;
}

/* A small BPF assembler: jumps to labels, resolved at the end. */
enum { L_ALLOW = 1, L_EPERM, L_EACCES, L_NOTIF, L_KILL, L_SOCKET, L_INET, L_STREAM, L_DGRAM,
       L_PAIR, L_SENDTO, L_SENDMSG, L_SENDMMSG, L_SOCKOPT, L_IOCTL, L_COUNT };
#define MAXINSN 96
static struct sock_filter insn[MAXINSN];
static unsigned char jt_to[MAXINSN], jf_to[MAXINSN];
static int label_at[L_COUNT], ninsn;

static void op(uint16_t code, uint32_t k) {
    insn[ninsn] = (struct sock_filter)BPF_STMT(code, k);
    jt_to[ninsn] = jf_to[ninsn] = 0;
    ninsn++;
}
static void jump(uint16_t how, uint32_t k, int jt, int jf) {  /* label ids; 0: next */
    insn[ninsn] = (struct sock_filter)BPF_JUMP(BPF_JMP | how | BPF_K, k, 0, 0);
    jt_to[ninsn] = (unsigned char)jt;
    jf_to[ninsn] = (unsigned char)jf;
    ninsn++;
}
static void label(int l) { label_at[l] = ninsn; }
#define LD(off) op(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(off))
#define ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i))  /* low word (little endian) */
#define RET(v) op(BPF_RET | BPF_K, (v))

static int filter(void) {
#ifndef NET_ARCH
    errno = ENOSYS;
    return -1;
#else
    ninsn = 0;
    LD(offsetof(struct seccomp_data, arch));
    jump(BPF_JEQ, NET_ARCH, 0, L_KILL);
    LD(offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
    jump(BPF_JGE, 0x40000000, L_EPERM, 0);  /* x32 */
#endif
    jump(BPF_JEQ, SYS_io_uring_setup, L_EPERM, 0);
    jump(BPF_JEQ, SYS_socket, L_SOCKET, 0);
    jump(BPF_JEQ, SYS_socketpair, L_PAIR, 0);
    jump(BPF_JEQ, SYS_connect, L_NOTIF, 0);
    jump(BPF_JEQ, SYS_bind, L_NOTIF, 0);
    jump(BPF_JEQ, SYS_listen, L_NOTIF, 0);
    jump(BPF_JEQ, SYS_sendto, L_SENDTO, 0);
    jump(BPF_JEQ, SYS_sendmsg, L_SENDMSG, 0);
    jump(BPF_JEQ, SYS_sendmmsg, L_SENDMMSG, 0);
    jump(BPF_JEQ, SYS_setsockopt, L_SOCKOPT, 0);
    jump(BPF_JEQ, SYS_ioctl, L_IOCTL, L_ALLOW);
    label(L_SOCKET);  /* socket(domain, type, protocol) */
    LD(ARG(0));
    jump(BPF_JEQ, AF_UNIX, L_ALLOW, 0);
    jump(BPF_JEQ, AF_INET, L_INET, 0);
    jump(BPF_JEQ, AF_INET6, L_INET, L_EACCES);
    label(L_INET);
    LD(ARG(1));
    op(BPF_ALU | BPF_AND | BPF_K, 0xf);  /* the type without SOCK_NONBLOCK, SOCK_CLOEXEC */
    jump(BPF_JEQ, SOCK_STREAM, L_STREAM, 0);
    jump(BPF_JEQ, SOCK_DGRAM, L_DGRAM, L_EACCES);
    label(L_STREAM);
    LD(ARG(2));
    jump(BPF_JEQ, 0, L_ALLOW, 0);
    jump(BPF_JEQ, IPPROTO_TCP, L_ALLOW, L_EACCES);
    label(L_DGRAM);  /* UDP (not ICMP): a netlink socket instead, from the supervisor */
    LD(ARG(2));
    jump(BPF_JEQ, 0, L_NOTIF, 0);
    jump(BPF_JEQ, IPPROTO_UDP, L_NOTIF, L_EACCES);
    label(L_PAIR);
    LD(ARG(0));
    jump(BPF_JEQ, AF_UNIX, L_ALLOW, L_EPERM);
    label(L_SENDTO);  /* sendto(fd, buf, len, flags, addr, addrlen) */
    LD(ARG(3));
    jump(BPF_JSET, MSG_FASTOPEN, L_EPERM, 0);
    LD(ARG(4));
    jump(BPF_JEQ, 0, 0, L_EPERM);
    LD(ARG(4) + 4);
    jump(BPF_JEQ, 0, L_ALLOW, L_EPERM);
    label(L_SENDMSG);
    LD(ARG(2));
    jump(BPF_JSET, MSG_FASTOPEN, L_EPERM, L_ALLOW);
    label(L_SENDMMSG);
    LD(ARG(3));
    jump(BPF_JSET, MSG_FASTOPEN, L_EPERM, L_ALLOW);
    label(L_SOCKOPT);  /* setsockopt(fd, level, name, ...) */
    LD(ARG(1));
    jump(BPF_JEQ, IPPROTO_TCP, 0, L_ALLOW);
    LD(ARG(2));
    jump(BPF_JEQ, TCP_FASTOPEN_CONNECT, L_EPERM, L_ALLOW);
    label(L_IOCTL);
    LD(ARG(1));
    jump(BPF_JEQ, SIOCGIFADDR, L_NOTIF, 0);
    jump(BPF_JEQ, SIOCGIFNETMASK, L_NOTIF, 0);
    jump(BPF_JEQ, SIOCGIFBRDADDR, L_NOTIF, 0);
    jump(BPF_JEQ, SIOCGIFDSTADDR, L_NOTIF, L_ALLOW);
    label(L_NOTIF);
    RET(SECCOMP_RET_USER_NOTIF);
    label(L_ALLOW);
    RET(SECCOMP_RET_ALLOW);
    label(L_EPERM);
    RET(SECCOMP_RET_ERRNO | EPERM);
    label(L_EACCES);
    RET(SECCOMP_RET_ERRNO | EACCES);
    label(L_KILL);
    RET(SECCOMP_RET_KILL_PROCESS);
    for (int i = 0; i < ninsn; i++) {
        int t = jt_to[i] ? label_at[jt_to[i]] - i - 1 : 0;
        int f = jf_to[i] ? label_at[jf_to[i]] - i - 1 : 0;
        if (t < 0 || t > 255 || f < 0 || f > 255) { errno = E2BIG; return -1; }
        insn[i].jt = (uint8_t)t;
        insn[i].jf = (uint8_t)f;
    }
    struct sock_fprog prog = {(unsigned short)ninsn, insn};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                        &prog);
#endif
}

int net_confine(const struct net_allow *a, int chan) {
    int level = landlock(a);
    if (level < 0) return -1;
    int lfd = filter();
    if (lfd < 0) return -1;
    char byte = (char)level;
    struct iovec io = {&byte, 1};
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b,
                       .msg_controllen = sizeof u.b};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &lfd, sizeof lfd);
    ssize_t sent = sendmsg(chan, &m, 0);
    close(lfd);
    return sent == 1 ? 0 : -1;
}

/* --- the supervisor ------------------------------------------------------------------- */

/* A blocking connect of the program, made non-blocking here: answered when it ends. */
struct pending { uint64_t id; int fd; ino_t ino; double deadline; };
#define MAXPENDING 64
static struct pending pend[MAXPENDING];
static int npend;
static int lfd = -1, lfd_gone, ifsock = -1, refused;
static const struct net_allow *allow;
#define NOTIF_BUF 512  /* >= the kernel's struct seccomp_notif (checked at start) */

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int net_supervise(int chan, const struct net_allow *a) {
    allow = a;
    char byte = 0;
    struct iovec io = {&byte, 1};
    union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b,
                       .msg_controllen = sizeof u.b};
    ssize_t n;
    while ((n = recvmsg(chan, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    struct cmsghdr *cm = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
    if (!cm || cm->cmsg_type != SCM_RIGHTS) return -1;
    memcpy(&lfd, CMSG_DATA(cm), sizeof lfd);
    struct seccomp_notif_sizes sizes;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) || sizes.seccomp_notif > NOTIF_BUF ||
        sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)) {
        close(lfd);  /* every notified call of the program then fails: closed, not open */
        lfd = -1;
        return -1;
    }
    ifsock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);  /* ours: never lent */
    return byte;
}

int net_refused(void) { return refused; }

static int valid(uint64_t id) { return ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

static void answer(uint64_t id, int error) {
    struct seccomp_notif_resp resp = {.id = id, .val = 0, .error = error, .flags = 0};
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp)) { /* ENOENT: it gave up waiting */ }
}

/* A pidfd of the calling thread (of its process where threads have none: Linux < 6.9). */
static int pidfd_of(pid_t tid) {
    int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (fd >= 0 || errno != EINVAL) return fd;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t len = f < 0 ? -1 : read(f, buf, sizeof buf - 1);
    if (f >= 0) close(f);
    if (len <= 0) return -1;
    buf[len] = 0;
    char *t = strstr(buf, "\nTgid:");
    return t ? (int)syscall(SYS_pidfd_open, atoi(t + 6), 0) : -1;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len) {
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len) {
    struct iovec l = {(void *)buf, len}, r = {(void *)(uintptr_t)addr, len};
    return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* Open MPI's UDP socket (for interface ioctls): a NETLINK_ROUTE one, which sends nothing. */
static int udp_socket(const struct seccomp_notif *req) {
    int flags = (int)req->data.args[1] & (SOCK_CLOEXEC | SOCK_NONBLOCK);
    int s = socket(AF_NETLINK, SOCK_DGRAM | flags, NETLINK_ROUTE);
    if (s < 0) return -errno;
    struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)s,
                                      .newfd_flags = (flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0};
    int r = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    int e = errno;
    close(s);
    return r >= 0 ? 1 : -e;  /* 1: answered by ADDFD_FLAG_SEND */
}

/* SIOCGIFADDR and its kin, which only an AF_INET socket answers: read-only facts. */
static int if_ioctl(const struct seccomp_notif *req) {
    struct ifreq ifr;
    if (read_mem((pid_t)req->pid, req->data.args[2], &ifr, sizeof ifr)) return -EFAULT;
    if (!valid(req->id)) return 1;
    ifr.ifr_name[IFNAMSIZ - 1] = 0;
    if (ifsock < 0 || ioctl(ifsock, (unsigned long)(uint32_t)req->data.args[1], &ifr)) return -errno;
    return write_mem((pid_t)req->pid, req->data.args[2], &ifr, sizeof ifr) ? -EFAULT : 0;
}

/* A connect the program made blocking: start it non-blocking and answer when it ends
   (its O_NONBLOCK, shared with the program's descriptor, is set for the one call). */
static int start_connect(uint64_t id, int fd, const struct sockaddr_storage *ss, socklen_t len) {
    struct stat st;
    if (fstat(fd, &st)) return -errno;
    for (int i = 0; i < npend; i++) {
        if (pend[i].ino != st.st_ino) continue;
        if (valid(pend[i].id)) return -EALREADY;  /* another thread waits for it */
        pend[i].id = id;  /* the same call again (a signal interrupted it): wait on */
        return 1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK)) return -errno;
    int r = connect(fd, (const struct sockaddr *)ss, len), e = errno;
    fcntl(fd, F_SETFL, fl);
    if (r == 0) return 0;
    if (e != EINPROGRESS) return -e;
    if (npend == MAXPENDING) {
        struct sockaddr abort_it = {.sa_family = AF_UNSPEC};
        connect(fd, &abort_it, sizeof abort_it);
        return -EAGAIN;
    }
    struct timeval tv = {0, 0};
    socklen_t tl = sizeof tv;
    getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl);
    double limit = (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
    pend[npend++] = (struct pending){id, fd, st.st_ino, limit > 0 ? mono_s() + limit : 0};
    return 2;  /* pending: fd kept */
}

/* connect, bind, listen: checked, then done here on the program's socket. */
static int sock_call(const struct seccomp_notif *req, int pidfd) {
    int nr = req->data.nr;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len = 0;
    if (nr != SYS_listen) {
        len = (socklen_t)req->data.args[2];
        if (len > sizeof ss) len = sizeof ss;
        if (len < sizeof(sa_family_t) || read_mem((pid_t)req->pid, req->data.args[1], &ss, len))
            return -EFAULT;
    }
    if (!valid(req->id)) return 1;
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req->data.args[0], 0);
    if (fd < 0) return -EBADF;
    int type = 0, ok = 0, port = -1;
    socklen_t tl = sizeof type;
    struct in_addr ad;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl)) { close(fd); return -ENOTSOCK; }
    if (nr == SYS_listen) {
        len = sizeof ss;
        ok = type == SOCK_STREAM && !getsockname(fd, (struct sockaddr *)&ss, &len) &&
             v4_of(&ss, len, &ad, &port) == 0 && reserved(allow, port);
    } else if (nr == SYS_connect && ss.ss_family == AF_UNSPEC) {
        ok = 1;  /* a disconnect */
    } else if (type == SOCK_STREAM && v4_of(&ss, len, &ad, &port) == 0) {
        ok = nr == SYS_connect ? may_connect(allow, ad, port) : port == 0 || reserved(allow, port);
    }
    if (!ok) {
        refused++;
        close(fd);
        return -EACCES;
    }
    int r;
    if (nr == SYS_listen) r = listen(fd, (int)req->data.args[1]) ? -errno : 0;
    else if (nr == SYS_bind) r = bind(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
    else if (ss.ss_family == AF_UNSPEC || (fcntl(fd, F_GETFL) & O_NONBLOCK))
        r = connect(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
    else if ((r = start_connect(req->id, fd, &ss, len)) == 2)
        return 2;  /* the pending connect keeps fd */
    close(fd);
    return r;
}

static void handle_one(void) {
    union { struct seccomp_notif n; char b[NOTIF_BUF]; } u;
    memset(&u, 0, sizeof u);
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &u.n)) return;  /* ENOENT: it gave up */
    const struct seccomp_notif *req = &u.n;
    int r = -EACCES, nr = req->data.nr;
    if (nr == SYS_socket) r = udp_socket(req);
    else if (nr == SYS_ioctl) r = if_ioctl(req);
    else {
        int pidfd = pidfd_of((pid_t)req->pid);
        r = pidfd < 0 ? -ESRCH : sock_call(req, pidfd);
        if (pidfd >= 0) close(pidfd);
    }
    if (r <= 0) answer(req->id, r);  /* > 0: answered already, or later */
}

/* A pending connect ended (or its time ran out): the program's call returns. */
static void finish(int i, int timed_out) {
    int err = 0;
    socklen_t l = sizeof err;
    if (timed_out) err = EINPROGRESS;  /* as a blocking connect past its SO_SNDTIMEO */
    else if (getsockopt(pend[i].fd, SOL_SOCKET, SO_ERROR, &err, &l)) err = errno;
    answer(pend[i].id, -err);
    close(pend[i].fd);
    pend[i] = pend[--npend];
}

void net_wait(const sigset_t *mask) {
    struct pollfd fds[1 + MAXPENDING];
    int n = 0, listener = -1;
    if (lfd >= 0 && !lfd_gone) { fds[n] = (struct pollfd){lfd, POLLIN, 0}; listener = n++; }
    int first = n, count = npend;
    double soonest = 0, now = mono_s();
    for (int i = 0; i < count; i++) {
        fds[n++] = (struct pollfd){pend[i].fd, POLLOUT, 0};
        if (pend[i].deadline > 0 && (soonest == 0 || pend[i].deadline < soonest))
            soonest = pend[i].deadline;
    }
    struct timespec ts, *tsp = NULL;
    if (soonest > 0) {
        double left = soonest > now ? soonest - now : 0;
        ts.tv_sec = (time_t)left;
        ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
        tsp = &ts;
    }
    if (ppoll(fds, (nfds_t)n, tsp, mask) < 0) return;  /* a signal: the caller looks */
    now = mono_s();
    for (int i = count - 1; i >= 0; i--) {  /* from the end: finish() moves the last in */
        if (fds[first + i].revents) finish(i, 0);
        else if (pend[i].deadline > 0 && pend[i].deadline <= now) finish(i, 1);
    }
    if (listener >= 0 && (fds[listener].revents & POLLIN)) handle_one();
    else if (listener >= 0 && (fds[listener].revents & (POLLHUP | POLLERR))) lfd_gone = 1;
}
