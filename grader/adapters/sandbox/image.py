"""The grading image: parse an Apptainer definition file and build it.

The definition is realised as a root file system -- mmdebstrap (debootstrap where it
is not installed) with the header's OSVersion, MirrorURL and Include, its %files
copied in, then its %post in a chroot
-- which bubblewrap runs directly; for Apptainer the SIF is squashed from that same
root file system (`apptainer build img.sif DIR`), so both runtimes run identical
bits. Without root (no debootstrap) the SIF is built by `apptainer build --fakeroot`
from the definition itself. Builds are cached under the image directory by the
definition's content hash (its text and every %files source), built in a temporary
place and renamed into place (atomic), and serialised with a lock so concurrent
callers build once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.core.errors import ImageError

log = logging.getLogger(__name__)

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
MARKER = ".gradeline-image.json"  # in a built root file system: what it was built from
BUILDER_VERSION = "4"  # bump when the realisation of a def changes (2: %files, 3: hosts,
#                       4: mmdebstrap)
#: the names a container with loopback only can resolve (debootstrap writes no
#: /etc/hosts; Apptainer binds the host's, bubblewrap nothing): Otter's kernel logger
#: and any test server that binds "localhost" need it
LOOPBACK_HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
Runtime = Literal["apptainer", "bwrap"]


@dataclass(frozen=True, slots=True)
class Definition:
    """A parsed Apptainer definition file (header keys and % sections).

    :param file_digests: sha256 of each %files source (read by ``ImageStore.load_def``),
        so that changing a file the image is built from changes its hash.
    """

    header: dict[str, str]
    sections: dict[str, str]
    text: str
    file_digests: tuple[str, ...] = ()

    @property
    def content_hash(self) -> str:
        h = hashlib.sha256((BUILDER_VERSION + "\0" + self.text).encode())
        for d in self.file_digests:
            h.update(d.encode())
        return h.hexdigest()

    @property
    def files(self) -> list[tuple[str, str]]:
        """(source relative to the definition's directory, destination in the image)."""
        out = []
        for line in self.sections.get("files", "").splitlines():
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                out.append((parts[0], parts[1] if len(parts) > 1 else parts[0]))
        return out

    @property
    def environment(self) -> dict[str, str]:
        """``export K=V`` lines of %environment (the subset bwrap can apply)."""
        env: dict[str, str] = {}
        for line in self.sections.get("environment", "").splitlines():
            m = re.match(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
            if m:
                env[m.group(1)] = m.group(2).strip().strip('"').strip("'")
        return env

    @property
    def includes(self) -> list[str]:
        return self.header.get("Include", "").replace(",", " ").split()


def parse_definition(text: str, source: str = "<def>") -> Definition:
    """Parse header ``Key: value`` lines and ``%section`` blocks.

    :raises ImageError: on a missing Bootstrap or a malformed header line.
    """
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^%([a-z]+)\b", line)
        if m:
            current = m.group(1)
            sections[current] = []
            continue
        if current is not None:
            sections[current].append(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            raise ImageError(f"{source}:{n}: header line is not 'Key: value': {line!r}")
        header[key.strip()] = value.strip()
    if "Bootstrap" not in header:
        raise ImageError(f"{source}: no 'Bootstrap:' header")
    return Definition(header, {k: "\n".join(v).strip("\n") for k, v in sections.items()}, text)


@dataclass(frozen=True, slots=True)
class Image:
    """A built image ready for a runtime."""

    runtime: Runtime
    path: Path  # rootfs directory (bwrap) or .sif file (apptainer)
    image_id: str  # "<name>-<hash12>"
    environment: dict[str, str]


def default_definition() -> Path:
    """containers/grader.def of this checkout (``GRADELINE_IMAGE_DEF`` overrides it)."""
    return Path(__file__).resolve().parents[3] / "containers" / "grader.def"


@contextlib.contextmanager
def build_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class ImageStore:
    """Builds and finds images in one directory (``<state>/images`` by default)."""

    def __init__(self, root: Path, *, mirror: str | None = None) -> None:
        self.root = root
        self.mirror = mirror  # overrides the definition's MirrorURL

    def _target(self, definition: Definition, name: str, runtime: Runtime) -> Path:
        h = definition.content_hash[:12]
        return self.root / (f"{name}-{h}.sif" if runtime == "apptainer" else f"{name}-{h}")

    def find(self, def_path: Path, runtime: Runtime) -> Image | None:
        """The cached image for this definition, or None when not built yet."""
        d = self.load_def(def_path)
        target = self._target(d, def_path.stem, runtime)
        marker = target if runtime == "apptainer" else target / MARKER
        if not marker.exists():
            return None
        return Image(runtime, target, f"{def_path.stem}-{d.content_hash[:12]}", d.environment)

    @staticmethod
    def load_def(def_path: Path) -> Definition:
        try:
            d = parse_definition(def_path.read_text(encoding="utf-8"), str(def_path))
            digests = tuple(hashlib.sha256((def_path.parent / src).read_bytes()).hexdigest()
                            for src, _ in d.files)
        except OSError as e:
            raise ImageError(f"cannot read image definition {def_path} or its %files: {e}") \
                from e
        return Definition(d.header, d.sections, d.text, digests)

    def ensure(self, def_path: Path, runtime: Runtime, *, force: bool = False) -> Image:
        """Return the cached image, building it first when needed."""
        if not force:
            found = self.find(def_path, runtime)
            if found:
                return found
        d = self.load_def(def_path)
        with build_lock(self.root / ".build.lock"):
            if not force:
                found = self.find(def_path, runtime)
                if found:
                    return found
            target = self._target(d, def_path.stem, runtime)
            t0 = time.monotonic()
            if runtime == "apptainer":
                rootfs = self._target(d, def_path.stem, "bwrap")
                if os.geteuid() == 0 and not (rootfs / MARKER).exists():
                    self._build_rootfs(d, def_path.parent, rootfs)
                self._build_sif(def_path, rootfs, target)
            else:
                self._build_rootfs(d, def_path.parent, target)
            log.info("built %s image %s in %.1f s", runtime, target, time.monotonic() - t0)
        found = self.find(def_path, runtime)
        assert found is not None
        return found

    def _build_sif(self, def_path: Path, rootfs: Path, target: Path) -> None:
        """The SIF squashed from the root file system (root), or, without root, built
        by Apptainer from the definition with --fakeroot (run in its directory)."""
        if (rootfs / MARKER).exists():
            build_sif(rootfs, target)
        else:
            build_sif(def_path, target, fakeroot=True)

    def _build_rootfs(self, d: Definition, base: Path, target: Path) -> None:
        if d.header.get("Bootstrap") != "debootstrap":
            raise ImageError(f"without apptainer only 'Bootstrap: debootstrap' definitions can "
                             f"be realised, not {d.header.get('Bootstrap')!r}")
        if os.geteuid() != 0:
            raise ImageError("building the image root file system needs root (debootstrap "
                             "and chroot); run 'sudo gradeline image build' once, or install "
                             "Apptainer")
        bootstrap = bootstrap_command()
        suite = d.header.get("OSVersion", "bookworm")
        mirror = self.mirror or d.header.get(
            "MirrorURL", "http://deb.debian.org/debian")
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # noqa: PTH101, S103 -- the sandbox uid must traverse it
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=self.root))
        os.chmod(tmp, 0o755)  # noqa: PTH101, S103 -- the image is world-readable
        try:
            cmd = [*bootstrap, "--variant=minbase"]
            if d.includes:
                cmd.append("--include=" + ",".join(d.includes))
            log.info("%s %s from %s into %s", Path(cmd[0]).name, suite, mirror, tmp)
            r = subprocess.run([*cmd, suite, str(tmp), mirror], capture_output=True, check=False)
            if r.returncode != 0:
                raise ImageError(f"{Path(cmd[0]).name} failed: " +
                                 r.stdout.decode(errors="replace")[-3000:] +
                                 r.stderr.decode(errors="replace")[-3000:])
            loopback_hosts(tmp)
            for src, dst in d.files:
                dest = tmp / dst.lstrip("/")
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(base / src, dest)
            chroot = shutil.which("chroot", path=SYSTEM_PATH) or "chroot"
            post = d.sections.get("post", "")
            if post:
                r = subprocess.run([chroot, str(tmp), "/bin/sh", "-e", "-c", post],
                                   capture_output=True, check=False,
                                   env={"PATH": SYSTEM_PATH, "LC_ALL": "C"})
                if r.returncode != 0:
                    raise ImageError("%post failed: " + r.stderr.decode(errors="replace")[-3000:])
            test = d.sections.get("test", "")
            if test:
                r = subprocess.run([chroot, str(tmp), "/bin/sh", "-e", "-c", test],
                                   capture_output=True, check=False,  # as Apptainer: the
                                   env={"PATH": SYSTEM_PATH, **d.environment})  # image env
                if r.returncode != 0:
                    raise ImageError("%test failed: " + r.stderr.decode(errors="replace")[-3000:])
            install_tree(tmp, target, {
                "definition_sha256": d.content_hash, "suite": suite, "mirror": mirror,
                "includes": d.includes, "labels": d.sections.get("labels", "")})
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def bootstrap_command() -> list[str]:
    """The program that makes a Debian root file system: mmdebstrap when installed
    (apt resolves and downloads, one dpkg run unpacks: 72 s where debootstrap took 92 s
    for the grading image, bench/results/fresh/README.md), else debootstrap. Both make
    the same minbase system with apt and the mirror's sources list, which %post uses."""
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is not None:
        # root mode: this build runs as root and chroots for %post anyway; no unshare
        return [mmdebstrap, "--mode=root", "--quiet"]
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ImageError("neither mmdebstrap nor debootstrap is installed: "
                         "apt-get install mmdebstrap")
    return [debootstrap]


def loopback_hosts(root: Path) -> None:
    """An ``/etc/hosts`` naming localhost in the root file system ``root``, unless it
    has one with content."""
    hosts = root / "etc" / "hosts"
    if hosts.is_symlink() or not hosts.is_file() or not hosts.read_text().strip():
        hosts.unlink(missing_ok=True)
        hosts.write_text(LOOPBACK_HOSTS)
        hosts.chmod(0o644)


def build_sif(source: Path, target: Path, *, fakeroot: bool = False) -> None:
    """``apptainer build`` into ``target`` (renamed into place when done): from a root
    file system, or with ``fakeroot`` from a definition file, built in its directory."""
    apptainer = shutil.which("apptainer")
    if apptainer is None:
        raise ImageError("apptainer not found; cannot build a SIF")
    tmp = target.with_suffix(".sif.tmp")
    cmd = [apptainer, "build", "--force", *(["--fakeroot"] if fakeroot else []),
           "--mksquashfs-args", "-comp zstd -Xcompression-level 3", str(tmp),
           source.name if fakeroot else str(source)]
    r = subprocess.run(cmd, capture_output=True, check=False,
                       cwd=source.parent if fakeroot else None)
    if r.returncode != 0:
        raise ImageError(f"apptainer build failed (exit {r.returncode}) for {source}: "
                         + (r.stderr + r.stdout).decode(errors="replace")[-3000:])
    tmp.chmod(0o644)
    tmp.rename(target)


def install_tree(tmp: Path, target: Path, facts: dict[str, object]) -> None:
    """A built root file system marked with what it was built from, then renamed into
    place (atomic; an older build at ``target`` is replaced)."""
    (tmp / MARKER).write_text(json.dumps(
        {**facts, "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=2))
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
