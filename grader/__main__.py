"""The ``gradeline`` command line: a thin layer over the library.

Exit codes: 0 success, 1 the requested check failed (e.g. a self-check
mismatch), 2 an error of gradeline or its configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from grader import __version__
from grader.errors import GradelineError
from grader.result import SubmissionResult

if TYPE_CHECKING:
    from grader.pipeline import Executor
    from grader.problem import Problem

log = logging.getLogger("gradeline")


def _cpus(text: str | None) -> list[int]:
    from grader.metrics import parse_cpulist

    return parse_cpulist(text) if text else sorted(os.sched_getaffinity(0))


def _workroot(state: Path | None) -> Path:
    from grader.image import default_state_dir

    return (state or default_state_dir()) / "work"


def format_table(r: SubmissionResult) -> str:
    """A person's view of one result."""
    lines = [f"problem {r.problem} (version {r.problem_version[:12]})  "
             f"submission {r.submission} [{r.language}]  "
             f"runtime {r.runtime.get('runtime', '?')} on cpus {r.runtime.get('cpus')}"]
    if r.compile is not None and not r.compile.ok:
        lines.append("compile failed:" if r.compile.judge_error is None else "judge error:")
        text = r.compile.judge_error or r.compile.output
        lines += ["  " + ln for ln in text.strip().splitlines()[:20]]
    if r.tests:
        lines.append(f"{'test':<28} {'verdict':<7} {'cpu s':>7} {'wall s':>7} {'mem MiB':>8}  note")
        for t in r.tests:
            mem = f"{t.memory_bytes / 2**20:8.1f}" if t.memory_bytes is not None else " " * 8
            cpu = f"{t.cpu_time_s:7.3f}" if t.cpu_time_s is not None else " " * 7
            wall = f"{t.wall_time_s:7.3f}" if t.wall_time_s is not None else " " * 7
            note = t.feedback.splitlines()[0][:60] if t.feedback else ""
            lines.append(f"{t.name:<28} {t.verdict.value:<7} {cpu} {wall} {mem}  {note}")
    for g in r.groups:
        lines.append(f"group {g.name:<22} {g.verdict.value:<4} {g.passed}/{g.total} tests  "
                     f"{g.score:g}/{g.points:g} points ({g.scoring})")
    tm = r.timing
    lines.append(f"verdict {r.verdict.value}   score {r.score:g}/{r.max_score:g}   "
                 f"time: compile {tm.get('compile_s', 0):.2f} s, runs {tm.get('run_s', 0):.2f} s,"
                 f" validation {tm.get('validate_s', 0):.2f} s, total {tm.get('total_s', 0):.2f} s")
    return "\n".join(lines)


def cmd_grade(args: argparse.Namespace) -> int:
    from grader.export import csv_rows, gradescope, junit_xml
    from grader.judge import Judge
    from grader.problem import load_problem
    from grader.sandbox import open_sandbox

    problem = load_problem(args.assignment)
    cpus = _cpus(args.cpus)
    judge = Judge(open_sandbox(cpus, state_dir=args.state_dir), _workroot(args.state_dir), cpus,
                  keep_workdirs=args.keep)
    result = judge.grade(problem, args.submission, args.language)
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(json.dumps(result.to_dict(), indent=2))
    elif fmt == "csv":
        print(csv_rows([(args.student, result)]), end="")
    elif fmt == "gradescope":
        print(json.dumps(gradescope(result), indent=2))
    elif fmt == "junit":
        print(junit_xml([(args.student, result)]), end="")
    else:
        print(format_table(result))
    return 0


def _self_check_jobs(problem_dir: Path) -> Iterator[tuple[str, Path]]:
    subs = problem_dir / "submissions"
    if not subs.is_dir():
        return
    for d in sorted(p for p in subs.iterdir() if p.is_dir()):
        for s in sorted(d.iterdir()):
            if not s.name.startswith(".") and s.name != "__pycache__":
                yield d.name, s


def cmd_check(args: argparse.Namespace) -> int:
    """Grade every self-check submission; exit 1 on any mismatch."""
    from grader.pool import grade_many
    from grader.problem import load_problem
    from grader.sandbox import open_sandbox
    from grader.verdict import EXPECTED_DIRS

    cpus = _cpus(args.cpus)
    open_sandbox(cpus, state_dir=args.state_dir)  # build the image once, up front
    jobs: list[tuple[Path, Path, str | None]] = []
    expected: dict[str, str] = {}
    for a in args.assignments:
        root = Path(a).resolve()
        load_problem(root)  # fail early, naming the file
        for exp, s in _self_check_jobs(root):
            if exp not in EXPECTED_DIRS:
                log.warning("%s: unknown expected-verdict directory %r, skipped", root.name, exp)
                continue
            jobs.append((root, s, None))
            expected[str(s)] = EXPECTED_DIRS[exp].value
    if not jobs:
        print("no submissions/<expected>/ files to check", file=sys.stderr)
        return 1
    mismatches = 0
    t0 = time.monotonic()
    for g in grade_many(jobs, cpus, _workroot(args.state_dir)):
        sub, res = g.submission, g.result
        want = expected[sub]
        rel = os.path.relpath(sub)
        if isinstance(res, str):
            mismatches += 1
            print(f"ERROR     {rel}: {res}")
            continue
        got = res.verdict.value
        ok = got == want
        mismatches += not ok
        detail = ""
        if not ok:
            bad = next((t for t in res.tests if t.verdict.value == got), None)
            detail = f"  (first {got}: {bad.name}: {bad.feedback[:80]})" if bad else \
                (f"  ({(res.compile.judge_error or res.compile.output)[:120]!r})"
                 if res.compile else "")
        print(f"{'ok' if ok else 'MISMATCH':<9} {rel}: expected {want}, got {got} "
              f"score {res.score:g}/{res.max_score:g}{detail}")
    print(f"{len(jobs)} submissions checked in {time.monotonic() - t0:.1f} s on "
          f"{len(cpus)} cpu(s): {len(jobs) - mismatches} as expected, {mismatches} mismatched")
    return 1 if mismatches else 0


def cmd_image(args: argparse.Namespace) -> int:
    from grader.image import ImageStore, default_definition
    from grader.sandbox import choose_runtime

    runtime, reason = choose_runtime()
    store = ImageStore(args.state_dir)
    d = Path(args.definition) if args.definition else default_definition()
    if args.action == "build":
        t0 = time.monotonic()
        img = store.ensure(d, runtime, force=args.force)  # type: ignore[arg-type]
        print(f"image {img.image_id} ({runtime}: {reason}) at {img.path} "
              f"[{time.monotonic() - t0:.1f} s]")
        return 0
    found = store.find(d, runtime)  # type: ignore[arg-type]
    print(f"{runtime}: {found.path if found else 'not built'}")
    return 0 if found else 1


def cmd_check_env(args: argparse.Namespace) -> int:
    from grader.capabilities import checks

    failed = False
    for c in checks():
        mark = "ok  " if c.ok else ("FAIL" if c.required else "warn")
        failed |= (not c.ok) and c.required
        print(f"{mark} {c.name:<18} {c.detail}")
        if not c.ok and c.remedy:
            print(f"     -> {c.remedy}")
    return 1 if failed else 0


def cmd_examples(args: argparse.Namespace) -> int:
    from grader.examples import copy_examples, example_dirs

    if args.dest is None:
        for d in example_dirs():
            print(d)
        return 0
    for d in copy_examples(Path(args.dest)):
        print(d)
    return 0


def cmd_corpus(args: argparse.Namespace) -> int:
    from grader.corpus import generate_course
    from grader.spool import Spool

    dest = Path(args.dest)
    manifest = generate_course(dest, count=args.count, seed=args.seed)
    print(f"wrote {len(manifest)} submissions to {args.dest} (manifest.csv)")
    if args.submit_to:
        spool = Spool(Path(args.submit_to))
        for e in manifest:
            spool.submit(course=args.course or "default", assignment=e.assignment,
                         student=e.student, path=dest / e.path, submitted_at=e.submitted_at)
        print(f"submitted them to the spool {args.submit_to}")
    return 0


def print_verdict_table(counts: Mapping[str, Mapping[str, int]],
                        scores: Mapping[str, Sequence[float]], extra: Sequence[str] = ()) -> None:
    """Per assignment: how many graded, each verdict's count, the mean score."""
    from grader.verdict import Verdict

    cols = [v.value for v in Verdict] + list(extra)
    print(f"{'assignment':<12} {'graded':>6} " + " ".join(f"{v:>5}" for v in cols)
          + f" {'mean score':>10}")
    for a in sorted(counts):
        c = counts[a]
        mean = sum(scores[a]) / len(scores[a]) if scores.get(a) else 0.0
        print(f"{a:<12} {sum(c.values()):>6} " + " ".join(f"{c.get(v, 0):>5}" for v in cols)
              + f" {mean:>10.1f}")


class Progress:
    """A live progress line on stderr: done/total, rate and ETA."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        rate = done / max(now - self.t0, 1e-9)
        eta = (total - done) / rate if rate > 0 else 0.0
        end = "\r" if self.tty and done < total else "\n"
        print(f"{self.label}: {done}/{total} done, {rate:.2f}/s, ETA {eta:.0f} s",
              end=end, file=sys.stderr, flush=True)


def cmd_batch(args: argparse.Namespace) -> int:
    """Grade every submission of a manifest (see ``gradeline corpus``)."""
    import csv
    from collections import Counter, defaultdict

    from grader.examples import example_dirs
    from grader.pool import grade_many
    from grader.problem import load_problem
    from grader.sandbox import open_sandbox
    from grader.submission import load_submission

    manifest = Path(args.manifest).resolve()
    base = manifest.parent
    search = [Path(d).resolve() for d in args.assignments] or \
        [d.parent for d in example_dirs()]
    with manifest.open(encoding="utf-8") as mf:
        rows = list(csv.DictReader(mf))
    problems: dict[str, Path] = {}
    for r in rows:
        a = r["assignment"]
        if a not in problems:
            found = next((d / a for d in search if (d / a / "problem.yaml").is_file()), None)
            if found is None:
                raise GradelineError(f"assignment {a!r} of {manifest} not found under "
                                     f"{[str(d) for d in search]}; pass --assignments DIR")
            problems[a] = found
    versions = {a: load_problem(d).version for a, d in problems.items()}
    cpus = _cpus(args.cpus)
    open_sandbox(cpus, state_dir=args.state_dir)
    # Work avoidance: identical content for the same assignment version is graded once.
    first: dict[tuple[str, str], str] = {}
    reused: dict[str, str] = {}
    jobs: list[tuple[Path, Path, str | None]] = []
    for r in rows:
        path = str((base / r["path"]).resolve())
        key = (versions[r["assignment"]], load_submission(path).content_hash)
        if key in first and not args.no_dedupe:
            reused[path] = first[key]
            continue
        first[key] = path
        jobs.append((problems[r["assignment"]], Path(path), None))
    t0 = time.monotonic()
    results: dict[str, SubmissionResult | str] = {
        g.submission: g.result
        for g in grade_many(jobs, cpus, _workroot(args.state_dir), Progress("grading"))}
    elapsed = time.monotonic() - t0
    out = Path(args.out) if args.out else base / "results.jsonl"
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    scores: dict[str, list[float]] = defaultdict(list)
    mismatched = 0
    with out.open("w", encoding="utf-8") as f:
        for r in rows:
            path = str((base / r["path"]).resolve())
            src = reused.get(path, path)
            res = results[src]
            a = r["assignment"]
            if isinstance(res, str):
                stats[a]["error"] += 1
                rec: dict[str, object] = {"error": res}
            else:
                stats[a][res.verdict.value] += 1
                scores[a].append(res.score)
                rec = {"result": res.to_dict()}
                want = r.get("expected_verdict")
                if want and want != res.verdict.value:
                    mismatched += 1
                    log.warning("%s: expected %s, got %s", r["path"], want, res.verdict.value)
            f.write(json.dumps({"student": r["student"], "assignment": a, "path": r["path"],
                                "reused_from": os.path.relpath(src, base)
                                if src != path else None, **rec}) + "\n")
    print_verdict_table(stats, scores, extra=["error"])
    print(f"{len(rows)} submissions: {len(jobs)} graded, {len(reused)} identical ones reused, "
          f"in {elapsed:.1f} s on {len(cpus)} cpu(s) ({len(jobs) / max(elapsed, 1e-9):.2f} "
          f"graded/s); {mismatched} differ from the manifest's expected verdict; "
          f"results in {out}")
    return 0


def _spool(args: argparse.Namespace) -> Path:
    return Path(args.spool or os.environ.get("GRADELINE_SPOOL") or "spool").resolve()


def _course(args: argparse.Namespace) -> str:
    return str(args.course or os.environ.get("GRADELINE_COURSE") or "default")


def _problems(args: argparse.Namespace) -> dict[str, Problem]:
    """Assignment packages by name: every dir with a problem.yaml under the roots."""
    from grader.examples import example_dirs
    from grader.problem import load_problem

    roots = [Path(d) for d in args.assignments] or \
        [Path(p) for p in os.environ.get("GRADELINE_ASSIGNMENTS", "").split(":") if p] or \
        [example_dirs()[0].parent]
    found: dict[str, Problem] = {}
    for root in roots:
        for py in sorted(root.resolve().glob("*/problem.yaml")):
            found[py.parent.name] = load_problem(py.parent)
    if not found:
        raise GradelineError(f"no assignment packages (*/problem.yaml) under "
                             f"{[str(r) for r in roots]}")
    return found


def _db(args: argparse.Namespace, *, start: bool = True) -> str:
    from grader.image import default_state_dir
    from grader.pgserver import database_url

    return database_url(args.state_dir or default_state_dir(), start=start)


def cmd_submit(args: argparse.Namespace) -> int:
    from grader.spool import Spool

    e = Spool(_spool(args)).submit(course=_course(args), assignment=args.assignment,
                                   student=args.student, path=Path(args.path))
    print(e.id)
    return 0


def _executor(args: argparse.Namespace, cpus: list[int]) -> Callable[[Path], Executor]:
    """Slurm arrays when a controller answers (or --executor slurm), else local workers."""
    from grader.dispatch import ArraySpec, SlurmExecutor
    from grader.image import default_state_dir
    from grader.pool import LocalExecutor
    from grader.scheduler import detect_scheduler

    choice = args.executor or os.environ.get("GRADELINE_EXECUTOR") or "auto"
    progress = Progress("grading")
    if choice in ("auto", "slurm"):
        sched = detect_scheduler(args.state_dir or default_state_dir())
        if sched is not None:
            spec = ArraySpec(cpus_per_task=args.cpus_per_task, shard_size=args.shard_size,
                             throttle=args.throttle, partition=args.partition,
                             retries=args.retries)
            print(f"executor: Slurm ({sched.name}), one array job per batch", file=sys.stderr)
            return lambda batch: SlurmExecutor(sched, batch, spec, progress)
        if choice == "slurm":
            raise GradelineError("--executor slurm: no Slurm controller answers (start one "
                                 "with slurm/local-cluster.sh start, or set SLURM_CONF)")
        print("executor: local (no Slurm controller answers)", file=sys.stderr)
    else:
        print("executor: local", file=sys.stderr)
    workroot = _workroot(args.state_dir)
    return lambda batch: LocalExecutor(cpus, workroot, progress)


def cmd_shard_run(args: argparse.Namespace) -> int:
    """An array task: grade one shard on this task's cores; outcomes to <shard>.jsonl."""
    from grader.dispatch import read_outcomes
    from grader.metrics import counting, source_from_env
    from grader.pipeline import append_record
    from grader.pool import grade_inline, grade_many

    shard = Path(args.shard)
    out = shard.with_suffix(".jsonl")
    jobs = json.loads(shard.read_text())
    done = {o["submission"] for o in read_outcomes(out)[0]}  # a requeued task resumes
    todo = [(Path(j["problem"]), Path(j["submission"]), j.get("language"))
            for j in jobs if j["submission"] not in done]
    fault = os.environ.get("GRADELINE_FAULT", "")
    if fault.startswith("shard-crash") and shard.name == "shard-0.json":  # test hook
        marker = shard.parent.parent / ".crashed-once"
        if fault == "shard-crash-always" or not marker.exists():
            marker.touch()
            print("simulated task crash", flush=True)
            os._exit(1)
    cpus = sorted(os.sched_getaffinity(0))  # the cores Slurm gave this task
    slurm = {k.lower(): os.environ[k] for k in ("SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
                                                "SLURM_JOB_ID", "SLURMD_NODENAME")
             if k in os.environ}
    print(f"shard {shard.name}: {len(todo)} of {len(jobs)} to grade on cpus {cpus} "
          f"{slurm}", flush=True)
    workroot = _workroot(args.state_dir)
    outcomes = grade_inline(todo, cpus[0], workroot) if len(cpus) == 1 else \
        grade_many(todo, cpus, workroot)
    # GRADELINE_METRICS=auto|likwid|perf: count L3/CPU events on this task's exclusive
    # cores around the whole shard (so everything counted there is this shard's work).
    source = source_from_env(os.environ.get("GRADELINE_METRICS"))
    with counting(source, cpus, shard.with_suffix(".counters")) as samples:
        for g in outcomes:
            result = g.result.to_dict() if not isinstance(g.result, str) else g.result
            if isinstance(result, dict):
                result["runtime"] = {**result.get("runtime", {}), "slurm": slurm}
            append_record(out, {"submission": g.submission, "result": result,
                                "started_at": g.started_at, "finished_at": g.finished_at})
    if samples:
        with shard.with_suffix(".metrics.jsonl").open("a") as f:
            for m in samples:
                f.write(json.dumps({"source": m.source, "event": m.event, "value": m.value,
                                    "unit": m.unit, "cpu": m.cpu, "context": m.context,
                                    "submissions": len(todo), **slurm}) + "\n")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Intake + grading + store of everything in the spool (local workers)."""
    from grader.pipeline import Pipeline
    from grader.sandbox import open_sandbox
    from grader.spool import Spool

    cpus = _cpus(args.cpus)
    problems = _problems(args)
    open_sandbox(cpus, state_dir=args.state_dir)
    try:
        url: str | None = _db(args)
    except GradelineError as e:
        log.error("%s -- grading anyway; results wait in the spool for the next run", e)
        url = None
    pipe = Pipeline(Spool(_spool(args)), problems, db_url=url, cpus=cpus,
                    workroot=_workroot(args.state_dir), progress=Progress("grading"),
                    executor=_executor(args, cpus), dedupe=not args.no_dedupe)
    if args.stage == "intake":  # claim a batch; print its name (empty: nothing waited)
        name = pipe.claim(args.batch_size) or ""
        if args.batch_file:
            Path(args.batch_file).write_text(name + "\n")
        print(name)
        return 0
    if args.stage in ("grade", "ingest"):
        if not args.batch:
            raise GradelineError(f"--stage {args.stage} needs --batch NAME")
        s = pipe.stage(args.batch, ingest=args.stage == "ingest")
    else:
        s = pipe.run(args.batch_size)
    print_verdict_table(s.verdicts, s.scores)
    print(f"graded {s.graded}, reused {s.reused} identical, quarantined {s.quarantined}, "
          f"stored {s.stored} new results in {s.elapsed_s:.1f} s")
    if s.pending_batches:
        print(f"NOT STORED YET (database unavailable): batches {', '.join(s.pending_batches)}"
              " -- run again when it is back")
        return 1
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from collections import Counter, defaultdict

    from grader.spool import Spool
    from grader.store import Store

    spool = Spool(_spool(args))
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for state, entries in (("new", spool.new_entries()),
                           ("claimed", [e for b in spool.batches()
                                        for e in spool.batch_entries(b)])):
        for e in entries:
            try:
                counts[str(e.meta().get("assignment"))][state] += 1
            except (OSError, ValueError):
                counts["?"][state] += 1
    reasons: list[str] = []
    for e, reason in spool.quarantined():
        try:
            a = str(e.meta().get("assignment"))
        except (OSError, ValueError):
            a = "?"
        counts[a]["quarantined"] += 1
        reasons.append(f"  {a:<12} {e.id}: {reason.get('code')}: {reason.get('message')}")
    db_note = ""
    try:
        with Store(_db(args, start=False)) as store:
            for a, v, n in store.status(_course(args)):
                if v != "quarantined":
                    counts[a]["graded"] += n
                    counts[a][v] += n
    except GradelineError as e:
        db_note = f"(database unavailable: {e})"
    from grader.verdict import Verdict

    cols = ["new", "claimed", "graded", "quarantined", *(v.value for v in Verdict)]
    print(f"course {_course(args)}, spool {spool.root} {db_note}")
    print(f"{'assignment':<12} " + " ".join(f"{c:>11}" if i < 4 else f"{c:>4}"
                                            for i, c in enumerate(cols)))
    for a in sorted(counts):
        print(f"{a:<12} " + " ".join(f"{counts[a][c]:>11}" if i < 4 else f"{counts[a][c]:>4}"
                                     for i, c in enumerate(cols)))
    if reasons:
        print("quarantined:")
        print("\n".join(reasons))
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from grader.export import csv_rows, gradescope, junit_xml
    from grader.result import SubmissionResult
    from grader.store import Store

    with Store(_db(args)) as store:
        rows = [(st, SubmissionResult.from_dict(rec))
                for st, rec in store.current_results(_course(args), args.assignment)]
    if args.format == "csv":
        print(csv_rows(rows), end="")
    elif args.format == "junit":
        print(junit_xml(rows), end="")
    else:
        print(json.dumps({st: gradescope(r) for st, r in rows}, indent=2))
    return 0


def cmd_regrade(args: argparse.Namespace) -> int:
    from grader.regrade import regrade

    problems = _problems(args)
    if args.assignment not in problems:
        raise GradelineError(f"unknown assignment {args.assignment!r}")
    cpus = _cpus(args.cpus)
    n = regrade(problems[args.assignment], _course(args), Path(_spool(args)),
                _db(args), cpus, _workroot(args.state_dir), Progress("regrading"))
    print(f"regraded {n} submissions of {args.assignment}; earlier results kept as superseded")
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from grader.image import default_state_dir
    from grader.pgserver import LocalServer
    from grader.store import Store

    server = LocalServer(args.state_dir or default_state_dir())
    if args.action == "start":
        url = _db(args)
        with Store(url) as s:
            applied = s.migrate()
        print(url + (f"  (migrations applied: {', '.join(applied)})" if applied else ""))
    elif args.action == "stop":
        server.stop()
    elif args.action == "url":
        print(_db(args, start=False))
    elif args.action == "fresh":
        import psycopg

        if not args.name or not args.name.replace("_", "").isalnum():
            raise GradelineError("db fresh needs a database NAME (letters, digits, _)")
        url = _db(args)
        with psycopg.connect(url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {args.name} WITH (FORCE)")
            c.execute(f"CREATE DATABASE {args.name}")
        print(url.rsplit("/", 1)[0] + "/" + args.name)
    else:
        up = server.running()
        print(f"local server {'running' if up else 'stopped'} at {server.data}")
        return 0 if up else 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gradeline", description=__doc__)
    p.add_argument("--version", action="version", version=f"gradeline {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    p.add_argument("--state-dir", type=Path, default=None,
                   help="images and scratch space (default: /var/lib/gradeline as root)")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission")
    g.add_argument("assignment", help="problem package directory")
    g.add_argument("submission", help="source file or directory")
    g.add_argument("--json", action="store_true", help="print the result JSON")
    g.add_argument("--format", choices=["table", "json", "csv", "gradescope", "junit"],
                   default="table")
    g.add_argument("--language", help="language id (default: detected from file names)")
    g.add_argument("--student", default="-", help="student id for csv/junit exports")
    g.add_argument("--cpus", help="CPUs to pin to, e.g. 0 or 0-3 (default: all allowed)")
    g.add_argument("--keep", action="store_true", help="keep the work directory")
    g.set_defaults(func=cmd_grade)

    c = sub.add_parser("check", help="grade submissions/<expected>/ of assignments")
    c.add_argument("assignments", nargs="+")
    c.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    c.set_defaults(func=cmd_check)

    i = sub.add_parser("image", help="build or locate the grading image")
    i.add_argument("action", choices=["build", "status"])
    i.add_argument("--definition", help="definition file (default containers/grader.def)")
    i.add_argument("--force", action="store_true", help="rebuild even when cached")
    i.set_defaults(func=cmd_image)

    e = sub.add_parser("check-env", help="what this machine can do; remedies for what not")
    e.set_defaults(func=cmd_check_env)

    x = sub.add_parser("examples", help="list bundled assignments, or copy them to DEST")
    x.add_argument("dest", nargs="?")
    x.set_defaults(func=cmd_examples)

    b = sub.add_parser("batch", help="grade all submissions of a manifest.csv")
    b.add_argument("manifest")
    b.add_argument("--assignments", action="append", default=[],
                   help="directory holding the assignment packages (default: bundled)")
    b.add_argument("--out", help="results JSONL (default: beside the manifest)")
    b.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    b.add_argument("--no-dedupe", action="store_true",
                   help="grade identical submissions again instead of reusing the result")
    b.set_defaults(func=cmd_batch)

    def spool_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--spool", help="spool directory (default $GRADELINE_SPOOL or ./spool)")
        sp.add_argument("--course", help="course name (default $GRADELINE_COURSE or 'default')")
        sp.add_argument("--assignments", action="append", default=[],
                        help="directory of assignment packages (default "
                             "$GRADELINE_ASSIGNMENTS or the bundled examples)")

    s = sub.add_parser("submit", help="put a submission into the spool (atomically)")
    s.add_argument("assignment")
    s.add_argument("student")
    s.add_argument("path", help="source file, directory or archive")
    spool_opts(s)
    s.set_defaults(func=cmd_submit)

    r = sub.add_parser("run", help="grade everything in the spool and store the results")
    spool_opts(r)
    r.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    r.add_argument("--batch-size", type=int, help="claim at most this many new submissions")
    r.add_argument("--executor", choices=["auto", "local", "slurm"],
                   help="auto (default): Slurm when a controller answers, else local")
    r.add_argument("--cpus-per-task", type=int, default=1, help="whole cores per array task")
    r.add_argument("--shard-size", type=int, help="submissions per array task "
                                                   "(default: about a minute of work)")
    r.add_argument("--throttle", type=int, help="at most this many array tasks at once (%%T)")
    r.add_argument("--partition", help="Slurm partition")
    r.add_argument("--stage", choices=["all", "intake", "grade", "ingest"], default="all",
                   help="one workflow stage (the Snakefile's rules); default all of them")
    r.add_argument("--batch", help="the batch of --stage grade/ingest")
    r.add_argument("--batch-file", help="--stage intake: also write the batch name here")
    r.add_argument("--no-dedupe", action="store_true",
                   help="grade identical submissions again (for measurements)")
    r.add_argument("--retries", type=int, default=2,
                   help="resubmissions of unfinished shards before they are recorded as JE")
    r.set_defaults(func=cmd_run)

    sr = sub.add_parser("shard-run", help="(array task entry point) grade one shard")
    sr.add_argument("shard")
    sr.set_defaults(func=cmd_shard_run)

    st = sub.add_parser("status", help="per assignment: new, claimed, graded, quarantined")
    spool_opts(st)
    st.set_defaults(func=cmd_status)

    rs = sub.add_parser("results", help="export the current results of an assignment")
    spool_opts(rs)
    rs.add_argument("--assignment", required=True)
    rs.add_argument("--format", choices=["csv", "gradescope", "junit"], default="csv")
    rs.set_defaults(func=cmd_results)

    rg = sub.add_parser("regrade", help="regrade what a changed assignment package affects")
    spool_opts(rg)
    rg.add_argument("--assignment", required=True)
    rg.add_argument("--cpus")
    rg.set_defaults(func=cmd_regrade)

    d = sub.add_parser("db", help="the local PostgreSQL server (unless GRADELINE_DB_URL)")
    d.add_argument("action", choices=["start", "stop", "status", "url", "fresh"],
                   help="fresh NAME: an empty database NAME on the local server; prints its URL")
    d.add_argument("name", nargs="?")
    d.set_defaults(func=cmd_db)

    k = sub.add_parser("corpus", help="generate a deterministic course of submissions")
    k.add_argument("dest")
    k.add_argument("--count", type=int, default=240)
    k.add_argument("--seed", type=int, default=1)
    k.add_argument("--submit-to", metavar="SPOOL", help="also submit every one to this spool")
    k.add_argument("--course", help="course name for --submit-to")
    k.set_defaults(func=cmd_corpus)

    from grader import cli_measure
    cli_measure.register(sub)
    return p


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except GradelineError as e:
        print(f"gradeline: error: {e}", file=sys.stderr)
        raise SystemExit(2) from e


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    with _errors():
        return int(args.func(args))


def entrypoint() -> None:
    raise SystemExit(main(sys.argv[1:]))


if __name__ == "__main__":
    entrypoint()
