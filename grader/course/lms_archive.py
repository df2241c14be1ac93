"""What an LMS's bulk download says, read from its member names alone: who handed in
which files, and whether the LMS called it late.

Canvas's "Download Submissions" zip is flat, one member per file:
``<sortable name>[_LATE]_<user id>_<attachment id>_<file name>`` (the sortable name,
"Last, First", lowercased with everything but letters and digits removed), text and
URL hand-ins as ``<sortable name>[_LATE]_<user id>_text.html`` / ``_link.html``, and
``anon_<anonymous id>`` in place of name and user id under anonymous grading.

Moodle's "Download all submissions" zip has a folder per student and plugin,
``<Full Name>_<participant id>_assignsubmission_file/`` (``_onlinetext`` for online
text), or, in older versions, flat members
``<Full Name>_<participant id>_assignsubmission_file_<file name>``; under blind marking
the name is ``Participant``. Neither zip holds a hand-in time (``lms_mapping`` reads
Moodle's grading worksheet for those).

A member that fits neither shape is returned as unrecognised, with the reason, so the
caller can keep it rather than lose it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from grader.core.errors import ConfigError

Lms = Literal["canvas", "moodle"]
LMSES: tuple[Lms, ...] = get_args(Lms)
Kind = Literal["file", "text", "link"]

_CANVAS = re.compile(r"^(?P<name>[^\W_]*)(?P<late>_LATE)?_(?P<uid>\d+)_"
                     r"(?:(?P<att>\d+)_(?P<file>[^/]+)|(?P<kind>text|link)\.html)$")
_CANVAS_ANON = re.compile(r"^anon_(?P<anon>[^\W_]+)(?P<late>_LATE)?_"
                          r"(?:(?P<att>\d+)_(?P<file>[^/]+)|(?P<kind>text|link)\.html)$")
_MOODLE_DIR = re.compile(r"^(?P<name>[^_/]+)_(?P<pid>\d+)_assignsubmission_"
                         r"(?P<plugin>[a-z]+)/(?P<path>.+)$")
_MOODLE_FLAT = re.compile(r"^(?P<name>[^_/]+)_(?P<pid>\d+)_assignsubmission_"
                          r"(?P<plugin>file|onlinetext)_(?P<path>[^/]+)$")
_MOODLE_KIND: dict[str, Kind] = {"file": "file", "onlinetext": "text"}
#: Canvas's name for a file whose name the student's files already held: ``Main-1.java``
_COPY_SUFFIX = re.compile(r"^(?P<stem>.+)-\d+(?P<ext>\.[^.]*)?$")


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the LMS says handed a submission in.

    :param lms_id: Canvas's user id, the anonymous id (``anonymous``), or Moodle's
        participant id (Moodle numbers participants per assignment).
    :param name: Canvas's sortable-name key (``adamsalice``) or Moodle's full name;
        empty when anonymous.
    """

    lms: Lms
    lms_id: str
    name: str
    anonymous: bool

    @property
    def label(self) -> str:
        """The identity as the download writes it (what staff find in the zip)."""
        if self.lms == "canvas":
            return f"anon_{self.lms_id}" if self.anonymous else f"{self.name}_{self.lms_id}"
        return f"{'Participant' if self.anonymous else self.name}_{self.lms_id}"


@dataclass(frozen=True, slots=True)
class Member:
    """One file of a submission: the zip member and where it lands in the submission.

    :param renamed: ``path`` drops a ``-N`` Canvas added to the file's name.
    """

    member: str
    path: str
    kind: Kind
    renamed: bool = False


@dataclass(frozen=True, slots=True)
class LmsSubmission:
    """One student's hand-in as the download holds it.

    :param late: Canvas marked it ``_LATE`` (Moodle's zip says nothing of lateness).
    :param clashes: paths two members would both land on (such a submission cannot be
        laid out without losing one; the caller keeps it aside).
    """

    who: Identity
    files: tuple[Member, ...]
    late: bool = False
    clashes: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[Kind, ...]:
        return tuple(k for k in get_args(Kind) if any(f.kind == k for f in self.files))


@dataclass(frozen=True, slots=True)
class Unrecognised:
    """A member that fits none of the LMS's shapes, and why."""

    member: str
    reason: str


@dataclass(frozen=True, slots=True)
class LmsArchive:
    """A download read: its LMS, the submissions, and what could not be read."""

    lms: Lms
    submissions: tuple[LmsSubmission, ...]
    unrecognised: tuple[Unrecognised, ...]


def _canvas(name: str) -> tuple[Identity, Member, bool] | None:
    m = _CANVAS_ANON.match(name)
    anonymous = m is not None
    if m is None:
        m = _CANVAS.match(name)
    if m is None:
        return None
    kind: Kind = "file" if m["file"] else ("text" if m["kind"] == "text" else "link")
    who = Identity("canvas", m["anon"] if anonymous else m["uid"],
                   "" if anonymous else m["name"], anonymous)
    path = m["file"] or f"{m['kind']}.html"
    return who, Member(name, path, kind), bool(m["late"])


def _moodle(name: str) -> tuple[Identity, Member, bool] | str | None:
    m = _MOODLE_DIR.match(name) or _MOODLE_FLAT.match(name)
    if m is None:
        return None
    kind = _MOODLE_KIND.get(m["plugin"])
    if kind is None:
        return f"Moodle's {m['plugin']} plugin holds no hand-in gradeline knows"
    if any(part in ("", ".", "..") for part in m["path"].split("/")):
        return "an empty, '.' or '..' part in its path"
    anonymous = m["name"].strip().casefold() == "participant"
    who = Identity("moodle", m["pid"], "" if anonymous else m["name"].strip(), anonymous)
    return who, Member(name, m["path"], kind), False


def _shape_count(names: Iterable[str]) -> dict[Lms, int]:
    counts: dict[Lms, int] = {"canvas": 0, "moodle": 0}
    for n in names:
        if _canvas(n) is not None:
            counts["canvas"] += 1
        elif _MOODLE_DIR.match(n) or _MOODLE_FLAT.match(n):
            counts["moodle"] += 1
    return counts


def detect(names: Sequence[str]) -> Lms:
    """Which LMS wrote these member names (the one whose shape most of them fit).

    :raises ConfigError: when none fits either, naming the shapes expected.
    """
    counts = _shape_count(names)
    if not any(counts.values()):
        raise ConfigError("no member is named as Canvas's 'Download Submissions' "
                          "(name_userid_attachmentid_file) or Moodle's 'Download all "
                          "submissions' (Full Name_id_assignsubmission_file/) names them: "
                          "is this the LMS's zip, as downloaded?")
    return "moodle" if counts["moodle"] > counts["canvas"] else "canvas"


def _undo_copy_suffix(files: list[Member]) -> list[Member]:
    """``Main-1.java`` back to ``Main.java`` where no other file of the submission has
    that name (Canvas adds ``-N`` when the student's files already held the name)."""
    taken = {f.path for f in files}
    out = []
    for f in files:
        m = _COPY_SUFFIX.match(f.path)
        plain = f"{m['stem']}{m['ext'] or ''}" if m else None
        if plain is not None and plain not in taken:
            taken.add(plain)
            out.append(Member(f.member, plain, f.kind, renamed=True))
        else:
            out.append(f)
    return out


def parse_archive(names: Sequence[str], lms: Lms | None = None, *,
                  strip_copy_suffix: bool = False) -> LmsArchive:
    """The submissions of a download, from its members' names (files only, no
    directories), in the order they first appear.

    :param lms: which LMS wrote it (None: :func:`detect`).
    :param strip_copy_suffix: undo Canvas's ``-N`` in file names (``Main-1.java``),
        where that clashes with no other file of the submission.
    """
    which = lms or detect(names)
    groups: dict[str, tuple[Identity, list[Member], bool]] = {}
    unrecognised = []
    for name in names:
        got = _canvas(name) if which == "canvas" else _moodle(name)
        if got is None or isinstance(got, str):
            unrecognised.append(Unrecognised(name, got or _expected(which)))
            continue
        who, member, late = got
        key = f"{'anon' if who.anonymous else 'id'}:{who.lms_id}"
        prior = groups.get(key)
        if prior is None:
            groups[key] = (who, [member], late)
        else:
            prior[1].append(member)
            groups[key] = (prior[0], prior[1], prior[2] or late)
    subs = []
    for who, files, late in groups.values():
        laid = _undo_copy_suffix(files) if strip_copy_suffix and which == "canvas" else files
        paths = [f.path for f in laid]
        clashes = tuple(sorted({p for p in paths if paths.count(p) > 1}))
        subs.append(LmsSubmission(who, tuple(laid), late, clashes))
    return LmsArchive(which, tuple(subs), tuple(unrecognised))


def _expected(lms: Lms) -> str:
    if lms == "canvas":
        return ("not named as Canvas names a hand-in (name[_LATE]_userid_attachmentid_file, "
                "name[_LATE]_userid_text.html or anon_id_...)")
    return ("not named as Moodle names a hand-in (Full Name_id_assignsubmission_file/..., "
            "or Full Name_id_assignsubmission_file_name)")


def maybe_renamed(sub: LmsSubmission) -> tuple[str, ...]:
    """Files whose name ends in ``-N`` as Canvas renames a repeated file name (staff
    may want ``strip_copy_suffix``)."""
    if sub.who.lms != "canvas":
        return ()
    return tuple(f.path for f in sub.files if not f.renamed and _COPY_SUFFIX.match(f.path))
