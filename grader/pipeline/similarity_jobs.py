"""The similarity report of one assignment, after its deadline: each student's counting
submission (the latest, where none counts yet), grouped by language, compared pair by
pair by JPlag in one batch job per language (Slurm at the course's bulk priority, or
here), starter code left out; the pairs above a threshold are kept for the staff page
with everything the side-by-side view needs.

Layout, under ``spool/similarity/<assignment>/``: ``<language>/subs/<student>/`` the
files compared, ``<language>/base/`` the starter code, ``<language>/pairs.json`` the
checker's output, ``report.json`` the report.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from grader.adapters import jplag
from grader.adapters.scheduler.base import Scheduler, SchedulerError
from grader.adapters.scheduler.script import ArrayRequest, array_script
from grader.adapters.spool import Spool
from grader.core.jobs import now_iso
from grader.course.load import Course
from grader.course.policy import grade_course
from grader.course.similarity_pairs import SimilarityReport, SimilarPair, flagged
from grader.course.spec import BulkSpec
from grader.course.teams import Teams
from grader.formats.problem import Problem
from grader.pipeline.intake import Rejected, prepare
from grader.pipeline.ports import CourseRows

log = logging.getLogger(__name__)
#: runs one checker command (argv), writing its log to the path; raises on failure
Runner = Callable[[list[str], Path], None]


def team_label(team: str) -> str:
    """How the report names a team (``team-NAME``): one entry for all its members."""
    return "team-" + team.replace(" ", "_")


def chosen(course: Course, assignment: str, store: CourseRows) -> dict[str, str]:
    """Who -> the spool id compared: the counting submission, else the latest; of team
    work one per team (``team_label``), so that a team's members, who handed in the
    same work, are never compared with each other."""
    teams = store.teams(course.name) if course.assignments[assignment].teams else Teams()

    def who(owner: tuple[str, str]) -> str:
        return team_label(owner[1]) if owner[0] == "team" else owner[1]
    rows = [r for r in store.rows(course.name, assignment=assignment)
            if r.state != "quarantined"]
    latest = {who(teams.owner(assignment, r.student, r.submitted_at)): r.spool_id
              for r in rows}  # oldest first: the last one stays
    counting = {team_label(g.team) if g.team else g.student: g.spool_id
                for g in grade_course(course, store.attempts(course.name), teams=teams)
                if g.assignment == assignment and g.spool_id}
    return {w: counting.get(w, sid) for w, sid in latest.items()}


def stage(spool: Spool, problem: Problem, picks: Mapping[str, str], work: Path,
          starter: Path | None) -> tuple[dict[str, int], list[str]]:
    """Copy each pick's sources to ``work/<language>/subs/<student>/`` (and the starter
    code beside them); (students per language, why some were left out)."""
    shutil.rmtree(work, ignore_errors=True)
    counts: dict[str, int] = {}
    skipped = []
    for student, sid in sorted(picks.items()):
        entry = spool.find(sid) or spool.done(sid)
        try:
            prep = prepare(entry, {problem.short_name: problem})
        except (Rejected, OSError) as e:
            skipped.append(f"{student}: {sid} cannot be read ({e})")
            continue
        lang = prep.language_id
        if lang is None or lang not in jplag.LANGUAGES:
            skipped.append(f"{student}: {lang} is not a language the checker knows")
            entry.drop_src()
            continue
        dest = work / lang / "subs" / student
        base = prep.submission.path if prep.submission.path.is_dir() else \
            prep.submission.path.parent
        for rel in prep.submission.files:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / rel, dest / rel)
        entry.drop_src()
        counts[lang] = counts.get(lang, 0) + 1
    for lang in counts:
        if starter is not None:
            target = work / lang / "base"
            if starter.is_dir():
                shutil.copytree(starter, target)
            else:
                target.mkdir(parents=True)
                shutil.copyfile(starter, target / starter.name)
    return counts, skipped


def slurm_runner(sched: Scheduler, bulk: BulkSpec, name: str, timeout_s: float = 3600,
                 account: str | None = None) -> Runner:
    """Run the checker as one Slurm job (at the bulk priority, charged to the course's
    ``account``) and wait for it."""
    def run(argv: list[str], log_path: Path) -> None:
        out = Path(argv[-1])
        script = log_path.with_suffix(".sbatch")
        script.write_text(array_script(ArrayRequest(
            name=f"gradeline-similarity-{name}", tasks=1, cpus_per_task=1, minutes=60,
            output=log_path, partition=bulk.partition, nice=bulk.nice, qos=bulk.qos,
            account=account), argv))
        job = sched.submit(script)
        log.info("similarity job %s submitted", job)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            states = sched.tasks(job)
            done = all(t.final for t in states.values())  # {}: gone from the queue
            if done and out.exists():
                return
            if done and (states or time.monotonic() - t0 > 120):
                tail = log_path.read_text()[-800:] if log_path.exists() else ""
                raise SchedulerError(f"similarity job {job} ended without a report: {tail}")
            time.sleep(1.0)
        sched.cancel(job)
        raise SchedulerError(f"similarity job {job} did not finish in {timeout_s:.0f} s")
    return run


def make_report(course: Course, assignment: str, problem: Problem, spool: Spool,
                store: CourseRows, lib: Path, runner: Runner, *, threshold: float,
                min_tokens: int) -> SimilarityReport:
    """Compare, keep the pairs at or above ``threshold``, write ``report.json``."""
    work = spool.similarity(assignment)
    picks = chosen(course, assignment, store)
    counts, skipped = stage(spool, problem, picks, work / "work",
                            course.assignments[assignment].starter)
    pairs: list[SimilarPair] = []
    tools = set()
    for lang, n in sorted(counts.items()):
        if n < 2:
            skipped.append(f"{lang}: only one submission, nothing to compare")
            continue
        d = work / "work" / lang
        out = d / "pairs.json"
        base = d / "base" if (d / "base").exists() else None
        runner(jplag.command(lib, lang, d / "subs", base, min_tokens, out), d / "job.log")
        data = json.loads(out.read_text())
        tools.add(str(data.get("tool", "JPlag")))
        pairs += [replace(p, language=lang, ids=(picks[p.a], picks[p.b]))
                  for p in flagged(data["pairs"], threshold)]
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    report = SimilarityReport(assignment, now_iso(), ", ".join(sorted(tools)), threshold,
                              min_tokens, len(picks), counts,
                              bool(course.assignments[assignment].starter), tuple(skipped),
                              tuple(pairs))
    (work / "report.json").write_text(json.dumps(report.to_json(), indent=1))
    return report
