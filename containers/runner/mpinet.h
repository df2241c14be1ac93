/* mpinet: the network confinement of an MPI rank's run ("net_mpi 1"), for gl-runner.c.
 * See mpinet.c for what is allowed and how, and CONTRACT.md ("MPI ranks"). */
#ifndef GL_MPINET_H
#define GL_MPINET_H
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>

#define NET_MAXPEERS 64
#define NET_MAXRANGES 16

/* What a rank may reach: its stepd's PMIx server, its step's peers on the step's
   reserved ports; and bind: those ports, or port 0. */
struct net_allow {
    struct in_addr pmix_addr;
    int pmix_port;  /* 0: none known */
    struct in_addr peers[NET_MAXPEERS];
    int npeers;
    int lo[NET_MAXRANGES], hi[NET_MAXRANGES];
    int nranges;
};

/* The runner's own PMIX_SERVER_URI41 (URI4, URI3) and SLURM_STEP_RESV_PORTS. */
void net_allow_from_env(struct net_allow *a);
/* One "net_peer" of the request: 0, or -1 when it is not an IPv4 address. */
int net_add_peer(struct net_allow *a, const char *text);
/* Whether this build can confine a run here (the seccomp filter knows the CPU). */
int net_supported(void);

/* In the program, after it dropped its privileges and just before exec: Landlock where
   the kernel has network rules, then the seccomp filter, whose listener goes to the
   supervisor over chan (with the Landlock level in force). 0, or -1 with errno. */
int net_confine(const struct net_allow *a, int chan);

/* In the supervisor (the run's init): the listener the program sent; the Landlock level
   (0, 4 or 6) it applied, or -1 when none came (the program died first). */
int net_supervise(int chan, const struct net_allow *a);
/* Wait (ppoll with mask) for the supervisor's events or a signal, and answer them. */
void net_wait(const sigset_t *mask);
/* How many connect/bind/listen calls were refused so far. */
int net_refused(void);

#endif
