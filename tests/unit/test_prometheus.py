"""The Prometheus text of a serve state (``adapters.prometheus``) and the stamp
intervals it is made of (``views.observe.stages``)."""

from __future__ import annotations

from grader.adapters.prometheus import ServeState, exposition
from grader.core.finished import Finished
from grader.views.observe import stages


def test_the_state_is_rendered_with_counters_gauges_and_cumulative_buckets() -> None:
    text = exposition(lambda: ServeState(
        backlog=7, pilots=3, graded=5, stored=6, reused=1,
        verdicts={("hw", "AC"): 4, ("hw", "JE"): 1},
        stages={"feedback": [0.3, 1.5, 40.0], "queue": [0.1]}))
    lines = set(text.splitlines())
    for want in ("gradeline_backlog_submissions 7.0", "gradeline_pilots 3.0",
                 "gradeline_graded_total 5.0", "gradeline_stored_total 6.0",
                 'gradeline_verdicts_total{assignment="hw",verdict="JE"} 1.0',
                 'gradeline_stage_seconds_bucket{le="0.5",stage="feedback"} 1.0',
                 'gradeline_stage_seconds_bucket{le="2.0",stage="feedback"} 2.0',
                 'gradeline_stage_seconds_bucket{le="30.0",stage="feedback"} 2.0',
                 'gradeline_stage_seconds_bucket{le="+Inf",stage="feedback"} 3.0',
                 'gradeline_stage_seconds_count{stage="grading"} 0.0',
                 "# TYPE gradeline_stage_seconds histogram"):
        assert want in lines, want
    assert "gradeline_pilots" not in exposition(lambda: ServeState())  # not on pilots


def test_stages_are_the_intervals_between_stamps_that_exist() -> None:
    rows = [Finished("a", "hw", "graded", "AC", arrived=10.0, started=12.0, finished=13.5,
                     stored=14.0, claimed=10.5, dispatched=11.0),
            Finished("b", "hw", "quarantined", None, arrived=20.0, started=None,
                     finished=None, stored=20.2, claimed=20.1)]
    s = stages(rows)
    assert [round(v, 3) for v in s["queue"]] == [0.5, 0.1]
    assert s["dispatch"] == [0.5] and s["grading"] == [1.5]
    assert [round(v, 3) for v in s["feedback"]] == [4.0, 0.2]
