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
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.core.errors import ConfigError
from grader.formats.gradescope.otter import RECIPE, RUN, SETUP, OtterSetup, is_otter, otter_setup

REQUIRED = ("setup.sh", "run_autograder")
MAX_UNPACKED = 512 << 20  # an autograder's source, unpacked
MAX_MEMBERS = 20_000
#: what reading a member of a damaged zip raises (a bad CRC, a cut stream, an encrypted
#: member, a compression method zipfile lacks such as Deflate64)
_UNREADABLE = (zipfile.BadZipFile, EOFError, zlib.error, RuntimeError, NotImplementedError)


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


def _open_zip(zip_path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as e:
        raise AutograderError(f"{zip_path}: not a zip archive ({e}): make it again with "
                              "your zip tool, from the autograder's files") from None


def _members(zf: zipfile.ZipFile, zip_path: Path) -> set[str]:
    """The files of the zip, every member checked to land inside the autograder, and
    setup.sh and run_autograder at its root."""
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
    return names


def _check_scripts(where: str, read: Callable[[str], bytes]) -> None:
    """The two scripts as the kernel and bash will take them: run_autograder not empty
    and its ``#!`` line not ended by a carriage return (a file saved with Windows line
    endings: the kernel then looks for an interpreter named ``/bin/bash\\r``), setup.sh
    without them either (bash reads each ``\\r`` as part of a command). Its mode is
    not checked: gradeline runs it as Gradescope does, whatever the zip kept of it
    (Otter's own zips keep 0600)."""
    run = read("run_autograder")
    if not run.strip():
        raise AutograderError(f"{where}: run_autograder is empty: it is what runs for each "
                              "submission, and it writes results/results.json")
    for name, text in (("run_autograder", run.split(b"\n", 1)[0] + b"\n"),
                       ("setup.sh", read("setup.sh"))):
        if b"\r\n" in text:
            raise AutograderError(f"{where}: {name} has Windows line endings (CRLF), "
                                  "which neither the kernel nor bash reads as a script: "
                                  f"convert it with 'dos2unix {name}' (or your editor's "
                                  "LF setting) and pack the autograder again")


def check_source(src: Path, *, crc: bool = False) -> None:
    """The autograder at ``src`` (a zip or a directory) checked without unpacking it,
    as its first run would check it: a zip that opens, members inside it, setup.sh and
    run_autograder at its root (a zipped folder named with the remedy), and scripts the
    kernel and bash can run. Loading a package calls it, so that ``course check`` and
    ``check`` refuse a defective autograder before anything is graded; ``crc``: every
    member also read against its checksum (the checks afford that, not every load).

    :raises AutograderError: saying what is wrong and how to mend it.
    """
    if src.is_dir():
        files = set()
        for p in src.rglob("*"):
            if p.is_symlink():
                raise AutograderError(f"{src}: {p.relative_to(src)} is a link; an "
                                      "autograder's files are its own")
            if p.is_file():
                files.add(p.relative_to(src).as_posix())
        _require_top(files, str(src))
        _check_scripts(str(src), lambda name: _head(src / name))
        return
    with _open_zip(src) as zf:
        _members(zf, src)
        _check_scripts(str(src), lambda name: _zip_head(zf, src, name))
        if crc:
            try:
                bad = zf.testzip()
            except (*_UNREADABLE, OSError) as e:
                bad = f"{e}"
            if bad is not None:
                raise AutograderError(f"{src}: corrupt ({bad} does not read back as it "
                                      "was packed): make the zip again")


def _head(path: Path, size: int = 64 << 10) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(size)
    except OSError as e:
        raise AutograderError(f"{path}: cannot read it: {e.strerror}") from None


def _zip_head(zf: zipfile.ZipFile, src: Path, name: str, size: int = 64 << 10) -> bytes:
    try:
        with zf.open(name) as f:
            return f.read(size)
    except (*_UNREADABLE, OSError) as e:
        raise AutograderError(f"{src}: corrupt: {name} cannot be read ({e}): make the zip "
                              "again") from None


def unpack(zip_path: Path, dest: Path) -> Path:
    """``autograder.zip`` unpacked into ``dest`` (which must not exist yet)."""
    with _open_zip(zip_path) as zf:
        infos = zf.infolist()
        _members(zf, zip_path)
        dest.mkdir(parents=True)
        for i in infos:
            target = dest / i.filename
            if i.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(i) as src, target.open("wb") as out:  # zipfile stops at the
                    shutil.copyfileobj(src, out)  # declared size, counted by _members
            except _UNREADABLE as e:
                raise AutograderError(f"{zip_path}: corrupt: {i.filename} cannot be read "
                                      f"({e}): make the zip again") from None
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
