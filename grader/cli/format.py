"""What people see in a terminal: a result as a table, verdict counts per
assignment, and a live progress line."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence

from grader.core.perfresult import Performance
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course.perfview import shown_performance
from grader.course.shown import ShownPerformance


def result_table(r: SubmissionResult) -> str:
    """A person's view of one result."""
    lines = [f"problem {r.problem} (version {r.problem_version[:12]})  "
             f"submission {r.submission} [{r.language}]  "
             f"runtime {r.runtime.get('runtime', '?')} on cpus {r.runtime.get('cpus')}"]
    if r.compile is not None and not r.compile.ok:
        lines.append("judge error:" if r.compile.judge_error is not None else
                     "the autograder's log:" if r.runtime.get("autograder") else
                     "compile failed:")
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
    if r.message:
        lines.append("message: " + r.message.strip().replace("\n", "\n  ")[:2000])
    if r.performance is not None:
        lines += performance_lines(r.performance)
    tm = r.timing
    lines.append(f"verdict {r.verdict.value}   score {r.score:g}/{r.max_score:g}   "
                 f"time: compile {tm.get('compile_s', 0):.2f} s, runs {tm.get('run_s', 0):.2f} s,"
                 f" validation {tm.get('validate_s', 0):.2f} s, total {tm.get('total_s', 0):.2f} s")
    return "\n".join(lines)


def performance_lines(p: Performance | ShownPerformance, indent: str = "") -> list[str]:
    """A result's performance tests in two lines: points and the reading of the
    times; the cache reading and where its counts come from."""
    shown = p if isinstance(p, ShownPerformance) else shown_performance(p)
    out = [f"{indent}performance {shown.points:g}/{shown.max_points:g}: {shown.reading}"]
    if shown.cache is not None:
        out.append(f"{indent}caches: {shown.cache.reading} ({shown.cache.note})")
    return out


def verdict_table(counts: Mapping[str, Mapping[str, int]],
                  scores: Mapping[str, Sequence[float]], extra: Sequence[str] = ()) -> str:
    """Per assignment: how many graded, each verdict's count, the mean score."""
    cols = [v.value for v in Verdict] + list(extra)
    out = [f"{'assignment':<12} {'graded':>6} " + " ".join(f"{v:>5}" for v in cols)
           + f" {'mean score':>10}"]
    for a in sorted(counts):
        c = counts[a]
        mean = sum(scores[a]) / len(scores[a]) if scores.get(a) else 0.0
        out.append(f"{a:<12} {sum(c.values()):>6} " + " ".join(f"{c.get(v, 0):>5}" for v in cols)
                   + f" {mean:>10.1f}")
    return "\n".join(out)


def state_table(counts: Mapping[str, Mapping[str, int]], states: Sequence[str]) -> str:
    """Per assignment: entries per state, then per verdict."""
    cols = [*states, *(v.value for v in Verdict)]
    width = [11 if i < len(states) else 4 for i in range(len(cols))]
    out = [f"{'assignment':<12} " + " ".join(f"{c:>{w}}" for c, w in zip(cols, width,
                                                                        strict=True))]
    for a in sorted(counts):
        out.append(f"{a:<12} " + " ".join(f"{counts[a].get(c, 0):>{w}}"
                                          for c, w in zip(cols, width, strict=True)))
    return "\n".join(out)


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
