/* gl-runner: gradeline's per-test supervisor, inside the grading image.
 *
 * One container (Apptainer or bubblewrap) is started per shard worker; this
 * program is its only process until the judge asks for runs. The judge (outside)
 * writes one request per run on our stdin and reads one reply on our stdout; we
 * never see the expected answers, and validators are runs like any other.
 *
 * Each run gets, in this order (isolate's and bwrap's recipe, see CONTRACT.md):
 *   - a fresh user, mount, PID, IPC and UTS namespace (clone), with the run's uid
 *     mapped: the caller's own uid, or -- when we are root -- the slot's sandbox uid;
 *   - a cgroup below the shard's (memory, pids, CPU accounting, cpuset), when the
 *     judge gave us a delegated one: fresh per run under v2; under v1 a fresh memory
 *     cgroup, the others reused (see struct cgset). The run's stub (a fork of us, one
 *     per run) joins them before the request comes, while the run before still runs,
 *     and clones the run's init, which is then in them from its start;
 *   - /work = the build dir (read-only unless compiling), the requested binds, a
 *     private size-limited /tmp, an empty tmpfs over the shard's work root (other
 *     submissions, validator data), a new /proc;
 *   - a tiny init as PID 1 that starts the program, and when the program ends kills
 *     whatever it left in the namespace and reaps it: nothing survives a run;
 *   - in the program: a new session, rlimits (CPU, file size, stack, core, open
 *     files, processes; data and address space only without a memory cgroup), no new privileges,
 *     no capabilities (it execs as a non-root uid), CPU affinity;
 *   - with "net_mpi 1" (an MPI rank's run, its container on the node's network): the
 *     network confinement of mpinet.c, a seccomp filter in the program whose
 *     supervisor is the run's init, and Landlock where the kernel has it.
 * The wall-clock limit is enforced here (poll on the report pipe); hitting it makes the init
 * kill the run and report (SIGUSR1), then kills the PID namespace. So is the CPU limit to the millisecond ("cpu_hard_ms") where the run has
 * a cgroup whose CPU time we can read: RLIMIT_CPU counts whole seconds, so a run that
 * should die at 1.75 s would burn until 2 s. The reply carries what was measured; the judge decides the verdict.
 *
 * Protocol (text, one field per line, values with \\ \n \t escaped):
 *   request: "argv V" (repeated), "env K=V" (repeated), "workdir P", "writable 1",
 *            "stdin P", "stdout P", "stderr P", "bind SRC\tDST\tRW" (repeated),
 *            "hide P" (repeated), "cpus 0,3", "uid N", "gid N", "fifo 1" (stdin and
 *            stdout are FIFOs of an interactive test: opened without waiting for
 *            their other ends, which the judge holds open meanwhile; "opened: 1" is
 *            sent, ahead of the reply, once they are open), and the limits
 *            "cpu_hard_s N" "cpu_hard_ms N" "wall_ms N" "memory N" "stack N" "procs N" "fsize N"
 *            "tmpfs N", and without a memory cgroup "data N" (RLIMIT_DATA) "as N"
 *            (RLIMIT_AS; default memory + 64 MiB) (bytes; absent: not limited), then "run".
 *            An MPI rank's run (see CONTRACT.md, "MPI ranks") may add "env_pass PREFIX"
 *            (repeated: our own variables named PREFIX... join the program's, after the
 *            request's "env", which win), "net_mpi 1" (the network confinement of
 *            mpinet.c) and "net_peer ADDR" (repeated, IPv4: the step's nodes); "%r" in
 *            "stdout" and "stderr" is our SLURM_PROCID (the rank).
 *   reply:   "key: value" lines, then an empty line: status (ok | error), error,
 *            exit-code, signal, cpu-time-s, wall-time-s, max-rss-bytes, exited-at
 *            (CLOCK_MONOTONIC when the run's init saw the program exit),
 *            memory-peak-bytes, oom-killed, wall-timed-out, cpu-timed-out, stdout-bytes,
 *            stderr-bytes, cgroup, exec-error; rank (our SLURM_PROCID, where set); with
 *            net_mpi: net-confinement (supervisor, supervisor+landlock4 or
 *            supervisor+landlock6: what was in force) and net-refused (calls refused).
 * Options: --cgroup-v1 CTRL=DIR (repeated) or --cgroup-v2 DIR: the shard's cgroup;
 *          --once FILE: run the one request in FILE, print its reply (no "ready" line).
 * Every descriptor we inherit above 2 is closed at start (an srun task inherits the
 * stepd's listening socket).
 * Exit: 0 on EOF (--once: after the reply); 2 when it cannot go on (the judge then
 * reports JE), or (--once) when the reply is an error; --once: 1 when the program
 * failed (a signal, a non-zero exit, a limit), so that srun ends the step's other ranks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpinet.h"

#define MAXV 256
#define MAXB 8
#define MAXCG 6
#define STOP_GRACE_S 2.0  /* how long a stopped run's init may take to reap and report */

extern char **environ;

struct bind { char *src, *dst; int rw; };
struct req {
    char *argv[MAXV + 1]; int argc;
    char *env[MAXV + 1]; int envc;
    char *workdir, *in, *out, *err, *cpus;
    int writable, fifo;
    struct bind binds[MAXB]; int nbinds;
    char *hide[MAXB]; int nhide;
    long long cpu_hard_s, cpu_hard_ms, wall_ms, memory, stack, procs, fsize, tmpfs;
    long long data, as;  /* RLIMIT_DATA, RLIMIT_AS: applied only without a memory cgroup */
    long long uid, gid;
    int threads;  /* count the run's threads (a parallel program's oversubscription) */
    char *env_pass[MAXB]; int nenv_pass;
    char **envp;  /* env and the passed variables (NULL: env alone) */
    int net_mpi;
    char *net_peer[NET_MAXPEERS]; int npeers;
};
struct report { int status; long long cpu_us, maxrss_kb; int exec_errno; double exited_at;
                int threads_peak; int net_level, net_refused; };
struct cgroup { char ctrl[32]; char dir[PATH_MAX]; };

static double now_s(void);
static struct cgroup cgs[MAXCG];
static int ncg, cg_v2;
static unsigned long runs;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gl-runner: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

/* --- protocol -------------------------------------------------------------- */

static char *unescape(const char *s) {
    char *out = malloc(strlen(s) + 1), *o = out;
    if (!out) die("out of memory");
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
    return out;
}

/* "%r" in a path: the rank (our SLURM_PROCID), so that every rank writes its own
   files; 0, or -1 when there is no rank to put there. */
static int expand_rank(char **path) {
    if (!strstr(*path, "%r")) return 0;
    const char *rank = getenv("SLURM_PROCID");
    if (!rank || !*rank) return -1;
    size_t n = strlen(*path) + 1;
    for (const char *p = *path; (p = strstr(p, "%r")); p += 2) n += strlen(rank);
    char *out = malloc(n), *o = out;
    if (!out) die("out of memory");
    for (const char *p = *path; *p;) {
        if (p[0] == '%' && p[1] == 'r') { o = stpcpy(o, rank); p += 2; }
        else *o++ = *p++;
    }
    *o = 0;
    free(*path);
    *path = out;
    return 0;
}

/* The request's env, then our own variables that start with an env_pass prefix and
   that the request does not set. */
static void pass_env(struct req *r) {
    size_t n = 0;
    for (char **e = environ; *e; e++) n++;
    r->envp = malloc((n + (size_t)r->envc + 1) * sizeof *r->envp);
    if (!r->envp) die("out of memory");
    memcpy(r->envp, r->env, (size_t)r->envc * sizeof *r->envp);
    size_t k = (size_t)r->envc;
    for (char **e = environ; *e; e++) {
        int match = 0;
        for (int i = 0; i < r->nenv_pass && !match; i++)
            match = !strncmp(*e, r->env_pass[i], strlen(r->env_pass[i]));
        size_t name = strcspn(*e, "=");
        for (int i = 0; i < r->envc && match; i++)
            if (!strncmp(r->env[i], *e, name + 1)) match = 0;  /* the request's wins */
        if (match) r->envp[k++] = *e;
    }
    r->envp[k] = NULL;
}

/* What a complete request still needs: its ranks, passed variables, peers. */
static int complete_req(struct req *r, const char **why) {
    if (expand_rank(&r->out) || expand_rank(&r->err)) {
        *why = "%r in stdout or stderr, but no SLURM_PROCID";
        return -1;
    }
    if (r->nenv_pass) pass_env(r);
    if (r->npeers && !r->net_mpi) { *why = "net_peer without net_mpi 1"; return -1; }
    if (r->net_mpi && !net_supported()) { *why = "net_mpi: not on this CPU architecture"; return -1; }
    struct net_allow probe;
    memset(&probe, 0, sizeof probe);
    for (int i = 0; i < r->npeers; i++)
        if (net_add_peer(&probe, r->net_peer[i])) { *why = "net_peer wants an IPv4 address"; return -1; }
    return 1;
}

/* Reads one request; 1 when complete, 0 on EOF, -1 (with *why) when malformed. */
static int read_req(FILE *in, struct req *r, const char **why) {
    static char *line;
    static size_t cap;
    memset(r, 0, sizeof *r);
    r->uid = r->gid = -1;
    r->cpu_hard_s = r->cpu_hard_ms = r->wall_ms = r->memory = r->stack = r->procs = r->fsize = r->tmpfs = -1;
    r->data = r->as = -1;
    ssize_t n;
    while ((n = getline(&line, &cap, in)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        if (!strcmp(line, "run")) {
            if (!r->argc || !r->workdir || !r->out || !r->err) { *why = "incomplete request"; return -1; }
            return complete_req(r, why);
        }
        char *sp = strchr(line, ' ');
        if (!sp) { *why = "malformed line"; return -1; }
        *sp = 0;
        const char *k = line;
        char *v = unescape(sp + 1);
        long long num = strtoll(v, NULL, 10);
        if (!strcmp(k, "argv") && r->argc < MAXV) { r->argv[r->argc++] = v; continue; }
        if (!strcmp(k, "env") && r->envc < MAXV) { r->env[r->envc++] = v; continue; }
        if (!strcmp(k, "bind") && r->nbinds < MAXB) {
            char *t1 = strchr(v, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
            if (!t2) { free(v); *why = "malformed bind"; return -1; }
            *t1 = *t2 = 0;
            r->binds[r->nbinds++] = (struct bind){v, t1 + 1, atoi(t2 + 1)};
            continue;
        }
        if (!strcmp(k, "hide") && r->nhide < MAXB) { r->hide[r->nhide++] = v; continue; }
        if (!strcmp(k, "workdir")) { r->workdir = v; continue; }
        if (!strcmp(k, "stdin")) { r->in = v; continue; }
        if (!strcmp(k, "stdout")) { r->out = v; continue; }
        if (!strcmp(k, "stderr")) { r->err = v; continue; }
        if (!strcmp(k, "cpus")) { r->cpus = v; continue; }
        if (!strcmp(k, "env_pass") && r->nenv_pass < MAXB) {
            if (!*v) { free(v); *why = "env_pass wants a prefix"; return -1; }
            r->env_pass[r->nenv_pass++] = v;
            continue;
        }
        if (!strcmp(k, "net_peer")) {
            if (r->npeers == NET_MAXPEERS) { free(v); *why = "too many net_peer lines"; return -1; }
            r->net_peer[r->npeers++] = v;
            continue;
        }
        free(v);
        if (!strcmp(k, "writable")) r->writable = (int)num;
        else if (!strcmp(k, "fifo")) r->fifo = (int)num;
        else if (!strcmp(k, "threads")) r->threads = (int)num;
        else if (!strcmp(k, "net_mpi")) r->net_mpi = (int)num;
        else if (!strcmp(k, "uid")) r->uid = num;
        else if (!strcmp(k, "gid")) r->gid = num;
        else if (!strcmp(k, "cpu_hard_s")) r->cpu_hard_s = num;
        else if (!strcmp(k, "cpu_hard_ms")) r->cpu_hard_ms = num;
        else if (!strcmp(k, "wall_ms")) r->wall_ms = num;
        else if (!strcmp(k, "memory")) r->memory = num;
        else if (!strcmp(k, "data")) r->data = num;
        else if (!strcmp(k, "as")) r->as = num;
        else if (!strcmp(k, "stack")) r->stack = num;
        else if (!strcmp(k, "procs")) r->procs = num;
        else if (!strcmp(k, "fsize")) r->fsize = num;
        else if (!strcmp(k, "tmpfs")) r->tmpfs = num;
        /* unknown keys are ignored: newer judges may send more */
    }
    return 0;
}

static int once;  /* --once FILE: one request, from FILE */
static int replied_error;  /* --once: the exit status says so */
static int program_failed;  /* --once: it died, exited non-zero or was stopped: exit 1,
                               so that srun --kill-on-bad-exit ends the other ranks */

static void print_rank(void) {  /* an srun task's rank, for the replies srun gathers */
    const char *rank = getenv("SLURM_PROCID");
    if (rank && *rank) printf("rank: %s\n", rank);
}

static void reply_error(const char *fmt, ...) {
    replied_error = 1;
    va_list ap;
    va_start(ap, fmt);
    printf("status: error\nerror: ");
    vprintf(fmt, ap);
    printf("\n");
    print_rank();
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

/* --- cgroups ------------------------------------------------------------------ */

static int write_file(const char *dir, const char *name, const char *value) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t w = write(fd, value, strlen(value));
    close(fd);
    return w < 0 ? -1 : 0;
}

static long long read_num(const char *dir, const char *name, const char *key) {
    char path[PATH_MAX], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    if (!key) return strtoll(buf, NULL, 10);
    for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t kl = strlen(key);
        if (!strncmp(l, key, kl) && l[kl] == ' ') return strtoll(l + kl + 1, NULL, 10);
    }
    return -1;
}

/* The cgroups of one run. A run's cgroups are made ready, and the run's stub joins
 * them, while the run before it still runs (see stub_prepare): joining a cgroup
 * (writing cgroup.procs) waits for an RCU grace period (~2-3 ms, measured: the
 * cgroup_threadgroup_rwsem's write side) unless another join came just before,
 * which is the case only for back-to-back runs. Limits are written when the
 * request comes (that needs no grace period).
 * v1: the CPU accounting, cpuset and pids cgroups are reused (two sets, alternating:
 * the next run's stub joins one while this run's processes are in the other),
 * emptied and reset; the memory cgroup is fresh per run. Creating and removing four
 * cgroups per run cost ~1.5 ms of a run's ~4 ms. A memory cgroup cannot be reused
 * cleanly: the page cache a run reads (the image's compilers and interpreters) stays
 * charged to it, and reclaiming that evicts the image's files (measured: `python3 -c
 * pass` went from 19 to 90 ms); removing the cgroup hands the charge to the shard's
 * instead. v2 keeps one fresh cgroup per run (one directory holds every controller). */
struct cgset {
    char dirs[MAXCG][PATH_MAX];
    int n;              /* 0: no cgroups (none delegated) */
    int fresh[MAXCG];   /* made for this run alone: removed after it */
    char cpus[256];     /* what cpuset.cpus was written with ("": nothing written) */
};
static int reuse_made[2];  /* set s's reused v1 cgroups exist, with cpuset.mems */

static int cg_empty(const char *dir) {
    char path[PATH_MAX], buf[64];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    for (int tries = 0; tries < 2000; tries++) {  /* zombies leave as they are released */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 0;
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        if (n == 0) return 1;
        usleep(500);
    }
    return 0;
}

/* The shard's CPUs (what a run without "cpus" may use), or "" when unreadable. */
static void shard_cpus(int i, char *out, size_t size) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cpuset.cpus%s", cgs[i].dir, cg_v2 ? ".effective" : "");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, out, size - 1);
    if (fd >= 0) close(fd);
    out[n > 0 ? n : 0] = 0;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
}

/* Makes one directory ready for a process to join; fresh ones get a new name. */
static int cg_dir(struct cgset *c, int i, int set, unsigned long run) {
    const char *ctrl = cgs[i].ctrl;
    if (c->fresh[i]) snprintf(c->dirs[i], PATH_MAX, "%s/run%lu", cgs[i].dir, run);
    else snprintf(c->dirs[i], PATH_MAX, "%s/reuse%d", cgs[i].dir, set);
    if (!c->fresh[i] && reuse_made[set]) {
        if (!cg_empty(c->dirs[i])) return -1;
    } else {
        if (mkdir(c->dirs[i], 0755) && errno != EEXIST) return -1;
        if (!cg_v2 && !strcmp(ctrl, "cpuset")) {  /* v1: joining needs mems and cpus */
            char mems[256];
            long long m = read_num(cgs[i].dir, "cpuset.mems", NULL);
            snprintf(mems, sizeof mems, "%lld", m < 0 ? 0 : m);
            if (write_file(c->dirs[i], "cpuset.mems", mems)) return -1;
        }
    }
    if (!cg_v2 && !strcmp(ctrl, "cpuset")) {
        char want[256];
        if (c->cpus[0]) snprintf(want, sizeof want, "%s", c->cpus);
        else shard_cpus(i, want, sizeof want);
        if (!want[0] || write_file(c->dirs[i], "cpuset.cpus", want)) return -1;
        snprintf(c->cpus, sizeof c->cpus, "%s", want);
    }
    return 0;
}

/* The next run's cgroups, ready to join (0), or -1 with errno. */
static int cg_prepare(struct cgset *c, int set, unsigned long run, const char *cpus) {
    memset(c, 0, sizeof *c);
    if (!ncg) return 0;
    for (int reuse = !cg_v2; reuse >= 0; reuse--) {  /* reused ones first; fresh if that fails */
        int i, err = 0;
        snprintf(c->cpus, sizeof c->cpus, "%s", cpus ? cpus : "");  /* v1: what to write */
        for (i = 0; i < ncg; i++) {
            c->fresh[i] = !reuse || cg_v2 || !strcmp(cgs[i].ctrl, "memory");
            if (cg_dir(c, i, set, run)) { err = errno ? errno : EBUSY; break; }
        }
        if (i == ncg) {
            if (cg_v2) c->cpus[0] = 0;  /* v2: nothing written; the request's come later */
            if (reuse) reuse_made[set] = 1;
            c->n = ncg;
            return 0;
        }
        for (int j = 0; j <= i && j < ncg; j++) if (c->fresh[j]) rmdir(c->dirs[j]);
        if (!reuse) { errno = err; return -1; }
        reuse_made[set] = 0;
    }
    return -1;
}

/* The request's limits, written once the run's stub is in its cgroups. The stub itself
   counts in pids (hence + 1) and uses next to no memory (a forked copy of us). */
static int cg_limits(const struct req *r, struct cgset *c) {
    char num[64];
    for (int i = 0; i < c->n; i++) {
        const char *ctrl = cgs[i].ctrl;
        if (!strcmp(ctrl, "memory") || cg_v2) {
            if (r->memory > 0) snprintf(num, sizeof num, "%lld", r->memory);
            else snprintf(num, sizeof num, cg_v2 ? "max" : "-1");
            if (write_file(c->dirs[i], cg_v2 ? "memory.max" : "memory.limit_in_bytes", num))
                return -1;
            write_file(c->dirs[i], cg_v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
                       cg_v2 ? "0" : num);
        }
        if (!strcmp(ctrl, "pids") || cg_v2) {
            if (r->procs > 0) snprintf(num, sizeof num, "%lld", r->procs + 1);
            else snprintf(num, sizeof num, "max");
            if (write_file(c->dirs[i], "pids.max", num)) return -1;
        }
        if (!strcmp(ctrl, "cpuset") || cg_v2) {  /* unless made ready with these CPUs */
            char want[256] = "";
            if (r->cpus) snprintf(want, sizeof want, "%s", r->cpus);
            else if (!cg_v2) shard_cpus(i, want, sizeof want);  /* every CPU of the shard */
            if (want[0] && strcmp(want, c->cpus) && write_file(c->dirs[i], "cpuset.cpus", want))
                return -1;
        }
    }
    return 0;
}

/* CPU time the run's cgroup had used when the run started (v2 cannot reset it). */
static long long cpu_base_us;

static void cg_measure(const struct cgset *c, long long *cpu_us, long long *peak, int *oom) {
    for (int i = 0; i < c->n; i++) {
        const char *ctrl = cgs[i].ctrl;
        if (cg_v2) {
            long long u = read_num(c->dirs[i], "cpu.stat", "usage_usec");
            if (u >= 0) *cpu_us = u - cpu_base_us;
            *peak = read_num(c->dirs[i], "memory.peak", NULL);
            *oom = read_num(c->dirs[i], "memory.events", "oom_kill") > 0;
        } else if (!strcmp(ctrl, "cpuacct")) {
            long long ns = read_num(c->dirs[i], "cpuacct.usage", NULL);
            if (ns >= 0) *cpu_us = ns / 1000 - cpu_base_us;
        } else if (!strcmp(ctrl, "memory")) {
            *peak = read_num(c->dirs[i], "memory.max_usage_in_bytes", NULL);
            *oom = read_num(c->dirs[i], "memory.oom_control", "oom_kill") > 0;
        }
    }
}

/* The run's cgroup CPU time (microseconds, every process in it), or -1. */
static long long cg_usage_us(const struct cgset *c) {
    for (int i = 0; i < c->n; i++) {
        if (cg_v2) return read_num(c->dirs[i], "cpu.stat", "usage_usec");
        if (!strcmp(cgs[i].ctrl, "cpuacct")) {
            long long ns = read_num(c->dirs[i], "cpuacct.usage", NULL);
            return ns < 0 ? -1 : ns / 1000;
        }
    }
    return -1;
}

/* The run's CPU time so far, or -1. */
static long long cg_cpu_us(const struct cgset *c) {
    long long u = cg_usage_us(c);
    return u < 0 ? -1 : u - cpu_base_us;
}

/* The run is over (every process of it reaped): its fresh cgroups go; the reused
   ones stay for a later run and are removed at our exit. */
static void cg_remove(const struct cgset *c) {
    for (int i = 0; i < c->n; i++) {
        if (!c->fresh[i]) continue;
        if (cg_v2) write_file(c->dirs[i], "cgroup.kill", "1");
        for (int tries = 0; tries < 2000 && rmdir(c->dirs[i]) && errno == EBUSY; tries++)
            usleep(500);  /* zombies leave the cgroup as they are released */
    }
}

/* --- the run's namespaces ----------------------------------------------------- */

static int fail_pipe = -1;
/* net_mpi: what the run may reach, and the program's channel to its supervisor (the
   run's init) for the seccomp listener. */
static struct net_allow net_allow;
static int net_chan[2] = {-1, -1};

/* In the run's namespaces: report why setup failed and end (the judge says JE). */
static void setup_fail(const char *what) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s: %s", what, strerror(errno));
    if (write(fail_pipe, buf, (size_t)n) < 0) { /* nothing more to do */ }
    _exit(125);
}

static unsigned long flags_of(const char *path) {
    struct statvfs s;
    unsigned long f = 0;
    if (statvfs(path, &s)) return 0;
    if (s.f_flag & ST_NOSUID) f |= MS_NOSUID;
    if (s.f_flag & ST_NODEV) f |= MS_NODEV;
    if (s.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
    /* atime flags are locked like the others in a user namespace: keep them */
    if (s.f_flag & ST_NOATIME) f |= MS_NOATIME;
    if (s.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (s.f_flag & ST_RELATIME) f |= MS_RELATIME;
    return f;
}

static void bind_mount(const char *src, const char *dst, int rw) {
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL)) setup_fail(dst);
    if (!rw && mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | flags_of(dst), NULL))
        setup_fail(dst);
}

/* Whether a run may keep ``path`` writable: its own fresh tmpfs, its writable binds. */
static int run_writable(const struct req *r, const char *path) {
    static const char *own[] = {"/tmp", "/var/tmp", "/dev/shm", "/dev/pts", NULL};
    for (int i = 0; own[i]; i++) if (!strcmp(path, own[i])) return 1;
    if (!strcmp(path, "/proc") || !strncmp(path, "/proc/", 6)) return 1;  /* covered next */
    if (r->writable && !strcmp(path, "/work")) return 1;
    for (int i = 0; i < r->nbinds; i++) if (r->binds[i].rw && !strcmp(path, r->binds[i].dst)) return 1;
    return 0;
}

static void unescape_octal(char *s) {  /* mountinfo writes ' ' as \040 and so on */
    char *o = s;
    for (char *i = s; *i; i++, o++) {
        if (i[0] == '\\' && i[1] >= '0' && i[1] <= '7' && i[2] && i[3]) {
            *o = (char)(((i[1] - '0') << 6) | ((i[2] - '0') << 3) | (i[3] - '0'));
            i += 3;
        } else *o = *i;
    }
    *o = 0;
}

/* Everything the container left writable (its /dev, Apptainer's /var/tmp, /etc/hosts
   ...) becomes read-only for the run: nothing a run writes outlives it or reaches the
   next run, under any runtime. A mount that stays writable fails the run's setup. */
static void seal_mounts(const struct req *r) {
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) setup_fail("/proc/self/mountinfo");
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *field[6];
        int n = 0;
        for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
            field[n++] = t;
        if (n < 6) continue;
        char *mnt = field[4], *opts = field[5];
        unescape_octal(mnt);
        if (strncmp(opts, "rw", 2) || (opts[2] && opts[2] != ',') || run_writable(r, mnt))
            continue;
        struct stat st;
        if (lstat(mnt, &st)) continue;  /* shadowed by a later mount: unreachable */
        if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | flags_of(mnt), NULL)) {
            struct statvfs v;
            if (statvfs(mnt, &v) == 0 && (v.f_flag & ST_RDONLY)) continue;
            fclose(f);
            setup_fail(mnt);
        }
    }
    fclose(f);
}

/* The run's uid and gid, each the same number inside as outside: an MPI rank's PMIx
   client tells its server its uid and gid, which must be its job's. */
static void write_id_maps(pid_t pid, long long uid, long long gid) {
    char path[64], map[64];
    /* An unprivileged writer must deny setgroups before writing gid_map; root keeps it,
       so that the run can drop root's supplementary groups with setgroups(0). */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) { if (write(fd, "deny", 4) < 0) {} close(fd); }
    }
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(map, sizeof map, "%lld %lld 1", uid, uid);
    if (write_file("/", path + 1, map)) die("uid_map: %s", strerror(errno));
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(map, sizeof map, "%lld %lld 1", gid, gid);
    if (write_file("/", path + 1, map)) die("gid_map: %s", strerror(errno));
}

static void set_limits(const struct req *r, int memory_cgroup) {
    struct rlimit l;
#define LIM(res, v) do { l.rlim_cur = l.rlim_max = (rlim_t)(v); setrlimit(res, &l); } while (0)
    LIM(RLIMIT_CORE, 0);
    LIM(RLIMIT_NOFILE, 512);
    if (r->cpu_hard_s > 0) { l.rlim_cur = (rlim_t)r->cpu_hard_s; l.rlim_max = l.rlim_cur + 1; setrlimit(RLIMIT_CPU, &l); }
    if (r->fsize > 0) LIM(RLIMIT_FSIZE, r->fsize);
    if (r->stack > 0) LIM(RLIMIT_STACK, r->stack);
    if (r->procs > 0) LIM(RLIMIT_NPROC, r->procs);
    if (!memory_cgroup) {  /* the memory limit without a cgroup: see CONTRACT.md */
        if (r->data > 0) LIM(RLIMIT_DATA, r->data);
        if (r->as > 0) LIM(RLIMIT_AS, r->as);
        else if (r->memory > 0) LIM(RLIMIT_AS, r->memory + 64LL * 1024 * 1024);
    }
#undef LIM
}

/* The program: a new session, its files, its limits, no privileges, exec. */
static void exec_program(const struct req *r, int in, int out, int err, int memory_cgroup,
                         int report_fd) {
    setsid();
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) setup_fail("dup2");
    /* Nothing but 0, 1, 2 reaches the program (the exec-error pipe closes on exec). */
    syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
    set_limits(r, memory_cgroup);
    /* The memory cgroup's OOM killer must pick the program, never the run's init: an
       init killed before it reports leaves the run without a verdict. Raising one's own
       oom_score_adj needs no privilege, and the program's children inherit it. */
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) { if (write(adj, "1000", 4) < 0) {} close(adj); }
    if (chdir("/work")) setup_fail("/work");
    if (r->uid >= 0) {  /* we were root: become the slot's uid (drops every capability) */
        if (setgroups(0, NULL) || setresgid((gid_t)r->gid, (gid_t)r->gid, (gid_t)r->gid) ||
            setresuid((uid_t)r->uid, (uid_t)r->uid, (uid_t)r->uid)) setup_fail("setuid");
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (r->net_mpi && net_confine(&net_allow, net_chan[1])) setup_fail("net_mpi");
    environ = r->envp ? r->envp : (char **)r->env;
    execvp(r->argv[0], (char *const *)r->argv);
    /* exec failed: the program's own problem (no such file), reported as exit 127 */
    int e = errno;
    if (write(report_fd, &e, sizeof e) < 0) {}
    _exit(127);
}

/* The runner's "stop now" to the run's init (SIGUSR1, from outside the namespace:
   si_pid 0): kill every process of the run, then reap and report as usual, so a run
   ended by a clock still has its CPU time and peak memory measured (without a cgroup
   the report is the only measurement). A signal from inside the run is ignored. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig, siginfo_t *si, void *ctx) {
    (void)sig; (void)ctx;
    if (si->si_pid != 0) return;
    stop_requested = 1;
    kill(-1, SIGKILL);
}

/* Threads of every process of the run but its init, from the run's own /proc (what
   oversubscribes its cores); counted between reaps, on a tick, only where asked. */
#define THREAD_TICK_US 20000
static volatile sig_atomic_t ticked;
static void on_tick(int sig) { (void)sig; ticked = 1; }
static void on_child(int sig) { (void)sig; }  /* net_mpi: wakes the supervisor's ppoll */

static int count_threads(void) {
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp(e->d_name, "1")) continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        char *q = strrchr(buf, ')');  /* num_threads is field 20; the name may hold spaces */
        for (int field = 2; q && field < 20; field++) q = strchr(q + 1, ' ');
        if (q) total += atoi(q + 1);
    }
    closedir(d);
    return total;
}

/* Reap the program and everything it left (orphans come to PID 1), measuring them;
   with net_mpi, answer the program's network calls meanwhile (mpinet.c). */
static void reap_all(const struct req *r, pid_t prog, struct report *rep) {
    int st;
    struct rusage ru;
    pid_t p;
    sigset_t wait_mask;  /* net_mpi: SIGCHLD is blocked but while we wait (ppoll) */
    if (r->net_mpi) {
        close(net_chan[1]);
        rep->net_level = net_supervise(net_chan[0], &net_allow);
        close(net_chan[0]);
        struct sigaction child;
        memset(&child, 0, sizeof child);
        child.sa_handler = on_child;  /* no SA_RESTART: ppoll returns EINTR */
        sigaction(SIGCHLD, &child, NULL);
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGCHLD);
        sigprocmask(SIG_BLOCK, &block, &wait_mask);
    }
    if (r->threads) {  /* a tick that interrupts wait4, to count threads between reaps */
        struct sigaction tick;
        memset(&tick, 0, sizeof tick);
        tick.sa_handler = on_tick;  /* no SA_RESTART: wait4 returns EINTR */
        sigaction(SIGALRM, &tick, NULL);
        struct itimerval iv = {{0, THREAD_TICK_US}, {0, THREAD_TICK_US / 10}};
        setitimer(ITIMER_REAL, &iv, NULL);
    }
    for (;;) {
        p = wait4(-1, &st, r->net_mpi ? WNOHANG : 0, &ru);
        if (p == 0) net_wait(&wait_mask);  /* a child ends, a call comes, or a tick */
        if (p == 0 || (p < 0 && errno == EINTR)) {
            if (r->threads && ticked) {
                ticked = 0;
                int n = count_threads();
                if (n > rep->threads_peak) rep->threads_peak = n;
            }
            continue;
        }
        if (p < 0) break;
        rep->cpu_us += ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec +
                       ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
        if (ru.ru_maxrss > rep->maxrss_kb) rep->maxrss_kb = ru.ru_maxrss;
        if (p == prog) { rep->status = st; rep->exited_at = now_s(); kill(-1, SIGKILL); }
    }
    if (r->net_mpi) rep->net_refused = net_refused();
}

/* PID 1 of the run's namespace: start the program, reap everything, report. */
static int init_main(const struct req *r, int gate, int report, int in, int out, int err,
                     int memory_cgroup) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    char c;
    if (read(gate, &c, 1) != 1) _exit(125);  /* the runner did not release us */
    close(gate);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) setup_fail("make / private");
    bind_mount(r->workdir, "/work", r->writable);
    for (int i = 0; i < r->nbinds; i++) bind_mount(r->binds[i].src, r->binds[i].dst, r->binds[i].rw);
    for (int i = 0; i < r->nhide; i++)
        if (access(r->hide[i], F_OK) == 0 && mount("none", r->hide[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                  "size=4k,mode=000")) setup_fail(r->hide[i]);
    char opts[64];
    snprintf(opts, sizeof opts, "mode=1777,size=%lld", r->tmpfs > 0 ? r->tmpfs : 64LL << 20);
    if (mount("none", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts)) setup_fail("/tmp");
    static const char *private_tmp[] = {"/var/tmp", "/dev/shm"};
    for (int i = 0; i < 2; i++)
        if (access(private_tmp[i], F_OK) == 0 &&
            mount("none", private_tmp[i], "tmpfs", MS_NOSUID | MS_NODEV, opts))
            setup_fail(private_tmp[i]);
    seal_mounts(r);
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) setup_fail("/proc");
    if (sethostname("gradeline", 9)) { /* cosmetic */ }
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC)) setup_fail("pipe");
    if (r->net_mpi) {  /* what the run may reach, and the program's channel to us */
        net_allow_from_env(&net_allow);
        for (int i = 0; i < r->npeers; i++) net_add_peer(&net_allow, r->net_peer[i]);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, net_chan)) setup_fail("socketpair");
    }
    pid_t prog = fork();
    if (prog < 0) setup_fail("fork");
    if (prog == 0) {
        signal(SIGUSR1, SIG_DFL);
        close(exec_pipe[0]);
        if (r->net_mpi) close(net_chan[0]);
        exec_program(r, in, out, err, memory_cgroup, exec_pipe[1]);
    }
    if (stop_requested) kill(-1, SIGKILL);  /* the stop came while we set up */
    if (r->net_mpi) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  /* the supervisor: no ptrace, any uid */
    close(exec_pipe[1]); close(in); close(out); close(err);
    struct report rep = {0};
    if (read(exec_pipe[0], &rep.exec_errno, sizeof rep.exec_errno) != sizeof rep.exec_errno)
        rep.exec_errno = 0;
    close(exec_pipe[0]);
    reap_all(r, prog, &rep);
    if (write(report, &rep, sizeof rep) < 0) {}
    _exit(0);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Opens one end of a FIFO without waiting for the other end (the judge holds both
   ends open while the two runs of an interactive test start), then makes it blocking
   again for the program. */
static int open_fifo(const char *path, int flags) {
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* One run, in this run's stub (already in the run's cgroups: the init it clones is
   too, without joining them). */
static void run(struct req *r, struct cgset *c) {
    int in = r->fifo && r->in ? open_fifo(r->in, O_RDONLY)
                              : open(r->in ? r->in : "/dev/null", O_RDONLY | O_CLOEXEC);
    /* New files, never truncated old ones: ext4 writes a truncated file's data back
       when it is closed (auto_da_alloc), and the run would wait for the disk. */
    if (!r->fifo) unlink(r->out);
    unlink(r->err);
    int out = r->fifo ? open_fifo(r->out, O_WRONLY)
                      : open(r->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = open(r->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in < 0 || out < 0 || err < 0) {
        reply_error("cannot open %s: %s", in < 0 ? (r->in ? r->in : "/dev/null") :
                    out < 0 ? r->out : r->err, strerror(errno));
        goto close_files;
    }
    if (r->fifo) {  /* tell the judge both FIFO ends are ours: it may let go of its own */
        printf("opened: 1\n");
        fflush(stdout);
    }
    int ncgs = c->n;
    int memory_cgroup = 0;
    for (int i = 0; i < ncgs; i++) memory_cgroup |= cg_v2 || !strcmp(cgs[i].ctrl, "memory");
    int gate[2], rep_pipe[2], fail[2];
    if (pipe2(gate, O_CLOEXEC) || pipe2(rep_pipe, O_CLOEXEC) || pipe2(fail, O_CLOEXEC)) {
        reply_error("pipe: %s", strerror(errno));
        goto close_files;
    }
    double t0 = now_s();
    pid_t init = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                                CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, NULL, NULL, NULL, 0);
    if (init < 0) { reply_error("clone: %s", strerror(errno)); goto close_pipes; }
    if (init == 0) {
        close(gate[1]); close(rep_pipe[0]); close(fail[0]);
        fail_pipe = fail[1];
        fcntl(in, F_SETFD, 0); fcntl(out, F_SETFD, 0); fcntl(err, F_SETFD, 0);
        init_main(r, gate[0], rep_pipe[1], in, out, err, memory_cgroup);
    }
    close(gate[0]); close(rep_pipe[1]); close(fail[1]);
    /* A FIFO's ends are the program's alone: were we to keep ours, the other side would
       never see end of input when the program closes its output (an interactor that
       closes its output and then waits for the answer). */
    if (r->fifo) { close(in); in = -1; close(out); out = -1; }
    /* Map the run's uid: ours (unprivileged), or the slot's (we are root). */
    long long uid = r->uid >= 0 ? r->uid : (long long)getuid();
    long long gid = r->gid >= 0 ? r->gid : (long long)getgid();
    write_id_maps(init, uid, gid);
    if (r->cpus) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (char *p = r->cpus; *p;) {
            long a = strtol(p, &p, 10), b = a;
            if (*p == '-') b = strtol(p + 1, &p, 10);
            for (long c = a; c <= b; c++) CPU_SET((int)c, &set);
            if (*p == ',') p++; else if (*p) break;
        }
        sched_setaffinity(init, sizeof set, &set);
    }
    /* The run's CPU time starts now (v1: reset; v2: from here). */
    if (!cg_v2) for (int i = 0; i < ncgs; i++)
        if (!strcmp(cgs[i].ctrl, "cpuacct")) write_file(c->dirs[i], "cpuacct.usage", "0");
    cpu_base_us = 0;
    if (cg_v2 && ncgs) { long long u = cg_usage_us(c); cpu_base_us = u < 0 ? 0 : u; }
    if (write(gate[1], "1", 1) != 1) { /* the init died: reported below */ }
    close(gate[1]);
    gate[1] = -1;
    /* Wait for the init's report, not for the init's exit: the report comes once it
       has reaped every process of the run, while tearing down its namespaces (the
       mount namespace's unmounts wait for an RCU grace period) takes milliseconds
       more; that teardown and the cgroup's removal happen after the reply. */
    int timed_out = 0, cpu_out = 0, init_reaped = 0, st = 0;
    /* CPU time can grow at most this many seconds per second of wall time */
    int ncpu = 1;
    if (r->cpus) {
        cpu_set_t set;
        if (sched_getaffinity(init, sizeof set, &set) == 0) ncpu = CPU_COUNT(&set);
    } else {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) ncpu = CPU_COUNT(&set);
    }
    if (ncpu < 1) ncpu = 1;
    long long cpu_hard_us = r->cpu_hard_ms > 0 && ncgs ? r->cpu_hard_ms * 1000 : -1;
    /* The judge's end of our stdin closing ends the run (it is gone); --once has none. */
    struct pollfd fds[2] = {{rep_pipe[0], POLLIN, 0}, {once ? -1 : 0, POLLHUP, 0}};
    for (;;) {
        int left = -1;
        if (r->wall_ms > 0) {
            left = (int)(r->wall_ms - (now_s() - t0) * 1000.0);
            if (left <= 0) { timed_out = 1; break; }
        }
        if (cpu_hard_us > 0) {  /* look again when the limit could first be reached */
            long long used = cg_cpu_us(c);
            if (used < 0) cpu_hard_us = -1;  /* unreadable: RLIMIT_CPU alone */
            else if (used >= cpu_hard_us) { cpu_out = 1; break; }
            else {
                int until = (int)((cpu_hard_us - used) / 1000 / ncpu) + 1;
                if (left < 0 || until < left) left = until;
            }
        }
        int n = poll(fds, 2, left);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0 && (fds[1].revents & (POLLHUP | POLLERR))) { timed_out = 1; break; }  /* judge gone */
        if (n > 0 && fds[0].revents) break;
    }
    struct report rep = {0};
    int have = 0;
    int killed = timed_out || cpu_out;
    double wall = now_s() - t0;
    if (killed) {
        /* Ask the init to kill the run and report what it measured (a run ended by a
           clock under load is still measured: its peak memory may make it MLE); an init
           that does not report within the grace time is killed unmeasured. */
        kill(init, SIGUSR1);
        struct pollfd pf = {rep_pipe[0], POLLIN, 0};
        double until = now_s() + STOP_GRACE_S;
        for (;;) {
            int left = (int)((until - now_s()) * 1000.0);
            if (left <= 0) break;
            int n = poll(&pf, 1, left);
            if (n < 0 && errno == EINTR) continue;
            if (n > 0) have = read(rep_pipe[0], &rep, sizeof rep) == (ssize_t)sizeof rep;
            break;
        }
        kill(init, SIGKILL);  /* the namespace dies with its init */
    } else {
        have = read(rep_pipe[0], &rep, sizeof rep) == (ssize_t)sizeof rep;
    }
    if (killed || !have) {  /* killed, or died before reporting: reap it now */
        waitpid(init, &st, 0);
        init_reaped = 1;
    }
    char why[512];
    /* a report means the setup succeeded; otherwise the init has exited (reaped above) */
    ssize_t fn = have ? 0 : read(fail[0], why, sizeof why - 1);
    long long cg_cpu = -1, peak = -1;
    int oom = 0;
    if (ncgs) cg_measure(c, &cg_cpu, &peak, &oom);
    if (fn > 0) {
        why[fn] = 0;
        reply_error("setting up the run failed: %s", why);
        goto finish;
    }
    if (have && !killed && r->net_mpi && rep.net_level < 0) {  /* confinement failed: no run */
        fn = read(fail[0], why, sizeof why - 1);
        why[fn > 0 ? fn : 0] = 0;
        reply_error("setting up the run failed: %s", fn > 0 ? why : "net_mpi: no seccomp listener");
        goto finish;
    }
    int init_oom_killed = !have && !killed && oom && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    if (!have && !killed && !init_oom_killed) {
        reply_error("the run's init ended without a report (status %d)", st);
        goto finish;
    }
    struct stat so = {0}, se = {0};
    if (out >= 0) fstat(out, &so);
    fstat(err, &se);
    printf("status: ok\n");
    program_failed = !have || killed || WIFSIGNALED(rep.status) || WEXITSTATUS(rep.status);
    if (have && !killed) {
        if (WIFSIGNALED(rep.status)) printf("signal: %d\n", WTERMSIG(rep.status));
        else printf("exit-code: %d\n", WEXITSTATUS(rep.status));
        if (rep.exec_errno) printf("exec-error: %s\n", strerror(rep.exec_errno));
    } else {
        printf("signal: %d\n", SIGKILL);
    }
    long long cpu = cg_cpu >= 0 ? cg_cpu : rep.cpu_us;
    printf("cpu-time-s: %.6f\nwall-time-s: %.6f\n", (double)cpu / 1e6, wall);
    if (have) printf("max-rss-bytes: %lld\n", rep.maxrss_kb * 1024);
    if (have && rep.exited_at > 0) printf("exited-at: %.6f\n", rep.exited_at);
    if (have && r->threads) printf("threads-peak: %d\n", rep.threads_peak);
    if (peak >= 0) printf("memory-peak-bytes: %lld\n", peak);
    if (have && r->net_mpi) {
        printf("net-confinement: %s\nnet-refused: %d\n", rep.net_level == 6 ? "supervisor+landlock6" :
               rep.net_level == 4 ? "supervisor+landlock4" : rep.net_level == 0 ? "supervisor" :
               "none", rep.net_refused);
    }
    print_rank();
    printf("oom-killed: %d\nwall-timed-out: %d\ncpu-timed-out: %d\nstdout-bytes: %lld\n"
           "stderr-bytes: %lld\ncgroup: %d\n\n", oom, timed_out, cpu_out, (long long)so.st_size, (long long)se.st_size,
           ncgs > 0 && memory_cgroup);
    fflush(stdout);
finish:
    if (!init_reaped) waitpid(init, &st, 0);
close_pipes:
    if (gate[1] >= 0) close(gate[1]);
    close(rep_pipe[0]); close(fail[0]);
close_files:
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (err >= 0) close(err);
}

/* --- stubs: one per run, in its cgroups before its request comes ----------------- */

/* The stub of the next run: a fork of us that joins that run's cgroups at once (and
   waits out the grace period that costs) while the run before it is still running;
   when the request comes it runs it, replies, reaps the run and exits. */
struct stub { pid_t pid; int fd; struct cgset cg; };

static void stub_main(int fd, struct cgset *c, int cg_errno) {
    int join_errno = cg_errno;
    if (!join_errno && c->n) {
        char num[32];
        snprintf(num, sizeof num, "%d", (int)getpid());
        for (int i = 0; i < c->n && !join_errno; i++)  /* the grace period is waited here */
            if (write_file(c->dirs[i], "cgroup.procs", num)) join_errno = errno ? errno : EIO;
    }
    FILE *in = fdopen(fd, "r");
    if (!in) _exit(2);
    struct req r;
    const char *why = NULL;
    int got = read_req(in, &r, &why);
    if (got == 0 && !once) _exit(0);  /* no more requests */
    if (got == 0) reply_error("bad request: no \"run\" line");
    else if (got < 0) reply_error("bad request: %s", why);
    else if (cg_errno) reply_error("cannot create the run's cgroup: %s", strerror(cg_errno));
    else if (join_errno) reply_error("cannot join the run's cgroup: %s", strerror(join_errno));
    else if (cg_limits(&r, c)) reply_error("cannot set the run's limits: %s", strerror(errno));
    else run(&r, c);
    fflush(stdout);
    _exit(replied_error ? 3 : once && program_failed ? 1 : 0);
}

static unsigned long stubs;

static struct stub stub_prepare(const char *cpus) {
    struct stub s;
    memset(&s, 0, sizeof s);
    s.pid = s.fd = -1;
    int set = (int)(stubs++ % 2);
    runs++;
    int cg_errno = cg_prepare(&s.cg, set, runs, cpus) ? (errno ? errno : EIO) : 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC)) die("pipe: %s", strerror(errno));
    fflush(stdout);
    s.pid = fork();
    if (s.pid < 0) die("fork: %s", strerror(errno));
    if (s.pid == 0) {
        close(p[1]);
        stub_main(p[0], &s.cg, cg_errno);
    }
    close(p[0]);
    s.fd = p[1];
    return s;
}

/* One request's text, through its "run" line: 1; 0 at the end of input. */
static int read_raw(FILE *from, char **buf, size_t *len, char *cpus, size_t cpus_size) {
    static char *line;
    static size_t cap;
    size_t used = 0;
    ssize_t n;
    int any = 0;
    cpus[0] = 0;  /* a request without "cpus": the next run's cpuset gets the shard's */
    while ((n = getline(&line, &cap, from)) > 0) {
        any = 1;
        char *grown = realloc(*buf, used + (size_t)n + 1);
        if (!grown) die("out of memory");
        *buf = grown;
        memcpy(*buf + used, line, (size_t)n);
        used += (size_t)n;
        if (!strncmp(line, "cpus ", 5)) {  /* the next run's cpuset is made ready with it */
            snprintf(cpus, cpus_size, "%.*s", (int)(n - 5), line + 5);
            cpus[strcspn(cpus, "\n")] = 0;
        }
        if (!strcmp(line, "run\n") || !strcmp(line, "run")) break;
    }
    *len = used;
    return any;
}

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;  /* the stub died: the judge sees no reply and says JE */
        buf += w;
        len -= (size_t)w;
    }
}

/* Nothing we inherited beyond stdin, stdout and stderr stays open: an srun task
   inherits the stepd's listening socket (and a launcher may leak more). */
static void close_inherited(void) {
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
    long max = sysconf(_SC_OPEN_MAX);  /* Linux < 5.9 */
    for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close((int)fd);
}

/* The reused cgroups (v1), once no run needs them. */
static void cg_cleanup(void) {
    for (int set = 0; set < 2; set++) {
        if (!reuse_made[set]) continue;
        for (int i = 0; i < ncg; i++) {
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s/reuse%d", cgs[i].dir, set);
            rmdir(dir);
        }
    }
}

/* --once FILE: the one request in FILE, run as any other, its reply on stdout. */
static int run_once(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) {
        reply_error("cannot read the request %s: %s", path, strerror(errno));
        return 2;
    }
    char cpus[256] = "";
    char *buf = NULL;
    size_t len = 0;
    read_raw(f, &buf, &len, cpus, sizeof cpus);
    fclose(f);
    struct stub s = stub_prepare(cpus[0] ? cpus : NULL);
    write_all(s.fd, buf ? buf : "", len);
    close(s.fd);
    int st = 0;
    while (waitpid(s.pid, &st, 0) < 0 && errno == EINTR) {}
    cg_remove(&s.cg);
    cg_cleanup();
    free(buf);
    if (WIFSIGNALED(st)) reply_error("the run's stub died (signal %d)", WTERMSIG(st));
    if (WIFEXITED(st) && WEXITSTATUS(st) <= 1) return WEXITSTATUS(st);  /* 1: it failed */
    return 2;
}

int main(int argc, char **argv) {
    close_inherited();
    const char *once_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cgroup-v1") && i + 1 < argc && ncg < MAXCG) {
            char *eq = strchr(argv[++i], '=');
            if (!eq) die("--cgroup-v1 wants CTRL=DIR");
            snprintf(cgs[ncg].ctrl, sizeof cgs[ncg].ctrl, "%.*s", (int)(eq - argv[i]), argv[i]);
            snprintf(cgs[ncg].dir, sizeof cgs[ncg].dir, "%s", eq + 1);
            ncg++;
        } else if (!strcmp(argv[i], "--cgroup-v2") && i + 1 < argc) {
            cg_v2 = 1;
            snprintf(cgs[0].ctrl, sizeof cgs[0].ctrl, "unified");
            snprintf(cgs[0].dir, sizeof cgs[0].dir, "%s", argv[++i]);
            ncg = 1;
        } else if (!strcmp(argv[i], "--once") && i + 1 < argc) {
            once = 1;
            once_file = argv[++i];
        } else if (!strcmp(argv[i], "--version")) {
            printf("gl-runner 1\n");
            return 0;
        } else {
            die("unknown option %s", argv[i]);
        }
    }
    signal(SIGPIPE, SIG_IGN);
    if (once) return run_once(once_file);
    printf("ready: gl-runner 1 uid %d\n\n", (int)getuid());
    fflush(stdout);
    char cpus[256] = "";
    char *buf = NULL;
    size_t len = 0;
    struct stub next = stub_prepare(NULL);
    while (read_raw(stdin, &buf, &len, cpus, sizeof cpus)) {
        struct stub cur = next;
        write_all(cur.fd, buf, len);
        close(cur.fd);
        next = stub_prepare(cpus[0] ? cpus : NULL);  /* joins its cgroups while cur runs */
        while (waitpid(cur.pid, NULL, 0) < 0 && errno == EINTR) {}
        cg_remove(&cur.cg);
    }
    close(next.fd);
    while (waitpid(next.pid, NULL, 0) < 0 && errno == EINTR) {}
    cg_remove(&next.cg);
    cg_cleanup();
    free(buf);
    return 0;
}
