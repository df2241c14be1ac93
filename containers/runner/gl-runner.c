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
 *     cgroup, the others reused by every run (see cg_reuse);
 *   - /work = the build dir (read-only unless compiling), the requested binds, a
 *     private size-limited /tmp, an empty tmpfs over the shard's work root (other
 *     submissions, validator data), a new /proc;
 *   - a tiny init as PID 1 that starts the program, and when the program ends kills
 *     whatever it left in the namespace and reaps it: nothing survives a run;
 *   - in the program: a new session, rlimits (CPU, file size, stack, core, open
 *     files, processes; address space only without a memory cgroup), no new privileges,
 *     no capabilities (it execs as a non-root uid), CPU affinity.
 * The wall-clock limit is enforced here (poll on a pidfd); hitting it kills the PID
 * namespace. So is the CPU limit to the millisecond ("cpu_hard_ms") where the run has
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
 *            "tmpfs N" (bytes; absent: not limited), then "run".
 *   reply:   "key: value" lines, then an empty line: status (ok | error), error,
 *            exit-code, signal, cpu-time-s, wall-time-s, max-rss-bytes,
 *            memory-peak-bytes, oom-killed, wall-timed-out, cpu-timed-out, stdout-bytes,
 *            stderr-bytes, cgroup, exec-error.
 * Options: --cgroup-v1 CTRL=DIR (repeated) or --cgroup-v2 DIR: the shard's cgroup.
 * Exit: 0 on EOF; 2 when it cannot go on (the judge then reports JE).
 */
#define _GNU_SOURCE
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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXV 256
#define MAXB 8
#define MAXCG 6

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
    long long uid, gid;
};
struct report { int status; long long cpu_us, maxrss_kb; int exec_errno; };
struct cgroup { char ctrl[32]; char dir[PATH_MAX]; };

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

static void free_req(struct req *r) {
    for (int i = 0; i < r->argc; i++) free(r->argv[i]);
    for (int i = 0; i < r->envc; i++) free(r->env[i]);
    for (int i = 0; i < r->nbinds; i++) free(r->binds[i].src);
    for (int i = 0; i < r->nhide; i++) free(r->hide[i]);
    free(r->workdir); free(r->in); free(r->out); free(r->err); free(r->cpus);
    memset(r, 0, sizeof *r);
}

/* Reads one request; 1 when complete, 0 on EOF, -1 (with *why) when malformed. */
static int read_req(struct req *r, const char **why) {
    static char *line;
    static size_t cap;
    memset(r, 0, sizeof *r);
    r->uid = r->gid = -1;
    r->cpu_hard_s = r->cpu_hard_ms = r->wall_ms = r->memory = r->stack = r->procs = r->fsize = r->tmpfs = -1;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        if (!strcmp(line, "run")) {
            if (!r->argc || !r->workdir || !r->out || !r->err) { *why = "incomplete request"; return -1; }
            return 1;
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
        free(v);
        if (!strcmp(k, "writable")) r->writable = (int)num;
        else if (!strcmp(k, "fifo")) r->fifo = (int)num;
        else if (!strcmp(k, "uid")) r->uid = num;
        else if (!strcmp(k, "gid")) r->gid = num;
        else if (!strcmp(k, "cpu_hard_s")) r->cpu_hard_s = num;
        else if (!strcmp(k, "cpu_hard_ms")) r->cpu_hard_ms = num;
        else if (!strcmp(k, "wall_ms")) r->wall_ms = num;
        else if (!strcmp(k, "memory")) r->memory = num;
        else if (!strcmp(k, "stack")) r->stack = num;
        else if (!strcmp(k, "procs")) r->procs = num;
        else if (!strcmp(k, "fsize")) r->fsize = num;
        else if (!strcmp(k, "tmpfs")) r->tmpfs = num;
        /* unknown keys are ignored: newer judges may send more */
    }
    return 0;
}

static void reply_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("status: error\nerror: ");
    vprintf(fmt, ap);
    printf("\n\n");
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

/* A fresh cgroup per run (v2, or when the reused v1 one cannot be made ready). */
static int cg_create(const struct req *r, char dirs[][PATH_MAX]) {
    if (!ncg) return 0;
    char num[64];
    for (int i = 0; i < ncg; i++) {
        snprintf(dirs[i], PATH_MAX, "%s/run%lu", cgs[i].dir, runs);
        if (mkdir(dirs[i], 0755) && errno != EEXIST) return -1;
        const char *c = cgs[i].ctrl;
        if (r->memory > 0 && (!strcmp(c, "memory") || cg_v2)) {
            snprintf(num, sizeof num, "%lld", r->memory);
            write_file(dirs[i], cg_v2 ? "memory.max" : "memory.limit_in_bytes", num);
            write_file(dirs[i], cg_v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
                       cg_v2 ? "0" : num);
        }
        if (r->procs > 0 && (!strcmp(c, "pids") || cg_v2)) {
            snprintf(num, sizeof num, "%lld", r->procs);
            write_file(dirs[i], "pids.max", num);
        }
        if (!strcmp(c, "cpuset") || (cg_v2 && r->cpus)) {
            char mems[256];
            long long m = read_num(cgs[i].dir, cg_v2 ? "cpuset.mems.effective" : "cpuset.mems", NULL);
            snprintf(mems, sizeof mems, "%lld", m < 0 ? 0 : m);
            if (!cg_v2) write_file(dirs[i], "cpuset.mems", mems);
            if (r->cpus) write_file(dirs[i], "cpuset.cpus", r->cpus);
        }
    }
    return ncg;
}

/* cgroup v1: the CPU accounting, cpuset and pids cgroups of a run are reused by
 * every run of this runner (emptied, counters reset, limits rewritten only when they
 * change); the memory cgroup is fresh per run. Creating and removing four cgroups per
 * run cost ~1.5 ms of a run's ~4 ms. A memory cgroup cannot be reused cleanly: the
 * page cache a run reads (the image's compilers and interpreters) stays charged to
 * it, and reclaiming that evicts the image's files (measured: `python3 -c pass` went
 * from 19 to 90 ms); removing the cgroup hands the charge to the shard's instead.
 * v2 keeps one fresh cgroup per run (one directory holds every controller). */
static int reuse_ready = 0;
static long long reuse_procs = -2;
static char reuse_cpus[256] = "\001";
static int fresh[MAXCG];  /* this run's dir i was made for it alone: remove it after */

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

static void reuse_forget(void) {
    reuse_ready = 0;
    reuse_procs = -2;
    reuse_cpus[0] = 1;
}

/* The run's cgroups (v1), reusing what can be; 0 when they cannot be made ready
 * (the caller then makes fresh ones for everything). */
static int cg_reuse(const struct req *r, char dirs[][PATH_MAX]) {
    if (cg_v2 || !ncg) return 0;
    char num[64];
    for (int i = 0; i < ncg; i++) {
        const char *c = cgs[i].ctrl;
        fresh[i] = !strcmp(c, "memory");
        if (fresh[i]) {
            snprintf(dirs[i], PATH_MAX, "%s/run%lu", cgs[i].dir, runs);
            if (mkdir(dirs[i], 0755) && errno != EEXIST) goto undo;
            if (r->memory > 0) {
                snprintf(num, sizeof num, "%lld", r->memory);
                write_file(dirs[i], "memory.limit_in_bytes", num);
                write_file(dirs[i], "memory.memsw.limit_in_bytes", num);
            }
            continue;
        }
        snprintf(dirs[i], PATH_MAX, "%s/run", cgs[i].dir);
        if (!reuse_ready) {
            if (mkdir(dirs[i], 0755) && errno != EEXIST) goto undo;
            if (!strcmp(c, "cpuset")) {
                char mems[256];
                long long m = read_num(cgs[i].dir, "cpuset.mems", NULL);
                snprintf(mems, sizeof mems, "%lld", m < 0 ? 0 : m);
                if (write_file(dirs[i], "cpuset.mems", mems)) goto undo;
            }
        } else if (!cg_empty(dirs[i])) {
            goto undo;
        }
        if (!strcmp(c, "pids") && r->procs != reuse_procs) {
            if (r->procs > 0) snprintf(num, sizeof num, "%lld", r->procs);
            else snprintf(num, sizeof num, "max");
            if (write_file(dirs[i], "pids.max", num)) goto undo;
            reuse_procs = r->procs;
        } else if (!strcmp(c, "cpuset")) {
            char want[256];
            if (r->cpus) snprintf(want, sizeof want, "%s", r->cpus);
            else {  /* every CPU of the shard */
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/cpuset.cpus", cgs[i].dir);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd < 0 ? -1 : read(fd, want, sizeof want - 1);
                if (fd >= 0) close(fd);
                if (n <= 0) goto undo;
                want[n] = 0;
            }
            if (strcmp(want, reuse_cpus)) {
                if (write_file(dirs[i], "cpuset.cpus", want)) goto undo;
                snprintf(reuse_cpus, sizeof reuse_cpus, "%s", want);
            }
        } else if (!strcmp(c, "cpuacct")) {
            if (write_file(dirs[i], "cpuacct.usage", "0")) goto undo;
        }
    }
    reuse_ready = 1;
    return ncg;
undo:
    for (int i = 0; i < ncg; i++)
        if (fresh[i]) rmdir(dirs[i]);
    reuse_forget();
    return 0;
}

static int cg_attach(char dirs[][PATH_MAX], int n, pid_t pid) {
    char num[32];
    snprintf(num, sizeof num, "%d", (int)pid);
    for (int i = 0; i < n; i++)
        if (write_file(dirs[i], "cgroup.procs", num)) return -1;
    return 0;
}

static void cg_measure(char dirs[][PATH_MAX], int n, long long *cpu_us, long long *peak,
                       int *oom) {
    for (int i = 0; i < n; i++) {
        const char *c = cgs[i].ctrl;
        if (cg_v2) {
            long long u = read_num(dirs[i], "cpu.stat", "usage_usec");
            if (u >= 0) *cpu_us = u;
            *peak = read_num(dirs[i], "memory.peak", NULL);
            *oom = read_num(dirs[i], "memory.events", "oom_kill") > 0;
        } else if (!strcmp(c, "cpuacct")) {
            long long ns = read_num(dirs[i], "cpuacct.usage", NULL);
            if (ns >= 0) *cpu_us = ns / 1000;
        } else if (!strcmp(c, "memory")) {
            *peak = read_num(dirs[i], "memory.max_usage_in_bytes", NULL);
            *oom = read_num(dirs[i], "memory.oom_control", "oom_kill") > 0;
        }
    }
}

/* The run's CPU time so far (microseconds, every process of the run), or -1. */
static long long cg_cpu_us(char dirs[][PATH_MAX], int n) {
    for (int i = 0; i < n; i++) {
        if (cg_v2) return read_num(dirs[i], "cpu.stat", "usage_usec");
        if (!strcmp(cgs[i].ctrl, "cpuacct")) {
            long long ns = read_num(dirs[i], "cpuacct.usage", NULL);
            return ns < 0 ? -1 : ns / 1000;
        }
    }
    return -1;
}

static void cg_remove(char dirs[][PATH_MAX], int n, int reused) {
    for (int i = 0; i < n; i++) {
        if (reused && !fresh[i]) continue;  /* kept for the next run, removed at our exit */
        if (cg_v2) write_file(dirs[i], "cgroup.kill", "1");
        for (int tries = 0; tries < 2000 && rmdir(dirs[i]) && errno == EBUSY; tries++)
            usleep(500);  /* zombies leave the cgroup as they are released */
    }
}

/* --- the run's namespaces ----------------------------------------------------- */

static int fail_pipe = -1;

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

static void bind(const char *src, const char *dst, int rw) {
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

static void write_id_maps(pid_t pid, long long inner, long long outer_uid, long long outer_gid) {
    char path[64], map[64];
    /* An unprivileged writer must deny setgroups before writing gid_map; root keeps it,
       so that the run can drop root's supplementary groups with setgroups(0). */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) { if (write(fd, "deny", 4) < 0) {} close(fd); }
    }
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(map, sizeof map, "%lld %lld 1", inner, outer_uid);
    if (write_file("/", path + 1, map)) die("uid_map: %s", strerror(errno));
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(map, sizeof map, "%lld %lld 1", inner, outer_gid);
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
    if (r->memory > 0 && !memory_cgroup) LIM(RLIMIT_AS, r->memory + 64LL * 1024 * 1024);
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
    environ = (char **)r->env;
    execvp(r->argv[0], (char *const *)r->argv);
    /* exec failed: the program's own problem (no such file), reported as exit 127 */
    int e = errno;
    if (write(report_fd, &e, sizeof e) < 0) {}
    _exit(127);
}

/* PID 1 of the run's namespace: start the program, reap everything, report. */
static int init_main(const struct req *r, int gate, int report, int in, int out, int err,
                     int memory_cgroup) {
    char c;
    if (read(gate, &c, 1) != 1) _exit(125);  /* the runner did not release us */
    close(gate);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) setup_fail("make / private");
    bind(r->workdir, "/work", r->writable);
    for (int i = 0; i < r->nbinds; i++) bind(r->binds[i].src, r->binds[i].dst, r->binds[i].rw);
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
    pid_t prog = fork();
    if (prog < 0) setup_fail("fork");
    if (prog == 0) { close(exec_pipe[0]); exec_program(r, in, out, err, memory_cgroup, exec_pipe[1]); }
    close(exec_pipe[1]); close(in); close(out); close(err);
    struct report rep = {0};
    if (read(exec_pipe[0], &rep.exec_errno, sizeof rep.exec_errno) != sizeof rep.exec_errno)
        rep.exec_errno = 0;
    close(exec_pipe[0]);
    int st;
    struct rusage ru;
    pid_t p;
    for (;;) {  /* reap the program and everything it left (orphans come to PID 1) */
        p = wait4(-1, &st, 0, &ru);
        if (p < 0) { if (errno == EINTR) continue; break; }
        rep.cpu_us += ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec +
                      ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
        if (ru.ru_maxrss > rep.maxrss_kb) rep.maxrss_kb = ru.ru_maxrss;
        if (p == prog) { rep.status = st; kill(-1, SIGKILL); }
    }
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

static void run(struct req *r) {
    int in = r->fifo && r->in ? open_fifo(r->in, O_RDONLY)
                              : open(r->in ? r->in : "/dev/null", O_RDONLY | O_CLOEXEC);
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
    /* The program's descriptors must survive exec in the init: clear CLOEXEC there. */
    char dirs[MAXCG][PATH_MAX];
    runs++;
    int reused = cg_reuse(r, dirs) > 0;
    int ncgs = reused ? ncg : cg_create(r, dirs);
    if (ncgs < 0) { reply_error("cannot create the run's cgroup: %s", strerror(errno)); goto close_files; }
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
    /* Map the run's uid: ours (unprivileged), or the slot's (we are root). */
    long long uid = r->uid >= 0 ? r->uid : (long long)getuid();
    long long gid = r->gid >= 0 ? r->gid : (long long)getgid();
    write_id_maps(init, uid, uid, gid);
    if (ncgs && cg_attach(dirs, ncgs, init)) {
        kill(init, SIGKILL);
        waitpid(init, NULL, 0);
        reply_error("cannot join the run's cgroup: %s", strerror(errno));
        cg_remove(dirs, ncgs, 0);
        if (reused) reuse_forget();
        goto close_pipes;
    }
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
    struct pollfd fds[2] = {{rep_pipe[0], POLLIN, 0}, {0, POLLHUP, 0}};
    for (;;) {
        int left = -1;
        if (r->wall_ms > 0) {
            left = (int)(r->wall_ms - (now_s() - t0) * 1000.0);
            if (left <= 0) { timed_out = 1; break; }
        }
        if (cpu_hard_us > 0) {  /* look again when the limit could first be reached */
            long long used = cg_cpu_us(dirs, ncgs);
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
    if (!killed) have = read(rep_pipe[0], &rep, sizeof rep) == (ssize_t)sizeof rep;
    double wall = now_s() - t0;
    if (killed || !have) {  /* killed, or died before reporting: reap it now */
        if (killed) kill(init, SIGKILL);  /* the namespace dies with its init */
        waitpid(init, &st, 0);
        init_reaped = 1;
        if (killed) wall = now_s() - t0;
    }
    char why[512];
    /* a report means the setup succeeded; otherwise the init has exited (reaped above) */
    ssize_t fn = have ? 0 : read(fail[0], why, sizeof why - 1);
    long long cg_cpu = -1, peak = -1;
    int oom = 0;
    if (ncgs) cg_measure(dirs, ncgs, &cg_cpu, &peak, &oom);
    if (fn > 0) {
        why[fn] = 0;
        reply_error("setting up the run failed: %s", why);
        goto finish;
    }
    int init_oom_killed = !have && !killed && oom && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    if (!have && !killed && !init_oom_killed) {
        reply_error("the run's init ended without a report (status %d)", st);
        goto finish;
    }
    struct stat so, se;
    fstat(out, &so);
    fstat(err, &se);
    printf("status: ok\n");
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
    if (peak >= 0) printf("memory-peak-bytes: %lld\n", peak);
    printf("oom-killed: %d\nwall-timed-out: %d\ncpu-timed-out: %d\nstdout-bytes: %lld\n"
           "stderr-bytes: %lld\ncgroup: %d\n\n", oom, timed_out, cpu_out, (long long)so.st_size, (long long)se.st_size,
           ncgs > 0 && memory_cgroup);
    fflush(stdout);
finish:
    if (!init_reaped) waitpid(init, &st, 0);
    cg_remove(dirs, ncgs, reused);
close_pipes:
    if (gate[1] >= 0) close(gate[1]);
    close(rep_pipe[0]); close(fail[0]);
close_files:
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (err >= 0) close(err);
}

int main(int argc, char **argv) {
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
        } else if (!strcmp(argv[i], "--version")) {
            printf("gl-runner 1\n");
            return 0;
        } else {
            die("unknown option %s", argv[i]);
        }
    }
    signal(SIGPIPE, SIG_IGN);
    printf("ready: gl-runner 1 uid %d\n\n", (int)getuid());
    fflush(stdout);
    struct req r;
    const char *why = NULL;
    int got;
    while ((got = read_req(&r, &why)) != 0) {
        if (got < 0) reply_error("bad request: %s", why);
        else run(&r);
        free_req(&r);
    }
    if (reuse_ready) {
        char dirs[MAXCG][PATH_MAX];
        for (int i = 0; i < ncg; i++) snprintf(dirs[i], PATH_MAX, "%s/run", cgs[i].dir);
        cg_remove(dirs, ncg, 0);
    }
    return 0;
}
