"""Reading a course: ``course.yaml`` checked against its schema (``course.spec``) and
the roster CSV, resolved into typed values with time-zone-aware deadlines. Every
defect is one ConfigError naming the file and the place in it."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from difflib import get_close_matches
from pathlib import Path
from typing import Any, TypeVar, get_args
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ValidationError

from grader.core.errors import ConfigError
from grader.course.courseyaml import CourseYaml
from grader.course.rubric import Rubric, RubricSpec, digest
from grader.course.spec import (
    AssignmentSpec,
    BulkSpec,
    Counts,
    CourseSpec,
    LatePolicy,
    LimitsSpec,
    LmsSpec,
    RegradesSpec,
    SlurmSpec,
    StaffSpec,
    TeamsSpec,
    Visibility,
    parse_duration,
)
from grader.course.staffinput import decode, read_csv

ROSTER_REQUIRED = ("student", "name", "email")
ROSTER_OPTIONAL = ("extension", "sis_id", "section", "lms_id")
_SHOWN = 8  # defects of a course file named at once
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Student:
    """One row of the roster."""

    id: str
    name: str = ""
    email: str = ""
    extension: timedelta = timedelta(0)  # added to every deadline of theirs
    sis_id: str = ""
    section: str = ""
    #: the LMS's own id of the student (an LTI launch's sub, Canvas's user id): how a
    #: launch and a download name them
    lms_id: str = ""


@dataclass(frozen=True, slots=True)
class Assignment:
    """An assignment with its rules resolved (the course's defaults filled in)."""

    name: str
    package: Path
    deadline: datetime  # aware
    counts: Counts
    late: LatePolicy
    late_days: int | None
    visibility: Mapping[str, Visibility]
    points: float | None = None
    starter: Path | None = None  # handed-out code the similarity report leaves out
    limits: LimitsSpec = field(default_factory=LimitsSpec)  # hand-in limits
    teams: TeamsSpec | None = None  # group work (its lock in the course's zone)
    regrades: RegradesSpec | None = None  # regrade requests (none: not taken)
    #: performance measurements a student may ask for before the deadline (tokens)
    on_demand: int = 0
    rubric: Rubric | None = None  # grading by hand, where the assignment has a rubric


@dataclass(frozen=True, slots=True)
class Course:
    """A course as gradeline grades it."""

    name: str
    zone: ZoneInfo
    assignments: Mapping[str, Assignment]
    students: Mapping[str, Student] = field(default_factory=dict)
    late_days: int = 0
    bulk: BulkSpec = field(default_factory=BulkSpec)
    #: (student, assignment or None for all) -> (new deadline or None, time added)
    extensions: Mapping[tuple[str, str | None], tuple[datetime | None, timedelta]] = \
        field(default_factory=dict)
    source: Path | None = None
    slurm: SlurmSpec = field(default_factory=SlurmSpec)
    staff: StaffSpec = field(default_factory=StaffSpec)
    lms: LmsSpec = field(default_factory=LmsSpec)
    roster_source: Path | None = None  # the roster CSV the course file names

    def deadline(self, student: str, assignment: str) -> datetime:
        """The student's own deadline: the assignment's, their roster extension, then
        an extension of the course file (a new date replaces, extra time adds)."""
        a = self.assignments[assignment]
        due = a.deadline
        roster = self.students.get(student)
        if roster is not None:
            due += roster.extension
        for key in ((student, None), (student, assignment)):
            ext = self.extensions.get(key)
            if ext is not None:
                until, extra = ext
                due = (until if until is not None else due) + extra
        return due

    def assignment(self, name: str) -> Assignment:
        """:raises ConfigError: naming the assignments the course has."""
        a = self.assignments.get(name)
        if a is None:
            raise ConfigError(f"course {self.name} has no assignment {name!r} (it has: "
                              f"{', '.join(self.assignments)})")
        return a

    def ordered(self) -> list[Assignment]:
        """Assignments by deadline: the order grace days are spent in."""
        return sorted(self.assignments.values(), key=lambda a: (a.deadline, a.name))


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _keys_at(loc: tuple[int | str, ...], model: type[BaseModel] = CourseSpec) -> list[str]:
    """The keys the schema allows in the mapping at ``loc`` (a model's fields)."""
    for part in loc:
        if isinstance(part, int):
            continue
        found = model.model_fields.get(part)
        inner = [t for t in _types(found.annotation) if isinstance(t, type) and
                 issubclass(t, BaseModel)] if found is not None else []
        if not inner:
            return []
        model = inner[0]
    return list(model.model_fields)


def _types(annotation: object) -> list[object]:
    args = get_args(annotation)
    return [annotation] if not args else [t for a in args for t in _types(a)]


def _problem(err: Mapping[str, Any], model: type[BaseModel] = CourseSpec) -> str:
    """pydantic's complaint in the course file's words."""
    loc = tuple(err["loc"])
    value = err.get("input")
    if err["type"] == "extra_forbidden":
        known = _keys_at(loc[:-1], model)
        near = get_close_matches(str(loc[-1]), known, n=1, cutoff=0.75)
        return (f"unknown key {loc[-1]!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
                + (f"; the keys here are {', '.join(known)}" if known else ""))
    if err["type"] == "literal_error":
        return f"{value!r} is not a value it takes: use {err['ctx']['expected']}"
    if err["type"] == "missing":
        return "required, and missing"
    if err["type"] in ("model_type", "dict_type"):
        return f"must be a mapping (key: value lines), not {type(value).__name__}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] != "value_error" and isinstance(value, str | int | float | bool):
        msg += f", not {reprlib.repr(value)}"
    return msg


def _key(err: Mapping[str, Any]) -> str:
    """The key a complaint is about (the mapping an unknown key is in), with its colon."""
    loc = tuple(err["loc"])[:-1] if err["type"] == "extra_forbidden" else tuple(err["loc"])
    return f"{_where(loc)}: " if loc else ""


def parse_spec(data: object, source: str, doc: CourseYaml | None = None) -> CourseSpec:
    """The course file's data checked against the schema.

    :raises ConfigError: one line per defect, each with its place (file:line and key).
    """
    return parse_model(CourseSpec, data, source, doc)


def parse_model(model: type[M], data: object, source: str,
                doc: CourseYaml | None = None) -> M:
    """Staff's YAML checked against ``model`` (the course file's, a rubric's).

    :raises ConfigError: one line per defect, each with its place (file:line and key).
    """
    try:
        return model.model_validate(data)
    except ValidationError as e:
        errs = e.errors()
        lines = [f"{doc.where(tuple(err['loc'])) if doc else source}: {_key(err)}"
                 f"{_problem(err, model)}" for err in errs[:_SHOWN]]
        more = [f"... and {len(errs) - _SHOWN} more"] if len(errs) > _SHOWN else []
        raise ConfigError("\n".join(lines + more)) from None


def _aware(stamp: datetime, zone: ZoneInfo) -> datetime:
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=zone)


def read_roster(text: str, source: str) -> dict[str, Student]:
    """The roster CSV: one student a row, every row with the header's columns, ids
    unique."""
    cols, rows = read_csv(text, source)
    missing = [c for c in ROSTER_REQUIRED if c not in cols]
    unknown = [c for c in cols if c not in ROSTER_REQUIRED + ROSTER_OPTIONAL]
    if missing or unknown:
        raise ConfigError(f"{source}:1: the header must name {', '.join(ROSTER_REQUIRED)} "
                          f"(optional: {', '.join(ROSTER_OPTIONAL)}); "
                          + (f"missing {', '.join(missing)}" if missing else
                             f"unknown {', '.join(unknown)}"))
    out: dict[str, Student] = {}
    lms_ids: dict[str, str] = {}
    for r in rows:
        n, row = r.line, r.values
        sid = row["student"]
        if not sid:
            raise ConfigError(f"{source}:{n}: a row without a student id")
        if sid in out:
            raise ConfigError(f"{source}:{n}: student {sid!r} appears twice")
        try:
            ext = parse_duration(row["extension"]) if row.get("extension") else timedelta(0)
        except ValueError as e:
            raise ConfigError(f"{source}:{n}: extension: {e}") from None
        lms_id = row.get("lms_id", "")
        if lms_id and lms_ids.setdefault(lms_id, sid) != sid:
            raise ConfigError(f"{source}:{n}: lms_id {lms_id!r} is also "
                              f"{lms_ids[lms_id]!r}'s: a download's entry would be "
                              "either student's")
        out[sid] = Student(sid, row["name"], row["email"], ext, row.get("sis_id", ""),
                           row.get("section", ""), lms_id)
    return out


def _assignment(a: AssignmentSpec, spec: CourseSpec, zone: ZoneInfo, base: Path,
                where: str) -> Assignment:
    if a.starter and not (base / a.starter).exists():
        raise ConfigError(f"{where}.starter: {a.starter!r}: no such file or directory "
                          f"(relative to {base})")
    rubric = load_rubric(base / a.rubric, f"{where}.rubric") if a.rubric else None
    return Assignment(a.name, (base / a.package).resolve(), _aware(a.deadline, zone),
                      a.counts or spec.counts, a.late or spec.late, a.late_days,
                      dict(a.visibility), a.points,
                      (base / a.starter).resolve() if a.starter else None,
                      a.limits or spec.limits, _teams(a.teams, zone),
                      a.regrades or spec.regrades,
                      a.performance.on_demand if a.performance is not None else 0, rubric)


def load_rubric(path: Path, named: str = "") -> Rubric:
    """An assignment's rubric file (``course.rubric``), checked.

    :param named: where the course file names it, for a file that cannot be read.
    :raises ConfigError: naming the file and line (and key) of each defect.
    """
    try:
        text = decode(path.read_bytes(), str(path))
    except OSError as e:
        raise ConfigError(f"{named + ': ' if named else ''}{path}: cannot read the rubric: "
                          f"{e.strerror}") from None
    doc = CourseYaml(text, str(path))
    if doc.data is None:
        raise ConfigError(f"{path}: the rubric is empty: it needs questions: with items:")
    return Rubric(parse_model(RubricSpec, doc.data, str(path), doc), path.resolve(),
                  digest(text))


def _teams(t: TeamsSpec | None, zone: ZoneInfo) -> TeamsSpec | None:
    return t if t is None or t.lock is None else \
        t.model_copy(update={"lock": _aware(t.lock, zone)})


def build_course(spec: CourseSpec, base: Path, source: str,
                 students: Mapping[str, Student] | None = None,
                 doc: CourseYaml | None = None) -> Course:
    """Resolve a checked spec: deadlines in the course's zone, extensions keyed."""
    def at(*place: int | str) -> str:
        return f"{doc.where(place) if doc else source}: {_where(place)}"
    zone = ZoneInfo(spec.timezone)
    assignments = {a.name: _assignment(a, spec, zone, base, at("assignments", i))
                   for i, a in enumerate(spec.assignments)}
    students = dict(students or {})
    extensions: dict[tuple[str, str | None], tuple[datetime | None, timedelta]] = {}
    for i, e in enumerate(spec.extensions):
        where = at("extensions", i)
        if e.assignment is not None and e.assignment not in assignments:
            raise ConfigError(f"{where}: no assignment {e.assignment!r}")
        if students and e.student not in students:
            raise ConfigError(f"{where}: student {e.student!r} is not in the roster")
        if (e.until is None) == (e.extra is None):
            raise ConfigError(f"{where}: give either until (a new deadline) or extra "
                              "(time added)")
        if (e.student, e.assignment) in extensions:
            raise ConfigError(f"{where}: a second extension for the same student and "
                              "assignment")
        extensions[(e.student, e.assignment)] = (
            _aware(e.until, zone) if e.until is not None else None,
            e.extra or timedelta(0))
    return Course(spec.course, zone, assignments, students, spec.late_days, spec.bulk,
                  extensions, None, spec.slurm, spec.staff, spec.lms)


def load_course(path: str | Path) -> Course:
    """``course.yaml`` (or a directory holding it) with its roster.

    :raises ConfigError: naming the file and line (and key) of the first defect.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "course.yaml"
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the course file: {e.strerror}") from None
    doc = CourseYaml(decode(data, str(p)), str(p))
    if doc.data is None:
        raise ConfigError(f"{p}: the course file is empty: it needs at least course: and "
                          "assignments:")
    spec = parse_spec(doc.data, str(p), doc)
    students: dict[str, Student] = {}
    if spec.roster:
        rp = (p.parent / spec.roster)
        try:
            raw = rp.read_bytes()
        except OSError as e:
            raise ConfigError(f"{doc.where(('roster',))}: roster {spec.roster}: "
                              f"{e.strerror}") from None
        students = read_roster(decode(raw, str(rp)), str(rp))
    course = build_course(spec, p.parent, str(p), students, doc)
    return replace(course, source=p.resolve(),
                   roster_source=(p.parent / spec.roster).resolve() if spec.roster else None)
