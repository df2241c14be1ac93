"""Per-assignment images: the grading image plus what a Gradescope autograder's
``setup.sh`` installs. Gradescope runs ``setup.sh`` once, when the autograder is
uploaded, with the network; so does gradeline, when the image is built, and never while
grading. The image is named by the base image and the autograder's content hash
(``grader-<def>+ag-<autograder>``), so a changed autograder or a new grading image
builds a new one, and every pilot and array task of the assignment shares it.

The build copies the base root file system (reflinked where the file system can), puts
the autograder at ``/autograder/source`` as Gradescope does, and runs ``setup.sh`` there
as root in bubblewrap with the host's network and nothing else of the host; for
Apptainer the SIF is squashed from the result. Two things make scripts written for
Gradescope's Ubuntu images run unchanged on the Debian grading image: the package lists
are fetched first (their ``apt-get install`` assumes them), and ``pip install`` may
install system-wide (``PIP_BREAK_SYSTEM_PACKAGES``, as on Ubuntu 22.04). It needs
root, as the base image's build does (debootstrap, and a ``setup.sh`` that installs packages).
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.sandbox.image import (
    MARKER,
    Image,
    ImageStore,
    Runtime,
    build_lock,
    build_sif,
    install_tree,
    loopback_hosts,
)
from grader.core.errors import ImageError
from grader.formats.gradescope.autograder import Autograder, load_setup, open_autograder
from grader.formats.problem import Problem

log = logging.getLogger(__name__)

MARK = "+ag-"
SETUP_TIMEOUT_S = 3600.0
SETUP_LOG = ".gradeline-setup.log"
HOST_NETWORK_FILES = ("etc/resolv.conf", "etc/ssl/certs/ca-certificates.crt",
                      "etc/ssl/certs/java/cacerts")  # Maven's and Gradle's trust store
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
#: Gradescope's images come with package lists, and setup.sh scripts written for them
#: run ``apt-get install`` without an update; the grading image has none (dropped to
#: keep it small): fetched before setup.sh, dropped again after it
#: before setup.sh: the package lists its apt-get install assumes, and the manual
#: directories the grading image dropped (a JDK's or Maven's postinst links into them)
APT_UPDATE = ("mkdir -p /usr/share/man/man1 /usr/share/man/man5 /usr/share/man/man7 "
              "/usr/share/man/man8; "
              "apt-get update -qq >/dev/null 2>&1 || echo 'apt-get update failed' >&2")


def assignment_image_path(base: Path, digest: str) -> Path:
    """Where the image of the autograder with ``digest`` on ``base`` lives (a SIF
    beside a SIF, a directory beside a directory)."""
    if base.suffix == ".sif":
        return base.with_name(f"{base.stem}{MARK}{digest[:12]}.sif")
    return base.with_name(f"{base.name}{MARK}{digest[:12]}")


@dataclass(frozen=True, slots=True)
class Built:
    """An assignment image and whether this call built it."""

    image: Image
    built: bool
    seconds: float


def image_autograder(problem: Problem, scratch: Path) -> Autograder | None:
    """The autograder whose ``setup.sh`` makes the package's own image, or None when the
    package is graded on the grading image itself (Kattis without ``setup:``, ``image:
    base``, unit tests without a setup directory). A zip is unpacked under ``scratch``."""
    if problem.autograder_image != "assignment":
        return None
    if problem.setup is not None:  # a Kattis package with a setup.sh of its own
        return load_setup(problem.setup)
    unit = problem.unit_tests
    if unit is not None:
        return load_setup(unit.setup) if unit.setup is not None else None
    return open_autograder(problem.autograder, scratch) if problem.autograder else None


def ensure_assignment_images(store: ImageStore, definition: Path, runtime: Runtime,
                             problems: Iterable[tuple[str, Problem]], scratch: Path,
                             say: Callable[[str], None]) -> list[Built]:
    """Every image the named packages grade on, built where missing, before any grading:
    a batch must not turn a missing image into a judge error for each of its students.
    Runs on the serving host (``check``, ``run``, ``serve``, ``deadline``, ``regrade``),
    never in a Slurm task: a task only looks its image up.

    :param say: a progress line per image it builds (a build takes minutes).
    :raises ImageError: when one is missing and cannot be built here (not root, or its
        setup.sh failed), naming the package and the command that builds it.
    """
    out: list[Built] = []
    seen: set[str] = set()
    for name, problem in problems:
        ag = image_autograder(problem, scratch)
        if ag is None or ag.digest in seen:
            continue
        seen.add(ag.digest)
        target = assignment_image_path(store.ensure(definition, runtime).path, ag.digest)
        if not _marker(target, runtime).exists():
            if os.geteuid() != 0:
                raise ImageError(
                    f"{name}: the image its setup.sh makes ({target.name}) is not built, "
                    "and only root builds one: run 'gradeline image build --assignment "
                    f"{problem.path}' as root (nothing was graded)")
            say(f"{name}: building its image (setup.sh in a copy of the grading image; "
                "once, then kept by content hash) ...")
        try:
            built = build_assignment_image(store, definition, runtime, ag)
        except ImageError as e:
            raise ImageError(f"{name}: {e} (nothing was graded)") from e
        if built.built:
            say(f"{name}: image {built.image.image_id} built in {built.seconds:.0f} s")
        out.append(built)
    return out


def _marker(path: Path, runtime: Runtime) -> Path:
    return path if runtime == "apptainer" else path / MARKER


def build_assignment_image(store: ImageStore, definition: Path, runtime: Runtime,
                           ag: Autograder, *, force: bool = False) -> Built:
    """The assignment's image, built first when missing (or ``force``).

    :raises ImageError: without root, or when ``setup.sh`` fails (naming the command
        it failed at, with the end of its output).
    """
    t0 = time.monotonic()
    base = store.ensure(definition, runtime)
    target = assignment_image_path(base.path, ag.digest)
    image_id = target.name.removesuffix(".sif")
    found = Image(runtime, target, image_id, base.environment)
    if _marker(target, runtime).exists() and not force:
        return Built(found, False, time.monotonic() - t0)
    if os.geteuid() != 0:
        raise ImageError("an assignment's image is built by running its setup.sh as root in "
                         "a copy of the grading image: run 'gradeline image build "
                         "--assignment PACKAGE' as root (where the grading image is built)")
    rootfs = store.ensure(definition, "bwrap").path  # the tree the base SIF is made of
    rootfs_target = assignment_image_path(rootfs, ag.digest)
    with build_lock(store.root / ".build.lock"):
        if force or not _marker(rootfs_target, "bwrap").exists():
            _build_rootfs(rootfs, rootfs_target, ag)
        if runtime == "apptainer":
            build_sif(rootfs_target, target)
    log.info("built %s image %s in %.1f s", runtime, target, time.monotonic() - t0)
    return Built(found, True, time.monotonic() - t0)


def _build_rootfs(base: Path, target: Path, ag: Autograder) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".build-ag-", dir=target.parent))
    try:
        subprocess.run(["cp", "-a", "--reflink=auto", f"{base}/.", str(tmp)], check=True,
                       capture_output=True)
        (tmp / MARKER).unlink()
        shutil.rmtree(tmp / "autograder", ignore_errors=True)
        shutil.copytree(ag.root, tmp / "autograder" / "source", symlinks=False)
        if ag.run_autograder.is_file():  # a unit-test assignment's setup has none
            (tmp / "autograder" / "run_autograder").write_bytes(ag.run_script())
            (tmp / "autograder" / "run_autograder").chmod(0o755)
        script = "./setup.sh"
        if ag.otter is not None:  # gradeline's pip-only build instead of conda's
            for warning in ag.otter.warnings:
                log.warning("%s: %s", ag.root.name, warning)
            (tmp / "autograder" / "otter-requirements.txt").write_text(
                "\n".join(ag.otter.requirements) + "\n")
            (tmp / "autograder" / "otter-setup.sh").write_bytes(ag.setup_script())
            script = "/autograder/otter-setup.sh"
        saved = _lend_host_files(tmp)
        r = _setup(tmp, script)
        (tmp / SETUP_LOG).write_bytes(r.stdout + r.stderr)
        _return_host_files(tmp, saved)
        loopback_hosts(tmp)  # setup.sh may have emptied or removed the base's
        shutil.rmtree(tmp / "var" / "lib" / "apt" / "lists", ignore_errors=True)
        (tmp / "var" / "lib" / "apt" / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        if r.returncode != 0:
            raise ImageError(_failure(ag, r))
        _open_root_home(tmp / "root")
        shutil.rmtree(tmp / "autograder")  # each run gets a fresh tree at /autograder
        (tmp / "autograder").mkdir(mode=0o755)
        install_tree(tmp, target, {"base": base.name, "autograder_sha256": ag.digest})
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _open_root_home(home: Path) -> None:
    """What setup.sh installed under /root, readable (and, where its owner may run it,
    runnable) by anyone: Gradescope runs run_autograder as root, gradeline as an
    unprivileged uid, and Debian's /root is mode 700 (Otter-Grader's Miniforge lives
    there)."""
    if not home.is_dir() or home.is_symlink():
        return
    for path in [home, *home.rglob("*")]:
        st = path.lstat()
        if stat.S_ISDIR(st.st_mode):
            path.chmod(st.st_mode | 0o555)
        elif stat.S_ISREG(st.st_mode):
            path.chmod(st.st_mode | 0o444 | (0o111 if st.st_mode & 0o100 else 0))


def _lend_host_files(root: Path) -> dict[str, bytes | None]:
    """The host's name servers and trusted certificates in the image while setup.sh
    runs (its network is the host's: a site's proxy or its own CA included); the
    image's own files, to put back."""
    saved: dict[str, bytes | None] = {}
    for rel in HOST_NETWORK_FILES:
        mine, host = root / rel, Path("/") / rel
        saved[rel] = mine.read_bytes() if mine.is_file() and not mine.is_symlink() else None
        if host.is_file():
            mine.unlink(missing_ok=True)
            mine.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(host, mine)
    return saved


def _return_host_files(root: Path, saved: dict[str, bytes | None]) -> None:
    for rel, data in saved.items():
        (root / rel).unlink(missing_ok=True)
        if data is not None:
            (root / rel).write_bytes(data)


def _setup(root: Path, script: str) -> subprocess.CompletedProcess[bytes]:
    """The setup script (the autograder's ``./setup.sh``, or gradeline's build of an
    Otter autograder) as root in ``root``, from /autograder/source, with the host's
    network and nothing else of it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ImageError("bwrap is needed to run setup.sh in the image: apt-get install "
                         "bubblewrap")
    argv = [bwrap, "--bind", str(root), "/", "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--tmpfs", "/tmp", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent", "--cap-add", "ALL", "--chdir", "/autograder/source",
            "--clearenv", "--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:"
            "/usr/bin:/sbin:/bin", "--setenv", "HOME", "/root", "--setenv",
            "DEBIAN_FRONTEND", "noninteractive", "--setenv", "LANG", "C.UTF-8",
            "--setenv", "PIP_BREAK_SYSTEM_PACKAGES", "1", "--setenv", "PIP_CERT", CA_BUNDLE,
            "--setenv", "REQUESTS_CA_BUNDLE", CA_BUNDLE, "--setenv", "SSL_CERT_FILE", CA_BUNDLE,
            "--", "/bin/bash", "-c",
            f"{APT_UPDATE}; exec /bin/bash -x {script}"]
    try:
        return subprocess.run(argv, capture_output=True, check=False, timeout=SETUP_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise ImageError(f"setup.sh ran over {SETUP_TIMEOUT_S:g} s") from e


def _failure(ag: Autograder, r: subprocess.CompletedProcess[bytes]) -> str:
    """setup.sh's failure: the command it failed at (bash -x's last trace line)."""
    err = r.stderr.decode(errors="replace")
    steps = [ln for ln in err.splitlines() if ln.startswith("+")]
    step = steps[-1].lstrip("+ ") if steps else "(before its first command)"
    tail = "\n".join((r.stdout.decode(errors="replace") + err).splitlines()[-15:])
    return (f"setup.sh of {ag.root} failed (exit {r.returncode}) at: {step}\n"
            f"its last lines:\n{tail}")
