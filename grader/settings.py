"""Every knob gradeline reads from the environment, in one place.

Entry points (the ``gradeline`` command, the array-task entry) call ``load()``
once and hand the typed values down; no other module reads ``os.environ``, so
this file is the complete list of what can be configured that way.
``gradeline settings`` prints it with the values in effect.
"""

from __future__ import annotations

import math
import os
import pwd
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from grader.core.errors import ConfigError
from grader.core.secret import redact_url

RuntimeChoice = Literal["auto", "apptainer", "bwrap"]
ExecutorChoice = Literal["auto", "local", "slurm"]
DEFAULT_UID_BASE = 61000
DEFAULT_L3_MB_PER_CORE = 2.5


@dataclass(frozen=True, slots=True)
class Knob:
    """One environment variable: the Settings field it fills and what it is for (read
    off the field's declaration: ``KNOBS``)."""

    env: str
    field: str
    doc: str


Env = Mapping[str, str]
#: how a setting is read: (environment, variable name, euid) -> value, or None for the
#: field's default
Parse = Callable[[Env, str, int], Any]


def _get(env: Env, name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _text(env: Env, name: str, euid: int) -> str | None:
    return _get(env, name)


def _path(env: Env, name: str, euid: int) -> Path | None:
    value = _get(env, name)
    return Path(value) if value else None


def _paths(env: Env, name: str, euid: int) -> tuple[Path, ...]:
    return tuple(Path(p) for p in (_get(env, name) or "").split(":") if p)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _flag(env: Env, name: str, default: bool) -> bool:
    """A yes/no variable: 1/0, true/false, yes/no, on/off (any case); unset or empty:
    the default; anything else is refused, never read as the default."""
    value = _get(env, name)
    if value is None:
        return default
    if value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise ConfigError(f"{name}={value!r}: use 1 or 0 (or true/false, yes/no, on/off)")


def _off(env: Env, name: str, euid: int) -> bool:
    """On unless the variable says off."""
    return _flag(env, name, True)


def _on(env: Env, name: str, euid: int) -> bool:
    """Off unless the variable says on."""
    return _flag(env, name, False)


def _choice(allowed: tuple[str, ...], default: str | None = "auto") -> Parse:
    def parse(env: Env, name: str, euid: int) -> str | None:
        value = (_get(env, name) or default or "").lower()
        if not value:
            return None
        if value not in allowed:
            raise ConfigError(f"{name}={value!r}: use one of {', '.join(allowed)}")
        return value
    return parse


def _number(kind: type[int] | type[float]) -> Parse:
    def parse(env: Env, name: str, euid: int) -> float | None:
        value = _get(env, name)
        if value is None:
            return None
        try:
            n = kind(value)
        except ValueError:
            raise ConfigError(f"{name}={value!r} is not a number") from None
        if not math.isfinite(n):
            raise ConfigError(f"{name}={value!r} is not a finite number")
        if n <= 0:
            raise ConfigError(f"{name}={value!r} must be > 0")
        return n
    return parse


def _metrics(env: Env, name: str, euid: int) -> str | None:
    value = _get(env, name)
    if value is not None and value not in ("off", "auto", "likwid", "perf"):
        raise ConfigError(f"{name}={value!r}: use off, auto, likwid or perf")
    return None if value in (None, "off") else value


def _state_dir(env: Env, name: str, euid: int) -> Path:
    return _path(env, name, euid) or default_state_dir(env, euid)


_CONNINFO = re.compile(r"^\s*[A-Za-z_]+\s*=")  # libpq's key=value form: host=db dbname=x


def _checked_url(url: str | None, where: str) -> str | None:
    """A PostgreSQL connection string (a postgresql:// URL or libpq's key=value
    pairs), or a refusal naming where it came from; the value is not shown (it may hold
    a password)."""
    if url is None or _CONNINFO.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed [ of an IPv6 host
        parts = urlsplit("")
    if parts.scheme in ("postgresql", "postgres") and (parts.netloc or parts.path):
        return url
    seen = f" (its scheme is {parts.scheme!r})" if parts.scheme and parts.netloc else ""
    raise ConfigError(f"{where} is not a PostgreSQL URL{seen}: write "
                      "postgresql://USER@HOST:5432/DBNAME, or libpq's "
                      "'host=HOST dbname=DBNAME'")


def _db_url(env: Env, name: str, euid: int) -> str | None:
    url_file = _path(env, "GRADELINE_DB_URL_FILE", euid)
    if url_file is None:
        return _checked_url(_get(env, name), name)
    if _get(env, name):
        raise ConfigError("set GRADELINE_DB_URL or GRADELINE_DB_URL_FILE, not both")
    try:
        mode = url_file.stat().st_mode
        text = url_file.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ConfigError(f"GRADELINE_DB_URL_FILE={url_file}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"GRADELINE_DB_URL_FILE={url_file} is not UTF-8 text: it "
                          "holds one PostgreSQL URL") from None
    if mode & 0o077:
        raise ConfigError(f"GRADELINE_DB_URL_FILE={url_file} may hold a password but "
                          f"others can read it (mode {mode & 0o7777:o}): "
                          f"run 'chmod 600 {url_file}'")
    return _checked_url(text or None, f"GRADELINE_DB_URL_FILE={url_file}")


def _slurm(env: Env, name: str, euid: int) -> SlurmTask:
    return SlurmTask(*(_get(env, n) for n in name.split(", ")))


#: what an MPI rank's srun task passes into its container (``adapters.sandbox.ranks``)
TASK_PREFIXES = ("PMIX_", "SLURM_", "SLURMD_", "OMPI_", "PRTE_")


def _task_env(env: Env, name: str, euid: int) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(TASK_PREFIXES)))


def knob(env: str, doc: str, parse: Parse = _text, default: Any = None) -> Any:
    """A Settings field read from ``env`` by ``parse`` (its ``default`` when unset): the
    one declaration of a setting, from which ``from_env``, ``KNOBS`` and the settings
    page are derived."""
    meta = {"env": env, "doc": doc, "parse": parse}
    if isinstance(default, SlurmTask):
        return field(default_factory=SlurmTask, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True)
class SlurmTask:
    """Which Slurm job / array task this process runs in (all None outside Slurm)."""

    job_id: str | None = None
    array_job_id: str | None = None
    array_task_id: str | None = None
    node: str | None = None
    #: the GPUs Slurm gave the job (GRES gpu), as the node numbers them: ``0,2``
    job_gpus: str | None = None
    #: the job's nodes: how many, and their names (an MPI pilot's ranks span them)
    num_nodes: str | None = None
    nodelist: str | None = None

    def record(self) -> dict[str, str]:
        """The ``runtime.slurm`` entry of a result (keys as Slurm's variables, lower case)."""
        pairs = (("slurm_job_id", self.job_id), ("slurm_array_job_id", self.array_job_id),
                 ("slurm_array_task_id", self.array_task_id), ("slurmd_nodename", self.node),
                 ("slurm_job_gpus", self.job_gpus))
        return {k: v for k, v in pairs if v is not None}


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob gradeline reads from the environment: each field names its variable,
    what it is for, how it is read and its default."""

    state_dir: Path = knob(
        "GRADELINE_STATE_DIR", "images, scratch space, the local PostgreSQL and Slurm "
        "(default /var/lib/gradeline as root, else $XDG_STATE_HOME/gradeline)", _state_dir,
        Path("/var/lib/gradeline"))
    db_url: str | None = knob(
        "GRADELINE_DB_URL", "a site PostgreSQL URL; unset: the local server (a password in "
        "it is never printed; better keep it in a libpq passfile)", _db_url)
    db_url_file: Path | None = knob(
        "GRADELINE_DB_URL_FILE", "a file (mode 0600) holding the site URL, for a URL with a "
        "password; instead of GRADELINE_DB_URL", _path)
    spool: Path | None = knob("GRADELINE_SPOOL", "spool directory (default ./spool)", _path)
    course: str | None = knob("GRADELINE_COURSE", "course name (default 'default')")
    course_file: Path | None = knob(
        "GRADELINE_COURSE_FILE", "the course file (course.yaml: deadlines, late policy, "
        "extensions, visibility) of gradeline grades and course check", _path)
    ondemand_config: Path | None = knob(
        "GRADELINE_ONDEMAND_CONFIG", "the Open OnDemand app's configuration (default: "
        "gradeline-ondemand.yaml in the app's directory)", _path)
    desk_socket: Path | None = knob(
        "GRADELINE_DESK_SOCKET", "the student desk's socket, where students hand in and see "
        "their results (default <state>/desk/desk.sock of the grading account; students "
        "set it to that path)", _path)
    assignments: tuple[Path, ...] = knob(
        "GRADELINE_ASSIGNMENTS", "':'-separated directories of assignment packages "
        "(default: the bundled examples)", _paths, ())
    executor: ExecutorChoice = knob(
        "GRADELINE_EXECUTOR", "auto | local | slurm (auto: Slurm when a controller answers)",
        _choice(get_args(ExecutorChoice)), "auto")
    runtime: RuntimeChoice = knob(
        "GRADELINE_RUNTIME", "auto | apptainer | bwrap (auto: apptainer when on PATH)",
        _choice(get_args(RuntimeChoice)), "auto")
    image_def: Path | None = knob(
        "GRADELINE_IMAGE_DEF", "the grading image definition (default containers/grader.def "
        "of this checkout)", _path)
    image_dir: Path | None = knob(
        "GRADELINE_IMAGE_DIR", "where built images live (default <state>/images); a site "
        "points users at one an admin built, read-only to them", _path)
    debian_mirror: str | None = knob(
        "GRADELINE_DEBIAN_MIRROR", "mirror for image builds (default: the definition's "
        "MirrorURL)")
    sandbox_uid_base: int = knob(
        "GRADELINE_SANDBOX_UID_BASE", "as root: sandbox uid = base + worker slot (default "
        f"{DEFAULT_UID_BASE})", _number(int), DEFAULT_UID_BASE)
    cgroups: bool = knob("GRADELINE_CGROUPS", "0: never create per-run cgroups (rlimits "
                         "only)", _off, True)
    compile_cache: bool = knob(
        "GRADELINE_COMPILE_CACHE", "0: compile every submission, even comment-only variants "
        "(measurements)", _off, True)
    null_grading: bool = knob(
        "GRADELINE_NULL_GRADING", "benchmarks only: 1 makes pilots and array tasks record "
        "every job AC without running anything (results say runtime.null_grading), to "
        "measure the control plane alone", _on, False)
    compile_accel: bool = knob(
        "GRADELINE_COMPILE_ACCEL", "0: compile as the bare loop does: no precompiled "
        "headers, the default linker (for measurements; an image without gold)", _off, True)
    on_reject: Literal["break", "continue"] | None = knob(
        "GRADELINE_ON_REJECT", "break | continue: for every test group of every assignment, "
        "stop at the first rejected test, or run them all (default: each group's own "
        "on_reject, continue unless gradeline.yaml says break)",
        _choice(("break", "continue"), None))
    metrics: str | None = knob(
        "GRADELINE_METRICS", "off | auto | likwid | perf: count hardware events around each "
        "array task's shard", _metrics)
    fault: str = knob("GRADELINE_FAULT", "tests only: arm named crash points "
                      "(point[:instance]=crash|crash-once|pause, comma-separated)", _text, "")
    fault_dir: Path | None = knob("GRADELINE_FAULT_DIR", "tests only: where crash-once "
                                  "markers live", _path)
    resctrl_root: Path = knob("GRADELINE_RESCTRL_ROOT", "resctrl mount (default "
                              "/sys/fs/resctrl)", _path, Path("/sys/fs/resctrl"))
    sysfs_cpu: Path = knob("GRADELINE_SYSFS_CPU", "sysfs CPU tree (default "
                           "/sys/devices/system/cpu)", _path, Path("/sys/devices/system/cpu"))
    gpu_devices: Path = knob("GRADELINE_GPU_DEVICES", "where the GPUs' device files "
                             "(nvidiaN) are (default /dev; tests point it at stand-ins)",
                             _path, Path("/dev"))
    cache_log: Path = knob("GRADELINE_CACHE_LOG", "the prolog/epilog log (default "
                           "/var/log/gradeline/cache.log)", _path,
                           Path("/var/log/gradeline/cache.log"))
    cache_cpus: str | None = knob("GRADELINE_CACHE_CPUS", "prolog: the job's CPUs (default: "
                                  "from scontrol -d show job)")
    l3_mb_per_core: float = knob(
        "GRADELINE_L3_MB_PER_CORE", "L3 partition size per core in MB (default "
        f"{DEFAULT_L3_MB_PER_CORE})", _number(float), DEFAULT_L3_MB_PER_CORE)
    l3_mb_per_core_min: float = knob(
        "GRADELINE_L3_MB_PER_CORE_MIN", "prolog: the least a job may ask for with "
        "--comment=l3_mb_per_core=N (default 0.5)", _number(float), 0.5)
    l3_mb_per_core_max: float = knob(
        "GRADELINE_L3_MB_PER_CORE_MAX", "prolog: the most a job may ask for (default 4; "
        "requests beyond are clamped and logged)", _number(float), 4.0)
    slurm_conf: Path | None = knob("SLURM_CONF", "Slurm's own: the slurm.conf to talk to",
                                   _path)
    slurm: SlurmTask = knob(
        "SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURMD_NODENAME, "
        "SLURM_JOB_GPUS, SLURM_JOB_NUM_NODES, SLURM_JOB_NODELIST",
        "set by Slurm inside a job: which task this process is", _slurm, SlurmTask())

    task_env: tuple[tuple[str, str], ...] = knob(
        "PMIX_*, SLURM_*, SLURMD_*, OMPI_*, PRTE_*", "set by srun in an MPI rank's task: "
        "passed into the rank's container (its PMIx server, its step, its ports)",
        _task_env, ())

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, euid: int | None = None) -> Settings:
        """Parse an environment: each field as its declaration says.

        :raises ConfigError: naming the variable and what it accepts.
        """
        uid = os.geteuid() if euid is None else euid
        values = {}
        for f in fields(cls):
            value = f.metadata["parse"](env, f.metadata["env"], uid)
            if value is not None:
                values[f.name] = value
        return cls(**values)

    def describe(self) -> list[tuple[str, str, str]]:
        """(variable, value in effect, what it is for), in KNOBS order."""
        def shown(k: Knob) -> str:
            value = getattr(self, k.field)
            return redact_url(value) if k.field == "db_url" and value else str(value)
        return [(k.env, shown(k), k.doc) for k in KNOBS]


#: every variable, in the order of the fields (the settings page lists them)
KNOBS: tuple[Knob, ...] = tuple(Knob(f.metadata["env"], f.name, f.metadata["doc"])
                                for f in fields(Settings))


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
