"""A Gradescope autograder as a course gives it: a directory or ``autograder.zip`` with
``setup.sh`` and ``run_autograder`` at its root (Gradescope's "Autograder
Specifications"), checked before anything runs.

The zip is the course's, but it is unpacked by gradeline: members that would land
outside the autograder (absolute paths, ``..``), links, and archives that unpack to
more than ``MAX_UNPACKED`` bytes are refused. The most common mistake, zipping the
folder instead of its files, is named with its remedy.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.core.errors import ConfigError
from grader.formats.gradescope.otter import RECIPE, RUN, SETUP, OtterSetup, is_otter, otter_setup

REQUIRED = ("setup.sh", "run_autograder")
MAX_UNPACKED = 512 << 20  # an autograder's source, unpacked
MAX_MEMBERS = 20_000


class AutograderError(ConfigError):
    """The autograder cannot be used as given; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Autograder:
    """An autograder's files, checked (``root`` is a directory: the course's own, or
    where its zip was unpacked)."""

    root: Path
    files: tuple[str, ...]  # relative paths, sorted
    digest: str  # sha256 over every file's path, mode and bytes: the per-assignment image's key
    #: an Otter-Grader autograder: built with pip and run without conda (``otter``)
    otter: OtterSetup | None = None

    @property
    def setup(self) -> Path:
        return self.root / "setup.sh"

    @property
    def run_autograder(self) -> Path:
        return self.root / "run_autograder"

    def setup_script(self) -> bytes:
        """What the image build runs: the autograder's setup.sh, or gradeline's pip-only
        build of an Otter autograder."""
        return SETUP.encode() if self.otter is not None else self.setup.read_bytes()

    def run_script(self) -> bytes:
        """What each submission's run starts: run_autograder, or Otter's run_otter.py
        with the environment the build made."""
        return RUN.encode() if self.otter is not None else self.run_autograder.read_bytes()


def _require_top(names: set[str], where: str,
                 required: tuple[str, ...] = REQUIRED) -> None:
    missing = [r for r in required if r not in names]
    if not missing:
        return
    nested = sorted({n.split("/", 1)[0] for n in names if "/" in n
                     and all(f"{n.split('/', 1)[0]}/{r}" in names for r in REQUIRED)})
    hint = (f"; they are in {nested[0]}/: zip the files, not the folder that holds them"
            if nested else "")
    raise AutograderError(f"{where}: no {' and no '.join(missing)} at its root{hint}")


def unpack(zip_path: Path, dest: Path) -> Path:
    """``autograder.zip`` unpacked into ``dest`` (which must not exist yet)."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as e:
        raise AutograderError(f"{zip_path}: not a zip archive: {e}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise AutograderError(f"{zip_path}: {len(infos)} members, over {MAX_MEMBERS}")
        if sum(i.file_size for i in infos) > MAX_UNPACKED:
            raise AutograderError(f"{zip_path}: unpacks to more than {MAX_UNPACKED >> 20} MiB")
        names = set()
        for i in infos:
            p = PurePosixPath(i.filename)
            if p.is_absolute() or ".." in p.parts or "\\" in i.filename:
                raise AutograderError(f"{zip_path}: member {i.filename!r} would land "
                                      "outside the autograder")
            if stat.S_ISLNK(i.external_attr >> 16):
                raise AutograderError(f"{zip_path}: member {i.filename!r} is a link")
            if not i.is_dir():
                names.add(str(p))
        _require_top(names, str(zip_path))
        dest.mkdir(parents=True)
        for i in infos:
            target = dest / i.filename
            if i.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(i) as src, target.open("wb") as out:  # zipfile stops at the
                shutil.copyfileobj(src, out)  # declared size, which was counted above
            mode = (i.external_attr >> 16) & 0o777
            target.chmod((mode | 0o644) & 0o755 if mode else 0o644)
    for name in REQUIRED:  # scripts Gradescope runs, whatever the zip kept of their mode
        (dest / name).chmod(0o755)
    return dest


def load_autograder(path: Path, required: tuple[str, ...] = REQUIRED) -> Autograder:
    """The autograder in directory ``path`` (unpack a zip first: :func:`unpack`); a
    unit-test assignment's setup directory needs only ``setup.sh``."""
    if not path.is_dir():
        raise AutograderError(f"{path}: not a directory (an autograder.zip is unpacked "
                              "with gradeline's unpack first)")
    files, h = [], hashlib.sha256()
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        if p.is_symlink():
            raise AutograderError(f"{path}: {rel} is a link; an autograder's files are its own")
        if p.is_file():
            files.append(rel)
            x = b"x" if p.stat().st_mode & 0o111 else b"-"
            h.update(rel.encode() + b"\0" + x + p.read_bytes() + b"\0")
    _require_top(set(files), str(path), required)
    if is_otter(tuple(files)):
        setup = otter_setup(path)
        h.update(RECIPE.encode())  # a changed build makes another image
        return Autograder(root=path, files=tuple(files), digest=h.hexdigest(), otter=setup)
    return Autograder(root=path, files=tuple(files), digest=h.hexdigest())


def load_setup(path: Path) -> Autograder:
    """A unit-test assignment's setup directory: ``setup.sh`` and what it needs, built
    into the assignment's image as an autograder's source is."""
    return load_autograder(path, ("setup.sh",))


def open_autograder(src: Path, scratch: Path) -> Autograder:
    """The autograder at ``src``: a directory, or a zip unpacked once under ``scratch``
    (keyed by the zip's bytes, so a changed zip is unpacked again)."""
    if src.is_dir():
        return load_autograder(src)
    try:
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    except OSError as e:
        raise AutograderError(f"{src}: cannot read it: {e.strerror}") from None
    dest = scratch / digest
    if not dest.is_dir():
        scratch.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=scratch))
        try:
            unpack(src, tmp / "ag")
            (tmp / "ag").rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return load_autograder(dest)
