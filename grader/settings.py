"""Every knob gradeline reads from the environment, in one place.

Entry points (the ``gradeline`` command, the array-task entry) call ``load()``
once and hand the typed values down; no other module reads ``os.environ``, so
this file is the complete list of what can be configured that way.
``gradeline settings`` prints it with the values in effect.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast, get_args

from grader.core.errors import ConfigError
from grader.core.secret import redact_url

RuntimeChoice = Literal["auto", "apptainer", "bwrap"]
ExecutorChoice = Literal["auto", "local", "slurm"]
DEFAULT_UID_BASE = 61000
DEFAULT_L3_MB_PER_CORE = 2.5


@dataclass(frozen=True, slots=True)
class Knob:
    """One environment variable: the Settings field it fills and what it is for."""

    env: str
    field: str
    doc: str


KNOBS: tuple[Knob, ...] = (
    Knob("GRADELINE_STATE_DIR", "state_dir", "images, scratch space, the local PostgreSQL "
         "and Slurm (default /var/lib/gradeline as root, else $XDG_STATE_HOME/gradeline)"),
    Knob("GRADELINE_DB_URL", "db_url", "a site PostgreSQL URL; unset: the local server "
         "(a password in it is never printed; better keep it in a libpq passfile)"),
    Knob("GRADELINE_DB_URL_FILE", "db_url_file", "a file (mode 0600) holding the site URL, "
         "for a URL with a password; instead of GRADELINE_DB_URL"),
    Knob("GRADELINE_SPOOL", "spool", "spool directory (default ./spool)"),
    Knob("GRADELINE_COURSE", "course", "course name (default 'default')"),
    Knob("GRADELINE_COURSE_FILE", "course_file", "the course file (course.yaml: deadlines, "
         "late policy, extensions, visibility) of gradeline grades and course check"),
    Knob("GRADELINE_DESK_SOCKET", "desk_socket", "the student desk's socket, where "
         "students hand in and see their results (default <state>/desk/desk.sock of the "
         "grading account; students set it to that path)"),
    Knob("GRADELINE_ASSIGNMENTS", "assignments", "':'-separated directories of assignment "
         "packages (default: the bundled examples)"),
    Knob("GRADELINE_EXECUTOR", "executor", "auto | local | slurm (auto: Slurm when a "
         "controller answers)"),
    Knob("GRADELINE_RUNTIME", "runtime", "auto | apptainer | bwrap (auto: apptainer when "
         "on PATH)"),
    Knob("GRADELINE_IMAGE_DEF", "image_def", "the grading image definition (default "
         "containers/grader.def of this checkout)"),
    Knob("GRADELINE_IMAGE_DIR", "image_dir", "where built images live (default "
         "<state>/images); a site points users at one an admin built, read-only to them"),
    Knob("GRADELINE_DEBIAN_MIRROR", "debian_mirror", "mirror for image builds (default: "
         "the definition's MirrorURL)"),
    Knob("GRADELINE_SANDBOX_UID_BASE", "sandbox_uid_base", "as root: sandbox uid = base + "
         "worker slot (default 61000)"),
    Knob("GRADELINE_CGROUPS", "cgroups", "0: never create per-run cgroups (rlimits only)"),
    Knob("GRADELINE_COMPILE_ACCEL", "compile_accel", "0: compile as the bare loop does: "
         "no precompiled headers, the default linker (for measurements; an image without "
         "gold)"),
    Knob("GRADELINE_ON_REJECT", "on_reject", "break | continue: for every test group of "
         "every assignment, stop at the first rejected test, or run them all (default: "
         "each group's own on_reject, continue unless gradeline.yaml says break)"),
    Knob("GRADELINE_COMPILE_CACHE", "compile_cache", "0: compile every submission, even "
         "comment-only variants (measurements)"),
    Knob("GRADELINE_METRICS", "metrics", "off | auto | likwid | perf: count hardware events "
         "around each array task's shard"),
    Knob("GRADELINE_FAULT", "fault", "tests only: arm named crash points "
         "(point[:instance]=crash|crash-once|pause, comma-separated)"),
    Knob("GRADELINE_NULL_GRADING", "null_grading", "benchmarks only: 1 makes pilots and "
         "array tasks record every job AC without running anything (results say "
         "runtime.null_grading), to measure the control plane alone"),
    Knob("GRADELINE_FAULT_DIR", "fault_dir", "tests only: where crash-once markers live"),
    Knob("GRADELINE_RESCTRL_ROOT", "resctrl_root", "resctrl mount (default /sys/fs/resctrl)"),
    Knob("GRADELINE_SYSFS_CPU", "sysfs_cpu", "sysfs CPU tree (default "
         "/sys/devices/system/cpu)"),
    Knob("GRADELINE_CACHE_LOG", "cache_log", "the prolog/epilog log (default "
         "/var/log/gradeline/cache.log)"),
    Knob("GRADELINE_CACHE_CPUS", "cache_cpus", "prolog: the job's CPUs (default: from "
         "scontrol -d show job)"),
    Knob("GRADELINE_L3_MB_PER_CORE", "l3_mb_per_core", "L3 partition size per core in MB "
         "(default 2.5)"),
    Knob("GRADELINE_L3_MB_PER_CORE_MIN", "l3_mb_per_core_min", "prolog: the least a job may "
         "ask for with --comment=l3_mb_per_core=N (default 0.5)"),
    Knob("GRADELINE_L3_MB_PER_CORE_MAX", "l3_mb_per_core_max", "prolog: the most a job may "
         "ask for (default 4; requests beyond are clamped and logged)"),
    Knob("SLURM_CONF", "slurm_conf", "Slurm's own: the slurm.conf to talk to"),
    Knob("SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURMD_NODENAME", "slurm",
         "set by Slurm inside a job: which task this process is"),
)


@dataclass(frozen=True, slots=True)
class SlurmTask:
    """Which Slurm job / array task this process runs in (all None outside Slurm)."""

    job_id: str | None = None
    array_job_id: str | None = None
    array_task_id: str | None = None
    node: str | None = None

    def record(self) -> dict[str, str]:
        """The ``runtime.slurm`` entry of a result (keys as Slurm's variables, lower case)."""
        pairs = (("slurm_job_id", self.job_id), ("slurm_array_job_id", self.array_job_id),
                 ("slurm_array_task_id", self.array_task_id), ("slurmd_nodename", self.node))
        return {k: v for k, v in pairs if v is not None}


@dataclass(frozen=True, slots=True)
class Settings:
    """The values of every knob in KNOBS (see there for what each means)."""

    state_dir: Path
    db_url: str | None = None
    db_url_file: Path | None = None
    spool: Path | None = None
    course: str | None = None
    course_file: Path | None = None
    desk_socket: Path | None = None
    assignments: tuple[Path, ...] = ()
    executor: ExecutorChoice = "auto"
    runtime: RuntimeChoice = "auto"
    image_def: Path | None = None
    image_dir: Path | None = None
    debian_mirror: str | None = None
    sandbox_uid_base: int = DEFAULT_UID_BASE
    cgroups: bool = True
    compile_cache: bool = True
    null_grading: bool = False
    compile_accel: bool = True
    on_reject: Literal["break", "continue"] | None = None  # None: each group's own
    metrics: str | None = None
    fault: str = ""
    fault_dir: Path | None = None
    resctrl_root: Path = Path("/sys/fs/resctrl")
    sysfs_cpu: Path = Path("/sys/devices/system/cpu")
    cache_log: Path = Path("/var/log/gradeline/cache.log")
    cache_cpus: str | None = None
    l3_mb_per_core: float = DEFAULT_L3_MB_PER_CORE
    l3_mb_per_core_min: float = 0.5
    l3_mb_per_core_max: float = 4.0
    slurm_conf: Path | None = None
    slurm: SlurmTask = field(default_factory=SlurmTask)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, euid: int | None = None) -> Settings:
        """Parse an environment.

        Long because it is the one place every setting is read: a few lines each.

        :raises ConfigError: naming the variable and what it accepts.
        """

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def path(name: str) -> Path | None:
            value = get(name)
            return Path(value) if value else None

        def choice(name: str, allowed: tuple[str, ...]) -> str:
            value = (get(name) or "auto").lower()
            if value not in allowed:
                raise ConfigError(f"{name}={value!r}: use one of {', '.join(allowed)}")
            return value

        def number(name: str, default: float, cast: type[int] | type[float]) -> float:
            value = get(name)
            if value is None:
                return default
            try:
                n = cast(value)
            except ValueError:
                raise ConfigError(f"{name}={value!r} is not a number") from None
            if n <= 0:
                raise ConfigError(f"{name}={value!r} must be > 0")
            return n

        def db_url() -> str | None:
            url_file = path("GRADELINE_DB_URL_FILE")
            if url_file is None:
                return get("GRADELINE_DB_URL")
            if get("GRADELINE_DB_URL"):
                raise ConfigError("set GRADELINE_DB_URL or GRADELINE_DB_URL_FILE, not both")
            try:
                mode = url_file.stat().st_mode
                text = url_file.read_text().strip()
            except OSError as e:
                raise ConfigError(f"GRADELINE_DB_URL_FILE={url_file}: {e.strerror}") from None
            if mode & 0o077:
                raise ConfigError(f"GRADELINE_DB_URL_FILE={url_file} may hold a password but "
                                  f"others can read it (mode {mode & 0o7777:o}): "
                                  f"run 'chmod 600 {url_file}'")
            return text or None

        metrics = get("GRADELINE_METRICS")
        if metrics is not None and metrics not in ("off", "auto", "likwid", "perf"):
            raise ConfigError(f"GRADELINE_METRICS={metrics!r}: use off, auto, likwid or perf")
        uid = os.geteuid() if euid is None else euid
        return cls(
            state_dir=path("GRADELINE_STATE_DIR") or default_state_dir(env, uid),
            db_url=db_url(),
            db_url_file=path("GRADELINE_DB_URL_FILE"),
            spool=path("GRADELINE_SPOOL"),
            course=get("GRADELINE_COURSE"),
            course_file=path("GRADELINE_COURSE_FILE"),
            desk_socket=path("GRADELINE_DESK_SOCKET"),
            assignments=tuple(Path(p) for p in (get("GRADELINE_ASSIGNMENTS") or "").split(":")
                              if p),
            executor=cast(ExecutorChoice, choice("GRADELINE_EXECUTOR", get_args(ExecutorChoice))),
            runtime=cast(RuntimeChoice, choice("GRADELINE_RUNTIME", get_args(RuntimeChoice))),
            image_def=path("GRADELINE_IMAGE_DEF"),
            image_dir=path("GRADELINE_IMAGE_DIR"),
            debian_mirror=get("GRADELINE_DEBIAN_MIRROR"),
            sandbox_uid_base=int(number("GRADELINE_SANDBOX_UID_BASE", DEFAULT_UID_BASE, int)),
            cgroups=get("GRADELINE_CGROUPS") != "0",
            compile_cache=get("GRADELINE_COMPILE_CACHE") != "0",
            null_grading=get("GRADELINE_NULL_GRADING") == "1",
            compile_accel=get("GRADELINE_COMPILE_ACCEL") != "0",
            on_reject=None if not get("GRADELINE_ON_REJECT") else
            cast(Literal["break", "continue"],
                 choice("GRADELINE_ON_REJECT", ("break", "continue"))),
            metrics=None if metrics in (None, "off") else metrics,
            fault=get("GRADELINE_FAULT") or "",
            fault_dir=path("GRADELINE_FAULT_DIR"),
            resctrl_root=path("GRADELINE_RESCTRL_ROOT") or Path("/sys/fs/resctrl"),
            sysfs_cpu=path("GRADELINE_SYSFS_CPU") or Path("/sys/devices/system/cpu"),
            cache_log=path("GRADELINE_CACHE_LOG") or Path("/var/log/gradeline/cache.log"),
            cache_cpus=get("GRADELINE_CACHE_CPUS"),
            l3_mb_per_core=number("GRADELINE_L3_MB_PER_CORE", DEFAULT_L3_MB_PER_CORE, float),
            l3_mb_per_core_min=number("GRADELINE_L3_MB_PER_CORE_MIN", 0.5, float),
            l3_mb_per_core_max=number("GRADELINE_L3_MB_PER_CORE_MAX", 4.0, float),
            slurm_conf=path("SLURM_CONF"),
            slurm=SlurmTask(get("SLURM_JOB_ID"), get("SLURM_ARRAY_JOB_ID"),
                            get("SLURM_ARRAY_TASK_ID"), get("SLURMD_NODENAME")),
        )

    def describe(self) -> list[tuple[str, str, str]]:
        """(variable, value in effect, what it is for), in KNOBS order."""
        def shown(k: Knob) -> str:
            value = getattr(self, k.field)
            return redact_url(value) if k.field == "db_url" and value else str(value)
        return [(k.env, shown(k), k.doc) for k in KNOBS]


def default_state_dir(env: Mapping[str, str], euid: int) -> Path:
    """Root keeps state in /var/lib/gradeline (readable by the sandbox uid, unlike
    /root); other users under $XDG_STATE_HOME (or ~/.local/state)."""
    if euid == 0:
        return Path("/var/lib/gradeline")
    xdg = env.get("XDG_STATE_HOME")
    if xdg:
        return Path(xdg) / "gradeline"
    home = env.get("HOME") or pwd.getpwuid(euid).pw_dir
    return Path(home) / ".local" / "state" / "gradeline"


def load() -> Settings:
    """The settings of this process (its environment, read now)."""
    return Settings.from_env(os.environ)
