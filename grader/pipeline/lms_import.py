"""Bulk intake of an LMS's download (Canvas's "Download Submissions", Moodle's "Download
all submissions"): each student's hand-in spooled for the assignment with its hand-in
time, and everything else kept in quarantine with the reason, so nothing in the zip is
ever dropped.

The zip is checked as a whole before anything is spooled: a member with an absolute
path, ``..``, a link or a special file, a name twice, or more than ``MAX_MEMBERS``
members or ``MAX_UNPACKED_BYTES`` unpacked refuses the archive (no LMS writes one).
Members are then read one at a time, each at most its declared size, into a private
staging directory and spooled from there. Who a hand-in is and when it came are
``course.lms_mapping``'s decisions; a hand-in mapped to a student but without a time
refuses the whole import before anything is spooled, naming what would give one.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath

from grader.adapters.spool import Spool
from grader.core.errors import ConfigError, RefusedError
from grader.core.jobs import now_iso
from grader.course.lms_archive import Kind, Lms, LmsSubmission, Member, maybe_renamed, parse_archive
from grader.course.lms_mapping import Mapped, Times, WorksheetRow, hand_in_time, map_archive
from grader.course.load import Course
from grader.pipeline.handin import Door
from grader.pipeline.intake import Reason

MAX_MEMBERS = 100_000
MAX_UNPACKED_BYTES = 8 << 30  # a whole class's hand-ins (intake bounds each one again)


@dataclass(frozen=True, slots=True)
class Line:
    """One row of an import: a hand-in (or an unrecognised member) and its fate.

    :param student: the roster student it maps to (None: it goes to quarantine).
    :param at: when it was handed in (None: nothing says).
    :param how: what mapped it and what gave its time, or the quarantine reason.
    """

    label: str
    files: tuple[Member, ...]
    student: str | None
    late: bool
    kinds: tuple[Kind, ...]
    at: datetime | None
    how: str
    code: Reason | None = None
    deferred: bool = False  # taken past a hand-in limit that defers
    override: str = ""  # staff took it past the hand-in rule: why, and what it refused

    @property
    def quarantined(self) -> bool:
        return self.code is not None


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import spools, and what it keeps in quarantine, before it does."""

    lms: Lms
    lines: tuple[Line, ...]
    #: hints for staff (Canvas's ``-N`` renames, ...)
    notes: tuple[str, ...] = ()

    @property
    def untimed(self) -> list[Line]:
        """Hand-ins mapped to a student but with no hand-in time."""
        return [x for x in self.lines if not x.quarantined and x.at is None]


def _check_member(i: zipfile.ZipInfo) -> str | None:
    """Why this member cannot be unpacked safely, or None."""
    name = i.filename
    p = PurePosixPath(name)
    if not p.parts or p.parts == (".",):
        return "no name"
    if p.is_absolute() or "\\" in name or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if ".." in p.parts:
        return "'..' in its path"
    if "\0" in name:
        return "a NUL in its name"
    kind = (i.external_attr >> 16) & 0o170000
    if kind == stat.S_IFLNK:
        return "a link"
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        return "a special file"
    return None


def _utf8(i: zipfile.ZipInfo) -> str:
    """The member's name as written: zips without the UTF-8 flag are decoded as cp437
    by zipfile, though Moodle and Canvas write UTF-8 names."""
    if i.flag_bits & 0x800:
        return i.filename
    try:
        return i.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return i.filename


def read_members(zf: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    """The files of the zip by name, every member checked (module docstring).

    :raises ConfigError: naming the members that refuse the archive.
    """
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ConfigError(f"{where}: {len(infos)} members, over {MAX_MEMBERS}")
    if sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
        raise ConfigError(f"{where}: unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB")
    bad = [f"{i.filename!r} ({why})" for i in infos if (why := _check_member(i))]
    out: dict[str, zipfile.ZipInfo] = {}
    for i in infos:
        if not i.is_dir() and out.setdefault(_utf8(i), i) is not i:
            bad.append(f"{i.filename!r} (twice)")
    if bad:
        raise ConfigError(f"{where}: not an LMS's download as written, nothing imported: "
                          f"members {', '.join(bad[:5])}" + (" ..." if len(bad) > 5 else ""))
    return out


def _mapped_line(m: Mapped, course: Course, assignment: str,
                 worksheet: Mapping[str, WorksheetRow] | None, times: Times | None,
                 late_at: datetime | None) -> Line:
    sub = m.submission
    when = hand_in_time(m, course.assignment(assignment).deadline, worksheet=worksheet,
                        times=times, late_at=late_at)
    return Line(sub.who.label, sub.files, m.student, sub.late, sub.kinds, when.at,
                f"by {m.how}; time: {when.source}")


def _quarantined(sub: LmsSubmission, reason: str) -> Line:
    return Line(sub.who.label, sub.files, None, sub.late, sub.kinds, None, reason,
                Reason.UNMAPPED_STUDENT)


def _admitted(line: Line, door: Door, assignment: str) -> Line:
    """The hand-in rule every door follows (``pipeline.handin``) applied to a mapped
    line: taken (perhaps deferred), or kept in quarantine with the rule's reason."""
    if line.student is None or line.at is None:
        return line  # quarantined already, or refused whole for want of a time
    try:
        adm = door.admit(line.student, assignment, line.at)
    except RefusedError as e:
        return replace(line, how=str(e), code=Reason.REFUSED)
    return replace(line, deferred=adm.deferred, override=f"{adm.override} (refused: "
                   f"{adm.refused})" if adm.override else "")


def plan_import(names: Sequence[str], course: Course, assignment: str, *,
                lms: Lms | None = None, worksheet: Mapping[str, WorksheetRow] | None = None,
                times: Times | None = None, late_at: datetime | None = None,
                strip_copy_suffix: bool = False, door: Door | None = None) -> ImportPlan:
    """Every member of a download given a fate: a student and a time, or a quarantine
    reason (nothing is read but the names, and, through ``door``, the students' earlier
    hand-ins where the assignment has limits)."""
    if not course.students:
        raise ConfigError("the course file names no roster (roster: roster.csv): without "
                          "one no hand-in maps to a student")
    archive = parse_archive(names, lms, strip_copy_suffix=strip_copy_suffix)
    mapped, unmapped = map_archive(archive, course.students, worksheet)
    lines = [_mapped_line(m, course, assignment, worksheet, times, late_at) for m in mapped]
    if door is not None:
        lines = [_admitted(x, door, assignment) for x in lines]
    lines += [_quarantined(u.submission, u.reason) for u in unmapped]
    lines += [Line(u.member, (Member(u.member, u.member, "file"),), None, False, ("file",),
                   None, u.reason, Reason.UNRECOGNISED_ENTRY) for u in archive.unrecognised]
    renamed = sorted(p for s in archive.submissions for p in maybe_renamed(s))
    notes = (f"{len(renamed)} file name(s) end in -N as Canvas renames a repeated name "
             f"({', '.join(renamed[:3])}{' ...' if len(renamed) > 3 else ''}): spooled as "
             "named; --strip-copy-suffix spools them without it",) if renamed else ()
    return ImportPlan(archive.lms, tuple(lines), notes)


@dataclass
class ImportReport:
    """What an import did: the spool id of each line, in the plan's order."""

    plan: ImportPlan
    ids: list[str]

    @property
    def spooled(self) -> int:
        return sum(1 for x in self.plan.lines if not x.quarantined)

    @property
    def quarantined(self) -> int:
        return sum(1 for x in self.plan.lines if x.quarantined)


def _extract(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """One member to ``target``, at most its declared size (which was counted)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zf.open(info) as src, target.open("xb") as out:
        shutil.copyfileobj(src, out)


def _stage(zf: zipfile.ZipFile, members: Mapping[str, zipfile.ZipInfo], line: Line,
           root: Path) -> Path:
    """The line's files laid out under ``root``: the one file, or a directory of them;
    a quarantined line's under their names in the zip, as staff will look for them."""
    root.mkdir()
    paths = [f.path if not line.quarantined else f.member for f in line.files]
    single = len(paths) == 1 and "/" not in paths[0]
    base = root if single else root / (line.label.replace("/", "_") or "submission")
    for f, rel in zip(line.files, paths, strict=True):
        target = base / rel
        if root.resolve() not in target.resolve().parents:
            raise ConfigError(f"{f.member!r} would land outside its submission")
        _extract(zf, members[f.member], target)
    return base / paths[0] if single else base


def refuse_untimed(plan: ImportPlan) -> None:
    """:raises ConfigError: when a hand-in mapped to a student has no time, naming them
    and what gives one (a time is never guessed)."""
    missing = plan.untimed
    if missing:
        names = ", ".join(f"{x.label} ({x.student})" for x in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        fix = ("--late-at TIME (one time for every late one) or --times CSV (each's own)"
               if plan.lms == "canvas" else "--worksheet (Moodle's grading worksheet) or "
               "--times CSV")
        raise ConfigError(f"{len(missing)} hand-in(s) have no hand-in time: {names}{more}; "
                          f"give {fix}. Nothing was spooled")


def spool_import(archive: Path, plan: ImportPlan, spool: Spool, *, course: str,
                 assignment: str) -> ImportReport:
    """Spool every line of ``plan`` from ``archive``: a mapped hand-in into new/ (with
    its time), anything else straight into quarantine/ with its reason.

    :raises ConfigError: when a mapped hand-in has no time (nothing is spooled then).
    """
    refuse_untimed(plan)
    ids = []
    with zipfile.ZipFile(archive) as zf, \
            tempfile.TemporaryDirectory(prefix="gradeline-import-") as tmp:
        members = read_members(zf, str(archive))
        for n, line in enumerate(plan.lines):
            path = _stage(zf, members, line, Path(tmp) / str(n))
            at = line.at.isoformat() if line.at is not None else now_iso()
            entry = spool.submit(
                course=course, assignment=assignment, path=path, submitted_at=at,
                student=line.student or f"?{line.label}", deferred=line.deferred,
                override=line.override,
                quarantine=(str(line.code), line.how) if line.code is not None else None)
            ids.append(entry.id)
            shutil.rmtree(Path(tmp) / str(n))
    return ImportReport(plan, ids)
