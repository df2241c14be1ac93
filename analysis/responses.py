"""The response-time report of served runs: plots (matplotlib) and one HTML page.

It reads the analysis as plain data (``Analysis.to_dict()`` of
``grader.planning.response``, one per run), so it needs nothing of the producers.
Several runs at different offered loads give the throughput-vs-load curve and
its knee.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from analysis.report import CSS, ONLOAD, _save

Run = Mapping[str, Any]


def plot_over_time(run: Run, out: Path, name: str) -> str:
    rows = run["over_time"]
    t = [r["t"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    a.plot(t, [r["throughput"] for r in rows], marker=".")
    a.set(xlabel="time since first arrival (s)", ylabel="results stored per second",
          title="Throughput over time")
    b.plot(t, [r["p50"] for r in rows], marker=".", label="p50")
    b.plot(t, [r["p95"] for r in rows], marker=".", label="p95")
    b.set(xlabel="time since first arrival (s)", ylabel="feedback latency (s)",
          title="Response time of what completed, per interval")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    b.legend()
    return _save(fig, out / f"{name}-time.png")


def plot_split(run: Run, out: Path, name: str) -> str:
    """Where a submission's time goes: queueing, service, storing (mean and p95)."""
    parts = ["queueing", "service", "storing"]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for i, stat in enumerate(("mean", "p95")):
        vals = [run[p].get(stat, 0.0) for p in parts]
        ax.bar([x + 0.4 * i for x in range(3)], vals, width=0.4, label=stat)
    ax.set_xticks([x + 0.2 for x in range(3)], parts)
    ax.set(ylabel="seconds", title="Queueing vs service time")
    ax.grid(alpha=0.3, axis="y")
    ax.legend()
    return _save(fig, out / f"{name}-split.png")


def knee(runs: Sequence[Run], tracking: float = 0.9) -> dict[str, float] | None:
    """Where throughput stops following the offered load: the highest offered load
    whose throughput is still >= ``tracking`` x offered, the lowest above it that is
    not, and the capacity (the highest throughput seen). None without two loads."""
    pts = sorted((float(r["offered"]), float(r["throughput"])) for r in runs
                 if r.get("offered"))
    if len(pts) < 2:
        return None
    ok = [lam for lam, x in pts if x >= tracking * lam]
    over = [lam for lam, x in pts if x < tracking * lam and lam > max(ok, default=0.0)]
    return {"last_tracking": max(ok, default=float("nan")),
            "first_saturated": min(over, default=float("nan")),
            "capacity": max(x for _, x in pts)}


def plot_load(runs: Sequence[Run], out: Path) -> str:
    """Throughput and p95 response against offered load (arrivals per second)."""
    pts = sorted((r["offered"], r["throughput"], r["response"]["p95"]) for r in runs
                 if r.get("offered"))
    k = knee(runs)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o")
    top = max((p[0] for p in pts), default=1.0)
    a.plot([0, top], [0, top], "k--", lw=1, label="X = offered load")
    a.set(xlabel="offered load (submissions/s)", ylabel="throughput X (/s)",
          title="Throughput vs offered load")
    b.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", color="C3")
    b.set(xlabel="offered load (submissions/s)", ylabel="p95 feedback latency (s)",
          title="Response time vs offered load: the knee")
    if k is not None:
        a.axhline(k["capacity"], color="C2", lw=1, ls=":", label="capacity (max X)")
        if not math.isnan(k["first_saturated"]):
            for ax in (a, b):
                ax.axvspan(k["last_tracking"], k["first_saturated"], color="C1", alpha=0.15,
                           label="knee")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    a.legend()
    return _save(fig, out / "load.png")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.3g}"
    return html.escape(str(v))


def _dist_table(run: Run) -> str:
    cols = ["p50", "p90", "p95", "p99", "max", "mean"]
    head = "".join(f"<th>{c}</th>" for c in ["seconds", *cols])
    body = "".join(
        f"<tr><th>{p}</th>" + "".join(f"<td>{_fmt(run[p].get(c, float('nan')))}</td>"
                                      for c in cols) + "</tr>"
        for p in ("response", "queueing", "service", "storing"))
    return f"<table class='t'><tr>{head}</tr>{body}</table>"


def write_report(runs: Mapping[str, Run], out: Path) -> Path:
    """``out/index.html`` for the runs (name -> analysis dict)."""
    out.mkdir(parents=True, exist_ok=True)
    parts = ["<h1>gradeline response times</h1>"]
    if sum(1 for r in runs.values() if r.get("offered")) >= 2:
        parts.append("<h2>Throughput and latency vs offered load</h2>"
                     f"<img src='{plot_load(list(runs.values()), out)}' alt='load'>")
        k = knee(list(runs.values()))
        if k is not None:
            parts.append(
                f"<p>The knee: throughput follows the offered load (X &ge; 0.9 &lambda;) up "
                f"to {_fmt(k['last_tracking'])}/s and no longer at "
                f"{_fmt(k['first_saturated'])}/s; capacity (highest X) "
                f"{k['capacity']:.3g}/s.</p>")
    for i, (name, run) in enumerate(runs.items()):
        esc = html.escape(name)
        parts.append(f"<h2>Run <code>{esc}</code></h2>")
        u = run.get("utilization")
        parts.append(
            f"<p>{run['count']} submissions ({run['graded']} graded, {run['quarantined']} "
            f"quarantined) in {run['window_s']:.1f} s: throughput X = "
            f"{run['throughput']:.3f}/s" + (f", utilization {u:.0%}" if u is not None else "")
            + "; verdicts " + ", ".join(f"{k} {v}" for k, v in sorted(run["verdicts"].items()))
            + "</p>")
        parts.append(_dist_table(run))
        parts.append(f"<p>Little's law: backlog sampled L = {run['little_l_sampled']:.2f}, "
                     f"X &middot; R = {run['little_xr']:.2f}</p>")
        c = run.get("closed")
        if c:
            parts.append(
                f"<p>Interactive response-time law (N = {c['students']} students, Z = "
                f"{c['think_s']:g} s): X = {c['throughput']:.3f}/s, measured R = "
                f"{c['response_measured']:.2f} s, N/X &minus; Z = {c['response_law']:.2f} s "
                f"(difference {c['error']:.1%})</p>")
        if run.get("by_node"):
            parts.append("<p>Busy seconds per node: " + ", ".join(
                f"{html.escape(k)} {v:.1f}" for k, v in sorted(run["by_node"].items())) + "</p>")
        parts.append(f"<img src='{plot_over_time(run, out, f'run{i}')}' alt='over time'>")
        parts.append(f"<img src='{plot_split(run, out, f'run{i}')}' alt='split'>")
    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>gradeline "
                    f"response times</title><style>{CSS}</style></head><body>"
                    + "\n".join(parts) + ONLOAD + "</body></html>")
    return page
