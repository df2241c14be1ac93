"""``gradeline desk`` (the grading account) and what students run against it:
``hand-in``, ``mine``, ``measure``, ``team``, ``ask-regrade``, and staff's ``receipt
verify``."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from grader.adapters import desk_client, desk_socket
from grader.adapters.desk_client import DeskRefusal
from grader.cli.common import Commands, spool_options
from grader.cli.format import performance_lines
from grader.compose import read_side
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.core.signing import check
from grader.course.shown import (
    AssignmentView,
    HandGradeView,
    OnDemand,
    StudentView,
    SubmissionView,
    TeamView,
)

CUT = 400  # characters of a failed test's input, answer and output on a terminal


def socket_path(args: argparse.Namespace, ctx: Context) -> Path:
    """--desk, $GRADELINE_DESK_SOCKET, or the grading account's default."""
    given = getattr(args, "desk", None) or ctx.settings.desk_socket
    return Path(given) if given else ctx.state_dir / "desk" / "desk.sock"


def cmd_desk(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required(" (the desk shows what it allows)")
    path = socket_path(args, ctx)
    with ctx.store() as store:
        store.migrate()
    if args.link_minutes <= 0:
        raise GradelineError("--link-minutes: give a positive number of minutes")
    desk = read_side.student_desk(ctx, course, page_url=args.page_url,
                                  link_ttl=timedelta(minutes=args.link_minutes))
    server = desk_socket.listen(path, desk_socket.answering(desk))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"gradeline desk for course {course.name} on {path}; students run:\n"
          f"  export GRADELINE_DESK_SOCKET={path}\n"
          f"  gradeline hand-in ASSIGNMENT FILE; gradeline mine", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        path.unlink(missing_ok=True)
    return 0


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    """The desk's refusal, said as the desk's."""
    try:
        yield
    except DeskRefusal as e:
        raise GradelineError(f"the desk refused: {e}") from None


def cmd_hand_in(args: argparse.Namespace, ctx: Context) -> int:
    src = Path(args.file)
    if not src.is_file():
        raise GradelineError(f"{src}: not a file (hand in one file: a source, or an archive "
                             "of a directory)")
    with _refused():
        r = desk_client.hand_in(socket_path(args, ctx), args.assignment, src)
    late = " (after your deadline)" if r.late else ""
    print(f"received {r.file} for {r.assignment}{late}: submission {r.submission}, "
          f"{r.size} bytes, sha256 {r.sha256}, at {r.received_at}", file=sys.stderr)
    if r.deferred:
        print(f"past the assignment's hand-in limit ({r.limit}): it is graded after "
              "everyone else's and its feedback comes after your deadline", file=sys.stderr)
    if r.left is not None:
        print(f"hand-ins of {r.assignment} left: {r.left}", file=sys.stderr)
    print(json.dumps(r.to_json(), indent=1))
    return 0


def cmd_measure(args: argparse.Namespace, ctx: Context) -> int:
    with _refused():
        m = desk_client.measure(socket_path(args, ctx), args.assignment)
    print(f"asked at {m.requested_at[:19]}: the performance tests of your submission "
          f"{m.submission} for {m.assignment} are measured behind live feedback; "
          f"{m.used} of your {m.tokens} measurements used. 'gradeline mine "
          f"{m.assignment}' shows the curve once it is done.")
    return 0


def cmd_mine(args: argparse.Namespace, ctx: Context) -> int:
    if args.choose:
        if not args.assignment:
            raise GradelineError("--choose needs the assignment: gradeline mine ASSIGNMENT "
                                 "--choose SUBMISSION")
        with _refused():
            desk_client.choose(socket_path(args, ctx), args.assignment, args.choose)
        print(f"{args.choose} is your chosen submission for {args.assignment}")
        return 0
    if args.link:
        with _refused():
            link = desk_client.link(socket_path(args, ctx))
        print(f"{link.url}\n(valid until {link.expires}; it is yours: do not share it)")
        return 0
    with _refused():
        view = desk_client.mine(socket_path(args, ctx), args.assignment)
    print(json.dumps(view.to_json(), indent=1) if args.json else render(view))
    return 0


def render(view: StudentView) -> str:
    """A student's view for a terminal."""
    lines = [f"{view.student} in {view.course} (as of {view.now[:19]})"]
    for a in view.assignments:
        rel = f", results released {a.released[:16]}" if a.released else ""
        lines.append(f"\n{a.name}: due {a.deadline[:16]}{rel}")
        lim = a.limits
        if lim.left is not None:
            lines.append(f"  hand-ins used {lim.used}, left {lim.left}")
        if lim.why:
            when = f" (next within the limits at {lim.next_at[:16]})" if lim.next_at else ""
            later = "taken but deferred" if lim.deferring else "refused"
            lines.append(f"  a hand-in now would be {later}: {lim.why}{when}")
        if a.team is not None:
            lines.append("  " + _team(a.team))
        if a.on_demand is not None:
            lines += _on_demand(a.on_demand)
        if not a.submissions:
            lines.append("  nothing handed in")
        for s in a.submissions:
            lines += _submission(s)
        if a.hand is not None:
            lines += _hand(a.hand)
        lines += _requests(a)
    return "\n".join(lines)


def _team(t: TeamView) -> str:
    if not t.name:
        how = " (gradeline team ASSIGNMENT create NAME, or join CODE)" if t.changes else ""
        return f"in no team yet: teams of {t.min} to {t.max}{how}"
    code = f", join code {t.code}" if t.code else ""
    until = f", changes until {t.lock[:16]}" if t.changes and t.lock else ""
    return f"team {t.name}: {', '.join(t.members)}{code}{until}"


def _requests(a: AssignmentView) -> list[str]:
    out, w = [], a.regrades
    if w is not None and not w.why and w.closes:
        left = f" ({w.left} left)" if w.left is not None else ""
        out.append(f"  regrade requests open until {w.closes[:16]}{left} "
                   f"(gradeline ask-regrade {a.name} GROUP --reason ...)")
    for r in a.requests:
        answer = f": {r.answer} ({r.answered_by})" if r.answer else ""
        points = f", {r.before:g} -> {r.after:g} points" if r.after is not None and \
            r.before is not None else ""
        out.append(f"  request {r.id} about {r.target_kind} {r.target} of {r.submission}: "
                   f"{r.status}{points}{answer}")
    return out


def _on_demand(d: OnDemand) -> list[str]:
    """An assignment's performance measurements on demand: tokens used, each request."""
    out = [f"  performance measurements on demand: {d.used} of {d.tokens} used"]
    for m in d.measurements:
        said = {"waiting": "waiting to be measured", "measured": "measured",
                "refunded": "not measured, and the token is yours again",
                "failed": "not measured"}.get(m.state, m.state)
        why = f": {m.reason}" if m.reason else ""
        out.append(f"    #{m.token} of {m.submission} at {m.requested_at[:19]}: {said}{why}")
        if m.performance is not None:
            out += [f"      {line}" for line in performance_lines(m.performance)]
    return out


def _hand(h: HandGradeView) -> list[str]:
    """A hand-grade for a terminal: questions, items, adjustments, comments at lines."""
    more = "" if h.complete else " (more questions to be graded)"
    out = [f"  graded by hand: {h.points:g} of {h.max_points:g}{more}"]
    for q in h.questions:
        out.append(f"    {q.title} (question:{q.id}): {q.points:g} of {q.max_points:g}")
        out += [f"      {i.points:+g} {i.title}" + ("" if i.applied else " (not applied)")
                for i in q.items]
        if q.adjustment:
            out.append(f"      adjusted {q.adjustment:+g}: {q.reason}")
        for c in q.comments:
            out.append(f"      {c.file}:{c.first}: {c.text}")
            out += [f"        | {line}" for line in c.lines]
    return out


def _submission(s: SubmissionView) -> list[str]:
    flag = " [counts]" if s.counts else ""
    late = f", {s.late_hours} h late" if s.late_hours else ""
    by = f" by {s.by}" if s.by else ""
    team = f" for team {s.team}" if s.team else ""
    head = f"  {s.id} at {s.submitted_at[:19]}{by}{team}{late}{flag}: "
    if s.state == "quarantined":
        return [head + f"refused: {s.reason}"]
    if s.deferred:
        return [head + s.message]
    if s.verdict is None:
        return [head + "waiting to be graded"]
    total = "" if s.score is None else \
        f"{s.score:g}" + (f"/{s.max_score:g}" if s.max_score else "")
    part = "" if s.complete else " so far (more after the deadline or release)"
    out = [head + f"{s.verdict} {total}{part}"]
    if s.message:
        out.append(f"    {s.message}")
    if s.compile_output:
        out.append("    compiler: " + s.compile_output[:CUT].replace("\n", "\n      "))
    for g in s.groups:
        out.append(f"    {g.name}: {g.verdict} {g.passed}/{g.total} "
                   f"({g.points:g} of {g.max_points:g} points)")
    for t in s.tests:
        if t.verdict != "AC":
            out.append(f"    {t.name}: {t.verdict} {t.feedback[:CUT]}")
            for k, text in (("input", t.input), ("expected", t.expected),
                            ("output", t.output)):
                out.append(f"      {k}: " + (text or "")[:CUT].rstrip().replace(
                    "\n", "\n        "))
    return out


def cmd_team(args: argparse.Namespace, ctx: Context) -> int:
    with _refused():
        if args.action == "show":
            a = desk_client.mine(socket_path(args, ctx), args.assignment).assignments[0]
            team = a.team
        else:
            team = desk_client.team(socket_path(args, ctx), args.assignment, args.action,
                                    args.value)
    print(_team(team) if team and team.name else f"you are in no team of {args.assignment}")
    if team is not None and team.code and args.action == "create":
        print(f"your teammates join with: gradeline team {args.assignment} join {team.code}",
              file=sys.stderr)
    return 0


def cmd_ask_regrade(args: argparse.Namespace, ctx: Context) -> int:
    with _refused():
        r = desk_client.ask_regrade(socket_path(args, ctx), args.assignment, args.group,
                                    args.reason, args.submission)
    print(f"request {r.id} about {r.target_kind} {r.target} of {r.submission} is with your "
          "course staff; their answer shows in 'gradeline mine'")
    return 0


def cmd_receipt(args: argparse.Namespace, ctx: Context) -> int:
    try:
        receipt = json.loads(Path(args.file).read_text())
    except (OSError, ValueError) as e:
        raise GradelineError(f"{args.file}: not a receipt ({e})") from None
    if not isinstance(receipt, dict):
        raise GradelineError(f"{args.file}: not a receipt")
    fields = check(read_side.key(ctx), receipt)
    print(f"genuine: {fields['student']} handed in {fields['file']} for "
          f"{fields['assignment']} at {fields['received_at']} (submission "
          f"{fields['submission']}, sha256 {fields['sha256']})")
    return 0


def _desk_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--desk", type=Path, metavar="SOCKET",
                    help="the desk's socket (default $GRADELINE_DESK_SOCKET)")


def register(sub: Commands) -> None:
    d = sub.add_parser("desk", help="the student desk: students hand in and see their own "
                                    "results through a socket that knows who they are")
    spool_options(d)
    _desk_option(d)
    d.add_argument("--page-url", help="base URL of 'gradeline web', for students' links "
                                      "to their own page (gradeline mine --link)")
    d.add_argument("--link-minutes", type=float, default=60.0,
                   help="how long such a link opens the page (default %(default)g)")
    d.set_defaults(func=cmd_desk)

    h = sub.add_parser("hand-in", help="hand in FILE for ASSIGNMENT; prints a signed receipt")
    h.add_argument("assignment")
    h.add_argument("file")
    _desk_option(h)
    h.set_defaults(func=cmd_hand_in)

    m = sub.add_parser("mine", help="your own submissions and results (what the course "
                                    "shows so far)")
    m.add_argument("assignment", nargs="?")
    m.add_argument("--json", action="store_true", help="as JSON")
    m.add_argument("--link", action="store_true", help="a link to your own page, valid "
                                                       "for an hour (or as staff set)")
    m.add_argument("--choose", metavar="SUBMISSION", help="make SUBMISSION the one that "
                                                          "counts (courses that let you)")
    _desk_option(m)
    m.set_defaults(func=cmd_mine)

    me = sub.add_parser("measure", help="measure the performance tests of your latest "
                                        "submission before the deadline (a token each)")
    me.add_argument("assignment")
    _desk_option(me)
    me.set_defaults(func=cmd_measure)

    t = sub.add_parser("team", help="your team of an assignment done in teams: show it, "
                                    "create one, join one with its code, leave it")
    t.add_argument("assignment")
    t.add_argument("action", nargs="?", default="show",
                   choices=["show", "create", "join", "leave"])
    t.add_argument("value", nargs="?", help="the new team's name (create), or the code of "
                                            "the team to join (join)")
    _desk_option(t)
    t.set_defaults(func=cmd_team)

    q = sub.add_parser("ask-regrade", help="ask staff to look again at a test group of your "
                                           "graded submission (or a question graded by "
                                           "hand), saying why")
    q.add_argument("assignment")
    q.add_argument("group", help="the test group, as your results name it (question:ID: a "
                                 "question of your hand-grade)")
    q.add_argument("--reason", required=True, help="why you think it is graded wrong")
    q.add_argument("--submission", help="which submission (default: the one that counts)")
    _desk_option(q)
    q.set_defaults(func=cmd_ask_regrade)

    r = sub.add_parser("receipt", help="check that a student's receipt is this desk's")
    r.add_argument("action", choices=["verify"])
    r.add_argument("file")
    r.set_defaults(func=cmd_receipt)
