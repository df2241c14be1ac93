"""The capacity-planning page: queueing models against measured replays, the
simulator's validation table, the partition advice with its slurm.conf lines, and
links to the experiment and campaign reports it draws on.

Pure pandas/matplotlib over data the command line hands in (model curves are computed
there, from ``grader.planning.queueing``; the analysis only draws and tabulates)."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from analysis.partition import Advice
from analysis.report import CSS, ONLOAD, _save, _table

#: bounds the simulator is held to (issue #13)
MEAN_BOUND, P95_BOUND = 0.10, 0.20


def validation_verdict(v: pd.DataFrame) -> pd.DataFrame:
    """The validation table with a within-bounds column per row."""
    v = v.copy()
    v["within"] = ((v["mean_error"].abs() <= MEAN_BOUND) & (v["p95_error"].abs() <= P95_BOUND)
                   ).map({True: "yes", False: "NO"})
    return v


def plot_open(models: pd.DataFrame, validation: pd.DataFrame, out: Path) -> str:
    """Per core count: response mean and p95 against offered load -- M/G/m curves,
    the simulator's predictions and the measured replays."""
    cores = sorted(set(models["cores"]) | set(validation.get("cores", pd.Series(dtype=int))))
    fig, axes = plt.subplots(1, len(cores), figsize=(5.5 * len(cores), 4.2), squeeze=False)
    for ax, c in zip(axes[0], cores, strict=True):
        m = models[models["cores"] == c].sort_values("rate")
        ax.plot(m["rate"], m["mean_s"], "-", color="#1f77b4", label="M/G/m mean")
        ax.plot(m["rate"], m["p95_s"], "--", color="#1f77b4", label="M/G/m p95")
        if not validation.empty:
            v = validation[validation["cores"] == c].sort_values("offered_per_s")
            ax.plot(v["offered_per_s"], v["measured_mean_s"], "o", color="#d62728",
                    label="replayed: mean")
            ax.plot(v["offered_per_s"], v["measured_p95_s"], "s", color="#d62728",
                    mfc="none", label="replayed: p95")
            ax.plot(v["offered_per_s"], v["predicted_mean_s"], "x", color="#2ca02c",
                    ms=9, label="simulator: mean")
            ax.plot(v["offered_per_s"], v["predicted_p95_s"], "+", color="#2ca02c",
                    ms=11, label="simulator: p95")
        ax.set(xlabel="offered load (submissions/s)", ylabel="feedback time (s)",
               title=f"{c} core(s): open arrivals", yscale="log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, out / "open.png")


def plot_closed(mva: pd.DataFrame, out: Path) -> str:
    """Exact MVA throughput and response time against the number of students, with
    the asymptotic bounds and the knee N*."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for c, g in mva.groupby("cores"):
        g = g.sort_values("n")
        a.plot(g["n"], g["x"], "-", label=f"{c} core(s): MVA")
        a.plot(g["n"], g["x_bound"], ":", color="grey")
        b.plot(g["n"], g["r_s"], "-", label=f"{c} core(s): MVA")
        b.plot(g["n"], g["r_bound"], ":", color="grey")
        knee = float(g["knee"].iloc[0])
        for ax in (a, b):
            ax.axvline(knee, color=a.lines[-2].get_color(), lw=0.8, ls="--")
    a.set(xlabel="students N (closed loop)", ylabel="throughput X (submissions/s)",
          title="closed loop: X(N), bounds dotted, knee N* dashed")
    b.set(xlabel="students N", ylabel="response time R (s)", title="closed loop: R(N)")
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, out / "closed.png")


def write_report(out: Path, *, models: pd.DataFrame, mva: pd.DataFrame,
                 validation: pd.DataFrame, demands: dict[str, float], think_s: float,
                 advice: Advice | None = None, links: dict[str, str] | None = None,
                 commands: dict[str, str] | None = None) -> Path:
    """``out/index.html``: every capacity answer on one page."""
    out.mkdir(parents=True, exist_ok=True)
    esc = html.escape
    parts = ["<h1>gradeline capacity planning</h1>"]
    parts.append(f"<p>Measured service: mean {demands['service_mean_s']:.3f} s per submission "
                 f"(cs² {demands['service_cs2']:.2f}), intake "
                 f"{demands['intake_mean_s']:.3f} s, storing {demands['storing_mean_s']:.3f} s"
                 f", pilot start {demands['pilot_start_s']:.2f} s.</p>")
    parts.append("<h2>Open arrivals: models, simulator and measured replays</h2>")
    parts.append(f"<img src='{plot_open(models, validation, out)}' alt='open arrivals'>")
    parts.append("<p>Lines: M/G/m with the measured mean and variability of the grading time "
                 "(Erlang C with the Allen-Cunneen correction; the p95 adds the measured "
                 "service-time distribution to the exponential wait). Markers: Poisson "
                 "streams replayed into <code>gradeline serve</code> on the local Slurm "
                 "(red) and <code>gradeline plan predict</code>'s simulation of the same "
                 "trace (green). The models ignore serve's own mechanics (claiming "
                 "micro-batches, intake, pilots); the simulator includes them.</p>")
    parts.append("<h2>Simulator validation</h2>")
    if validation.empty:
        parts.append("<p><em>no validation run given</em></p>")
    else:
        v = validation_verdict(validation)
        ok = (v["within"] == "yes").all()
        parts.append(f"<p><b>{'Within' if ok else 'NOT within'} the bounds everywhere</b> "
                     f"(mean response within {MEAN_BOUND:.0%}, p95 within {P95_BOUND:.0%})."
                     "</p>")
        parts.append(_table(v, "{:.3g}"))
    if commands and "validation" in commands:
        parts.append(f"<p>Command: <code>{esc(commands['validation'])}</code></p>")
    parts.append("<h2>Closed loop: N students with think time</h2>")
    parts.append(f"<img src='{plot_closed(mva, out)}' alt='closed loop'>")
    parts.append(f"<p>Exact mean value analysis of a closed network: the students think for "
                 f"Z = {think_s:g} s, the cores are one load-dependent station with the "
                 "measured demand. Bounds: X &le; min(N / (D + Z), m / D), R &ge; max(D, "
                 "N D / m - Z); the knee N* = (D + Z) / (D / m) is where the cores saturate."
                 "</p>")
    if advice is not None:
        parts.append("<h2>Partition advice for admins</h2>")
        parts.append(f"<p><b>{advice.mb_per_core:.2f} MB of L3 per grading core</b> "
                     f"(decided by: {esc(advice.basis)}); schedule "
                     f"<b>{advice.cores_per_domain}</b> grading core(s) per L3 domain of the "
                     "target node.</p><ul>"
                     + "".join(f"<li>{esc(n)}</li>" for n in advice.evidence) + "</ul>")
        parts.append("<p>Cores &rarr; minimum L3 for linear scaling (cf. the thesis's table "
                     "10.1: 8 &rarr; 20 MB ... 64 &rarr; 160 MB at 2.5 MB/core):</p>")
        parts.append(_table(advice.table))
        parts.append(f"<pre>{esc(advice.snippet)}</pre>")
    if links:
        parts.append("<h2>Underlying reports</h2><ul>" + "".join(
            f"<li><a href='{esc(href)}'>{esc(name)}</a></li>" for name, href in links.items())
            + "</ul>")
    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>gradeline "
                    f"capacity planning</title><style>{CSS}</style>{ONLOAD}</head><body>"
                    + "\n".join(parts) + "</body></html>\n")
    return page
