"""``gradeline course check | grades``: a course file checked against its packages, and
final grades with its policy applied (computed from the store at each call, so a
changed deadline or extension needs no regrade)."""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from grader.adapters.peercred import account_is_one_of
from grader.cli.common import Commands, spool_options
from grader.compose import grading
from grader.compose.context import Context
from grader.core.errors import (
    CapabilityError,
    GradelineError,
    ImageError,
    ProblemFormatError,
    SandboxError,
)
from grader.course.handgrades import (
    QuestionGrade,
    auto_possible,
    auto_share,
    by_student,
    evaluation_csv,
    possible,
    with_hand_grades,
)
from grader.course.load import Assignment, Course
from grader.course.policy import Grade, grade_course
from grader.course.sheets import assignment_sheet, canvas_csv, course_sheet, moodle_csv
from grader.course.visibility import group_visibility, unknown_rules
from grader.formats.load import load_problem, verify_package
from grader.formats.problem import Problem
from grader.pipeline.deadline import after_deadline
from grader.pipeline.ondemand import measure_waiting


def _packages(course: Course) -> dict[str, Problem]:
    out = {}
    for a in course.ordered():
        try:
            out[a.name] = load_problem(a.package, require_time_limit=False)
        except ProblemFormatError as e:
            raise GradelineError(f"assignment {a.name}: {e}") from None
    return out


def _validators(ctx: Context, packages: dict[str, Problem]) -> int:
    """Compile each custom output validator as grading would (one that does not compile
    is found now, not as a judge error for every student at the rush); how many fail.
    Without a grading image here they are left to ``gradeline check``, with a note."""
    custom = {n: p for n, p in packages.items() if p.validator_dir is not None}
    if not custom:
        return 0
    try:
        ctx.prepare_image()
    except (ImageError, CapabilityError, SandboxError) as e:
        print(f"  output validators of {', '.join(custom)} not compiled here ({e}); "
              "'gradeline check PACKAGE' compiles them where grading runs")
        return 0
    bad = []
    with ctx.validator_check(ctx.cpus(None)) as fault_of:
        for name, p in custom.items():
            why = fault_of(p)
            if why:
                print(f"  {name}: {why}")
                bad.append(name)
    ok = [n for n in custom if n not in bad]
    if ok:
        print(f"  output validators compiled: {', '.join(ok)}")
    return len(bad)


def _rubric_problems(course: Course, a: Assignment, p: Problem) -> int:
    """Print what a rubric gets wrong that its file alone cannot show: graders who
    could not open the grading page (not staff), and ``combine: replace`` leaving the
    autograder nothing (its tests would count for no points). Returns how many."""
    assert a.rubric is not None
    bad, staff = 0, course.staff
    for g in sorted(a.rubric.graders):
        ok = account_is_one_of(g, [*staff.accounts, *staff.instructors], staff.groups)
        if not ok:
            why = "no account of this host" if ok is None else "not in the course's staff"
            print(f"    grader {g!r} cannot open the grading page: {why} (add them to "
                  "staff: accounts or one of staff: groups)")
            bad += 1
    if a.rubric.spec.combine == "replace" and auto_share(a, p.max_score) <= 0:
        print(f"    combine: replace and the rubric's {a.rubric.max_points:g} points take all "
              f"{auto_possible(a, p.max_score):g} of the assignment's: its tests count for "
              "nothing (raise points:, or combine: add)")
        bad += 1
    return bad


def cmd_course_check(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    packages = _packages(course)
    for a in course.ordered():
        try:
            verify_package(packages[a.name])
        except ProblemFormatError as e:
            raise GradelineError(f"assignment {a.name}: {e}") from None
    print(f"course {course.name} ({course.zone.key}): {len(course.assignments)} "
          f"assignment(s), {len(course.students)} student(s) on the roster, "
          f"{course.late_days} grace day(s) each, {len(course.extensions)} extension(s)")
    bad = 0
    for a in course.ordered():
        p = packages[a.name]
        groups = [g.name for g in p.groups]
        vis = group_visibility(groups, a.visibility)
        print(f"  {a.name}: due {a.deadline.isoformat(timespec='minutes')}, counts "
              f"{a.counts}, {a.points or p.max_score:g} points; "
              + ", ".join(f"{g} {v}" for g, v in vis.items()))
        for key in unknown_rules(groups, a.visibility):
            print(f"    visibility names {key!r}, which is no test group of {p.short_name}")
            bad += 1
        if a.rubric is not None:
            r = a.rubric
            print(f"    graded by hand ({r.source}): " + ", ".join(
                f"{q.id} {q.points:g}" for q in r.questions) + f"; {r.spec.combine}s "
                f"{r.max_points:g} points" + ("; anonymously" if r.spec.anonymous else ""))
            bad += _rubric_problems(course, a, p)
    bad += _validators(ctx, packages)
    return 1 if bad else 0


def _evaluations(out: Path, graded: list[Assignment],
                 hand: Mapping[str, list[QuestionGrade]], grades: list[Grade]) -> None:
    """Each assignment graded by hand's evaluation CSV (``NAME-evaluations.csv``)."""
    for a in graded:
        if a.rubric is None:
            continue
        theirs = by_student(hand.get(a.name, []))
        rows = [(g.student, g.spool_id or "", theirs.get(g.student, {})) for g in grades
                if g.assignment == a.name and g.spool_id]
        (out / f"{a.name}-evaluations.csv").write_text(evaluation_csv(a.rubric, rows))
        print(f"{a.name}: graded by hand, each rubric item a column -> "
              f"{out / (a.name + '-evaluations.csv')}")


def cmd_grades(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    if args.assignment:
        course.assignment(args.assignment)
    packages = _packages(course)
    most = {n: possible(a, packages[n].max_score) for n, a in course.assignments.items()}
    graded = [a for a in course.ordered() if a.rubric is not None]
    with ctx.store() as store:
        store.migrate()
        attempts = store.attempts(course.name)
        hand = store.hand_grades(course.name) if graded else {}
        teams, changes = store.teams(course.name), store.grade_changes(course.name)
    maxima = {n: p.max_score for n, p in packages.items()}
    grades = with_hand_grades(course, grade_course(course, attempts, maxima, teams=teams,
                                                   changes=changes), hand, maxima, changes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [args.assignment] if args.assignment else [a.name for a in course.ordered()]
    for n in names:
        (out / f"{n}.csv").write_text(assignment_sheet(course, n, grades))
        mine = [g for g in grades if g.assignment == n]
        counts = {s: sum(1 for g in mine if g.status == s)
                  for s in ("final", "pending", "missing", "too late")}
        print(f"{n}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) +
              f" -> {out / (n + '.csv')}")
    _evaluations(out, [a for a in graded if a.name in names], hand, grades)
    if not args.assignment:
        (out / "course.csv").write_text(course_sheet(course, grades, most))
        (out / "canvas.csv").write_text(canvas_csv(course, grades, most))
        (out / "moodle.csv").write_text(moodle_csv(course, grades))
        print(f"course sheet, Canvas and Moodle imports: {out}/course.csv, canvas.csv, "
              "moodle.csv")
    return 0


def cmd_deadline(args: argparse.Namespace, ctx: Context) -> int:
    """The after-deadline phase for the assignments whose deadline has passed, and the
    performance measurements students asked for (both bulk work)."""
    course = ctx.course_required()
    try:
        now = datetime.fromisoformat(args.now) if args.now else datetime.now(UTC)
    except ValueError as e:
        raise GradelineError(f"--now: {e}") from None
    if now.tzinfo is None:
        now = now.replace(tzinfo=course.zone)
    names = [args.assignment] if args.assignment else \
        [a.name for a in course.ordered() if a.deadline <= now]
    measured = [] if args.assignment else \
        [a.name for a in course.ordered() if a.on_demand]
    if not names and not measured:
        print("no assignment is past its deadline")
        return 0
    for n in names:
        course.assignment(n)  # before the image and the executor are prepared
    ctx.spool()  # a path without a spool is refused before any work
    problems = ctx.problems()  # the full suites
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image(problems={n: problems[n] for n in [*names, *measured]})
    pipe = grading.bulk_pipelines(ctx, cpus, course.bulk)(problems)
    with ctx.store() as store:
        if measured:
            m = measure_waiting(pipe, course, problems, store)
            print(f"performance on demand: {m.measured} measured, {m.failed} not measured "
                  f"(the submission's fault), {m.refunded} refunded (ours)")
        if not names:
            print("no assignment is past its deadline")
        for n in names:
            d = after_deadline(pipe, course, n, problems[n], store, now)
            print(f"{n}: {d.due} student(s) due, {d.graded_before} already fully graded, "
                  f"{d.graded_now} graded now with the full suite, {d.waiting} waiting "
                  "for their own deadline")
    return 0


def cmd_release(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    course.assignment(args.assignment)
    with ctx.store() as store:
        store.migrate()
        at = store.release(course.name, args.assignment, getpass.getuser(),
                           withdraw=args.withdraw)
    what = "withdrawn" if args.withdraw else "released"
    print(f"{args.assignment}: results {what} at {at.astimezone(course.zone).isoformat()}")
    return 0


def cmd_choose(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    counts = course.assignment(args.assignment).counts
    with ctx.store() as store:
        store.migrate()
        store.choose(course.name, args.assignment, args.student, args.submission,
                     getpass.getuser())
    note = "" if counts == "chosen" else \
        f" (the course counts {counts!r} for it: the choice matters only if that becomes " \
        "'chosen')"
    print(f"{args.student}'s chosen submission for {args.assignment}: {args.submission}{note}")
    return 0


def _course_file_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--course-file", type=Path, metavar="COURSE_YAML",
                    help="the course file (default $GRADELINE_COURSE_FILE)")


def register(sub: Commands) -> None:
    c = sub.add_parser("course", help="check a course file (deadlines, late policy, "
                                      "extensions, visibility) against its packages")
    cs = c.add_subparsers(dest="course_command", required=True)
    ck = cs.add_parser("check", help="read the course file and its roster, load every "
                                     "package, show each group's visibility")
    _course_file_option(ck)
    ck.set_defaults(func=cmd_course_check)

    g = sub.add_parser("grades", help="final grades with the course's policy applied: a "
                                      "sheet per assignment, the course, Canvas and Moodle")
    g.add_argument("assignment", nargs="?", help="one assignment (default: all of them, "
                                                 "with the course sheet and LMS files)")
    _course_file_option(g)
    g.add_argument("--out", default="grades", help="directory for the sheets (default "
                                                   "%(default)s)")
    g.set_defaults(func=cmd_grades)

    d = sub.add_parser("deadline", help="after the deadline: grade each student's counting "
                                        "submission with the full suite, at bulk priority")
    d.add_argument("assignment", nargs="?", help="one assignment (default: every one past "
                                                 "its deadline)")
    d.add_argument("--now", metavar="TIME", help="take this as the time (default: now)")
    spool_options(d)
    d.add_argument("--cpus", help="CPUs for local grading (no Slurm)")
    d.add_argument("--executor", choices=["auto", "local", "slurm"])
    d.add_argument("--cpus-per-task", type=int, default=1)
    d.add_argument("--shard-size", type=int)
    d.add_argument("--throttle", type=int)
    d.add_argument("--partition")
    d.add_argument("--retries", type=int, default=2)
    d.set_defaults(func=cmd_deadline)

    r = sub.add_parser("release", help="publish an assignment's results beyond its "
                                       "visible groups")
    r.add_argument("assignment")
    r.add_argument("--withdraw", action="store_true", help="take a release back")
    _course_file_option(r)
    r.set_defaults(func=cmd_release)

    c = sub.add_parser("choose", help="record the submission a student chose to count "
                                      "(assignments whose course rule is 'chosen')")
    c.add_argument("assignment")
    c.add_argument("student")
    c.add_argument("submission", help="its spool id (gradeline submit prints it)")
    _course_file_option(c)
    c.set_defaults(func=cmd_choose)
