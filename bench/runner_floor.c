/* runner_floor: what each part of a run's isolation costs, in the container gl-runner
 * runs in (bench/runner_floor.py compiles it and starts it there). Each step adds one
 * part of what gl-runner does per run (containers/runner/gl-runner.c, CONTRACT.md):
 *   fork     fork, exec /bin/true, wait: the bare program
 *   pidns    + a new user and PID namespace with the uid mapped (the run's init forks
 *            the program and reaps it: nothing survives a run)
 *   mntns    + new mount, IPC and UTS namespaces, / made private, a new /proc
 *   mounts   + the run's own mounts: /work bound read-only, private /tmp, /var/tmp, /dev/shm
 *   seal     + every mount the container left writable made read-only (mountinfo)
 *   netns    + a network namespace of the run's own: priced, not done by gl-runner (the
 *            container's empty one is shared by its runs, which come one at a time)
 * Usage: runner_floor N WORKDIR UID GID (the run's ids: ours, or as root the slot's
 * sandbox ids, as gl-runner maps them; "-" for our own); prints "step median_us mean_us" per step and
 * "mountpoints M" (mount points in this namespace: what CLONE_NEWNS copies). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { FORK, PIDNS, MNTNS, MOUNTS, SEAL, NETNS, NSTEPS };
static const char *names[] = {"fork", "pidns", "mntns", "mounts", "seal", "netns"};
static const char *workdir;
static long long map_uid, map_gid;  /* the run's ids, inside and out (gl-runner's) */

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void die(const char *what) { perror(what); _exit(2); }

static pid_t fork_true(void) {
    pid_t p = fork();
    if (p == 0) {
        char *argv[] = {"true", NULL}, *envp[] = {NULL};
        execve("/bin/true", argv, envp);
        _exit(127);
    }
    return p;
}

static void seal(void) {  /* gl-runner's seal_mounts, without its exceptions for binds */
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) die("mountinfo");
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *field[6];
        int n = 0;
        for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
            field[n++] = t;
        if (n < 6 || strncmp(field[5], "rw", 2)) continue;
        const char *m = field[4];
        if (!strcmp(m, "/tmp") || !strcmp(m, "/var/tmp") || !strcmp(m, "/dev/shm") ||
            !strncmp(m, "/proc", 5))
            continue;
        struct statvfs s;
        unsigned long fl = 0;
        if (statvfs(m, &s) == 0) {
            if (s.f_flag & ST_NOSUID) fl |= MS_NOSUID;
            if (s.f_flag & ST_NODEV) fl |= MS_NODEV;
            if (s.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
            if (s.f_flag & ST_NOATIME) fl |= MS_NOATIME;
            if (s.f_flag & ST_RELATIME) fl |= MS_RELATIME;
        }
        mount(NULL, m, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | fl, NULL);
    }
    fclose(f);
}

/* The run's init: its setup for this step, then the program, reaped. */
static int init(int step, int gate) {
    char c;
    if (read(gate, &c, 1) != 1) _exit(125);
    if (step >= MNTNS) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("private");
    }
    if (step >= MOUNTS) {
        if (mount(workdir, "/work", NULL, MS_BIND | MS_REC, NULL)) die("/work");
        mount(NULL, "/work", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
        static const char *t[] = {"/tmp", "/var/tmp", "/dev/shm"};
        for (int i = 0; i < 3; i++)
            if (access(t[i], F_OK) == 0 &&
                mount("none", t[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m"))
                die(t[i]);
    }
    if (step >= SEAL) seal();
    if (step >= MNTNS && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
        die("/proc");
    pid_t p = fork_true();
    int st;
    while (wait(&st) > 0 || errno == EINTR) {}
    (void)p;
    return 0;
}

static void map(pid_t pid) {
    char path[64], buf[64];
    int fd;
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
        if ((fd = open(path, O_WRONLY)) >= 0) { if (write(fd, "deny", 4) < 0) {} close(fd); }
    }
    const char *which[] = {"uid_map", "gid_map"};
    long long id[] = {map_uid, map_gid};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, which[i]);
        int n = snprintf(buf, sizeof buf, "%lld %lld 1", id[i], id[i]);
        if ((fd = open(path, O_WRONLY)) < 0 || write(fd, buf, (size_t)n) != n) die(path);
        close(fd);
    }
}

static void one(int step) {
    if (step == FORK) {
        int st;
        waitpid(fork_true(), &st, 0);
        return;
    }
    int flags = CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD;
    if (step >= MNTNS) flags |= CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
    if (step >= NETNS) flags |= CLONE_NEWNET;
    int gate[2];
    if (pipe2(gate, O_CLOEXEC)) die("pipe");
    pid_t p = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, 0);
    if (p < 0) die("clone");
    if (p == 0) { close(gate[1]); _exit(init(step, gate[0])); }
    close(gate[0]);
    map(p);
    if (write(gate[1], "1", 1) != 1) die("gate");
    close(gate[1]);
    int st;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "%s: status %d\n", names[step], st); exit(2); }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: runner_floor N WORKDIR UID GID\n"); return 2; }
    int n = atoi(argv[1]);
    workdir = argv[2];
    /* "-": our own ids, as the container gave them (an ordinary runner's case) */
    map_uid = strcmp(argv[3], "-") ? atoll(argv[3]) : (long long)getuid();
    map_gid = strcmp(argv[4], "-") ? atoll(argv[4]) : (long long)getgid();
    double *t[NSTEPS], sum[NSTEPS] = {0};
    for (int s = 0; s < NSTEPS; s++) t[s] = calloc((size_t)n, sizeof(double));
    for (int s = 0; s < NSTEPS; s++) one(s);  /* warm up */
    for (int i = 0; i < n; i++)  /* the steps interleaved: a noisy moment hits them all */
        for (int s = 0; s < NSTEPS; s++) {
            double t0 = now_us();
            one(s);
            t[s][i] = now_us() - t0;
            sum[s] += t[s][i];
        }
    for (int s = 0; s < NSTEPS; s++) {
        qsort(t[s], (size_t)n, sizeof(double), cmp);
        printf("%s %.1f %.1f\n", names[s], t[s][n / 2], sum[s] / n);
    }
    FILE *f = fopen("/proc/self/mountinfo", "re");
    int m = 0;
    char line[4096];
    while (f && fgets(line, sizeof line, f)) m++;
    printf("mountpoints %d\n", m);
    return 0;
}
