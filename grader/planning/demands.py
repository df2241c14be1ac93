"""What a course's submissions cost, as the planning models take it: grading time per
assignment (and per content, for trace-driven simulation) and the pipeline's own
delays, measured from finished submissions; and the demands file that carries them
(``gradeline plan demands`` writes it, ``plan predict | models | report`` read it).

The file is JSON: ``service`` {assignment: [grading seconds]}, ``by_content``
{content hash: seconds}, ``intake`` and ``storing`` [seconds] (claimed -> dispatched,
finished -> stored), ``gap`` (seconds between two submissions of one ticket),
``pilot_start_s``, ``pickup`` [seconds], ``served`` [[hash, seconds, idle]], optional
``cold_factor`` and ``warm_factor`` (grading while serving over the batch run), and a
``summary`` for people.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grader.core.errors import GradelineError
from grader.core.finished import Finished


@dataclass(frozen=True, slots=True)
class Demands:
    """Measured costs: grading time per assignment, and the pipeline's own delays."""

    service: Mapping[str, Sequence[float]]
    by_content: Mapping[str, float] = field(default_factory=dict)  # content hash -> seconds
    intake: Sequence[float] = (0.02,)
    storing: Sequence[float] = (0.15,)
    gap: float = 0.0  # between two submissions of one ticket on a pilot
    pilot_start_s: float = 1.0
    #: an idle pilot's delay from work dispatched to grading started (its poll, taking
    #: and reading the ticket), measured; a busy pilot pays it less the poll wait
    pickup: Sequence[float] = ()
    #: this run's graded submissions: (content hash, grading seconds, picked up by an
    #: idle pilot) -- what a served run says about grading *while serving*
    served: Sequence[tuple[str, float, bool]] = ()
    #: grading while serving over grading in the batch run, for the same content, after
    #: an idle pilot picks it up: the wake-up cost (caches, page cache, frequency) the
    #: batch run never pays. Back-to-back grading is what the batch run measured, so it
    #: takes the batch time as is (a light-load run has too few back-to-back runs, all
    #: in bursts, to say better).
    cold_factor: float = 1.0

    def pooled(self) -> list[float]:
        return [s for v in self.service.values() for s in v]

    def describe(self) -> dict[str, Any]:
        pooled = self.pooled()
        return {"assignments": {a: {"n": len(v), "mean_s": float(np.mean(v))}
                                for a, v in sorted(self.service.items())},
                "service_mean_s": float(np.mean(pooled)),
                "service_cs2": float(np.var(pooled) / np.mean(pooled) ** 2),
                "intake_mean_s": float(np.mean(self.intake)),
                "storing_mean_s": float(np.mean(self.storing)),
                "gap_s": self.gap, "pilot_start_s": self.pilot_start_s,
                "pickup_median_s": float(np.median(self.pickup)) if self.pickup else None,
                "cold_factor": self.cold_factor,
                "measured_submissions": len(self.by_content)}


def demands_from(service_run: Sequence[Finished],
                 overhead_run: Sequence[Finished] | None = None) -> Demands:
    """Demands from finished submissions: grading times from ``service_run`` (a batch
    run grades with every core busy, the rate the pipeline must sustain), the
    pipeline's delays from ``overhead_run`` (a served run at light load) or from the
    same run."""
    service: dict[str, list[float]] = defaultdict(list)
    content: dict[str, list[float]] = defaultdict(list)
    for r in service_run:
        if r.started is not None and r.finished is not None and r.state == "graded":
            s = max(r.finished - r.started, 0.0)
            service[r.assignment].append(s)
            if r.content_hash:
                content[r.content_hash].append(s)
    if not service:
        raise ValueError("the measured run has no graded submission with start and finish")
    over = overhead_run or service_run
    intake = [r.dispatched - r.claimed for r in over
              if r.dispatched is not None and r.claimed is not None]
    storing = [r.stored - r.finished for r in over
               if r.stored is not None and r.finished is not None]
    gaps, _, _ = _lags(service_run)
    _, pickup, _ = _lags(over)
    _, _, served = _lags(service_run)
    return Demands(dict(service), {h: float(np.mean(v)) for h, v in content.items()},
                   intake or (0.02,), storing or (0.15,),
                   float(np.median(gaps)) if gaps else 0.0, _pilot_start(service_run), pickup,
                   served)


def serving_factors(batch: Mapping[str, float], served: Sequence[tuple[str, float, bool]]
                    ) -> tuple[float, float]:
    """(cold, warm): grading time while serving over the batch run's for the same
    content (total over total, which keeps the work a queue sees), for submissions an
    idle pilot picked up and for back-to-back ones. A served run grades beside the
    serving process, the arriving submissions and the database, often on a core that
    was idle a moment ago; the batch run does not."""
    def ratio(idle: bool) -> float:
        pairs = [(t, batch[h]) for h, t, i in served if i is idle and batch.get(h)]
        if len(pairs) < 5:
            return 1.0
        return sum(t for t, _ in pairs) / sum(b for _, b in pairs)

    return ratio(True), ratio(False)


def _lags(rows: Sequence[Finished]
          ) -> tuple[list[float], list[float], list[tuple[str, float, bool]]]:
    """Per core, how long work waited for a pilot that could take it: ``gaps`` where
    the next submission was already dispatched when the previous finished (back to
    back: recording one outcome, starting the next), ``pickups`` where the pilot was
    idle when it was dispatched (polling, taking and reading the ticket); and every
    graded submission as (content hash, grading seconds, picked up idle). A core's
    first start (the pilot's own start) counts as idle but is no pickup."""
    by_core: dict[tuple[str | None, str | None], list[Finished]] = defaultdict(list)
    for r in rows:
        if r.started is not None and r.finished is not None:
            by_core[(r.node, r.cpus)].append(r)
    gaps: list[float] = []
    pickups: list[float] = []
    served: list[tuple[str, float, bool]] = []
    for runs in by_core.values():
        runs.sort(key=lambda r: r.started or 0.0)
        if runs[0].content_hash and runs[0].started is not None and \
                runs[0].finished is not None:
            served.append((runs[0].content_hash, runs[0].finished - runs[0].started, True))
        for prev, nxt in itertools.pairwise(runs):
            assert prev.finished is not None and nxt.started is not None
            assert nxt.finished is not None
            if nxt.dispatched is None:
                continue
            idle = nxt.dispatched > prev.finished
            if nxt.content_hash:
                served.append((nxt.content_hash, nxt.finished - nxt.started, idle))
            if not idle:
                g = nxt.started - prev.finished
                if 0 <= g < 5:
                    gaps.append(g)
            else:
                g = nxt.started - nxt.dispatched
                if 0 <= g < 5:
                    pickups.append(g)
    return gaps, pickups, served


def _pilot_start(rows: Sequence[Finished]) -> float:
    """The first start after the first dispatch: a cold pilot's cost."""
    disp = [r.dispatched for r in rows if r.dispatched is not None]
    starts = [r.started for r in rows if r.started is not None]
    if not disp or not starts:
        return 1.0
    return max(min(starts) - min(disp), 0.0)


def inflation_from_speedup(points: Mapping[int, float]) -> dict[int, float]:
    """Service multipliers k / S(k) from measured S(N) points (S(1) = 1), linearly
    interpolated in k between points and held beyond the last."""
    pts = sorted({1: 1.0, **points}.items())
    ks = [k for k, _ in pts]
    mult = [k / s for k, s in pts]
    top = ks[-1]
    return {k: float(np.interp(k, ks, mult)) for k in range(1, top + 1)}


def to_json(d: Demands) -> dict[str, Any]:
    return {"service": {a: list(v) for a, v in d.service.items()},
            "by_content": dict(d.by_content), "intake": list(d.intake),
            "storing": list(d.storing), "gap": d.gap, "pilot_start_s": d.pilot_start_s,
            "pickup": list(d.pickup), "served": [list(x) for x in d.served],
            "summary": d.describe()}


def load_demands(path: str, overheads: str | None = None) -> Demands:
    """Demands from 'plan demands' JSON, the pipeline's delays optionally from another."""
    def read(p: str) -> dict[str, Any]:
        try:
            return dict(json.loads(Path(p).read_text()))
        except (OSError, ValueError) as e:
            raise GradelineError(f"{p}: not a 'gradeline plan demands' file: {e}") from e

    d = read(path)
    o = read(overheads) if overheads else d
    try:
        by_content = {str(h): float(x) for h, x in d.get("by_content", {}).items()}
        served = [(str(h), float(t), bool(idle)) for h, t, idle in o.get("served", [])]
        if "cold_factor" in o:  # measured against the batch run of its own time
            cold = float(o["cold_factor"])
        else:
            cold = serving_factors(by_content, served)[0] if overheads else 1.0
        return Demands({str(a): [float(x) for x in v] for a, v in d["service"].items()},
                           by_content,
                           [float(x) for x in o["intake"]], [float(x) for x in o["storing"]],
                           float(d["gap"]), float(o["pilot_start_s"]),
                           [float(x) for x in o.get("pickup", [])], served, cold)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise GradelineError(f"{path}: malformed demands ({e!r})") from e


def parse_speedup(text: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            n, s = part.split(":")
            out[int(n)] = float(s)
        except ValueError as e:
            raise GradelineError(f"--speedup: {part!r} is not N:S (e.g. 16:11.2)") from e
        if out[int(n)] <= 0 or int(n) < 1:
            raise GradelineError(f"--speedup: {part!r}: N and S must be positive")
    return out
