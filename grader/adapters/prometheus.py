"""Prometheus metrics of a running ``gradeline serve``: what admins scrape into the
monitoring they already run.

prometheus_client (the Prometheus project's own Python client) renders the text
format; the values are read from the server at each scrape (a custom collector), so
nothing is counted twice and a restarted server starts its counters from zero, as
Prometheus expects of a process. Served on 127.0.0.1 by default.

Metrics (``gradeline_`` prefix): ``backlog_submissions`` (waiting in the spool),
``in_flight_submissions`` and ``in_flight_batches``, ``pilots`` (live pilot tasks),
``graded_total``, ``reused_total``, ``quarantined_total``, ``stored_total``,
``failed_batches_total``, ``verdicts_total{assignment,verdict}``, and one histogram
per stamp interval, ``stage_seconds{stage}``: ``queue`` (arrived to claimed),
``dispatch`` (claimed to dispatched), ``grading`` (started to finished) and
``feedback`` (arrived to stored), over the submissions this server stored.

Only aggregates: no metric or label names a student, a submission or a file (an
assignment and a verdict are the finest labels), so a scraper -- or anyone on the
host who can reach the port -- learns how the course is graded, never who did what.
``tests/store/test_metrics.py`` checks a real server's exposition for its students.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

BUCKETS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
STAGES = ("queue", "dispatch", "grading", "feedback")


@dataclass(frozen=True, slots=True)
class ServeState:
    """One scrape's values (counters since the server started)."""

    backlog: int = 0
    in_flight_batches: int = 0
    in_flight_submissions: int = 0
    pilots: int | None = None  # None: not dispatching to pilots
    graded: int = 0
    reused: int = 0
    quarantined: int = 0
    stored: int = 0
    failed_batches: int = 0
    verdicts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    #: stage -> seconds each stored submission spent in it
    stages: Mapping[str, Sequence[float]] = field(default_factory=dict)


def _histogram(name: str, doc: str, values: Mapping[str, Sequence[float]]
               ) -> HistogramMetricFamily:
    h = HistogramMetricFamily(name, doc, labels=["stage"])
    for stage in STAGES:
        data = sorted(values.get(stage, ()))
        buckets = [(repr(b), float(bisect.bisect_right(data, b))) for b in BUCKETS]
        buckets.append(("+Inf", float(len(data))))
        h.add_metric([stage], buckets, sum_value=float(sum(data)))
    return h


class _Collector(Collector):
    def __init__(self, state: Callable[[], ServeState]) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        s = self.state()
        for name, doc, value in (
                ("backlog_submissions", "submissions waiting in the spool", s.backlog),
                ("in_flight_submissions", "submissions in claimed batches",
                 s.in_flight_submissions),
                ("in_flight_batches", "batches being graded", s.in_flight_batches)):
            yield GaugeMetricFamily(f"gradeline_{name}", doc, value=value)
        if s.pilots is not None:
            yield GaugeMetricFamily("gradeline_pilots", "pilot tasks queued or running",
                                    value=s.pilots)
        for name, doc, value in (
                ("graded", "submissions graded by this server", s.graded),
                ("reused", "results reused for identical content", s.reused),
                ("quarantined", "submissions refused by intake", s.quarantined),
                ("stored", "results stored", s.stored),
                ("failed_batches", "batch attempts that failed (resumed later)",
                 s.failed_batches)):
            yield CounterMetricFamily(f"gradeline_{name}", doc, value=value)
        v = CounterMetricFamily("gradeline_verdicts", "graded submissions by verdict",
                                labels=["assignment", "verdict"])
        for (assignment, verdict), n in sorted(s.verdicts.items()):
            v.add_metric([assignment, verdict], n)
        yield v
        yield _histogram("gradeline_stage_seconds", "seconds a submission spent in each "
                         "stage, over the submissions this server stored", s.stages)


def registry(state: Callable[[], ServeState]) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Collector(state))
    return reg


def exposition(state: Callable[[], ServeState]) -> str:
    """The text format of one scrape (what ``/metrics`` answers)."""
    return generate_latest(registry(state)).decode()


def serve(state: Callable[[], ServeState], host: str, port: int) -> Any:
    """Answer ``/metrics`` on host:port in a thread; returns the HTTP server (shut it
    down with ``shutdown()``)."""
    server, _thread = start_http_server(port, addr=host, registry=registry(state))
    return server
