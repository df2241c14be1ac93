"""An experiment directory (experiment.json, points.csv, monitor.csv) -> which factor
matters: effects and allocation of variation with confidence intervals for a 2^k·r
design, the fixed-overhead / per-task fit for a cores x work grid, the monitor beside
them, and one HTML page."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import monitor as mon
from analysis.report import CSS, ONLOAD, _save, _table
from grader.measure.factorial import FactorialResult, analyse, linear_fit

#: the responses a report analyses, and how each reads
RESPONSE_LABELS = {"throughput": "throughput (jobs/s)", "wall_s": "wall time (s)",
                   "mean_response_s": "mean time per submission (s)",
                   "p95_s": "p95 time per submission (s)", "cpu_s": "CPU seconds",
                   "busy": "cores busy (share)", "ctxt_per_s": "context switches/s",
                   "ll_mpki": "simulated LL misses / 1000 instr."}


@dataclass
class ExperimentData:
    path: Path
    meta: dict[str, Any]
    points: pd.DataFrame  # tidy: point, rep, warmup, levels, response, value
    monitor: pd.DataFrame

    @property
    def factors(self) -> dict[str, list[Any]]:
        return dict(self.meta["design"]["factors"])

    def measured(self) -> pd.DataFrame:
        return self.points[~self.points["warmup"].astype(bool)]


def load(path: Path) -> ExperimentData:
    meta = json.loads((path / "experiment.json").read_text())
    pts = pd.read_csv(path / "points.csv") if (path / "points.csv").exists() else \
        pd.DataFrame(columns=["point", "rep", "warmup", "levels", "response", "value"])
    return ExperimentData(path, meta, pts, mon.load(path / "monitor.csv"))


def effects(d: ExperimentData, response: str, confidence: float = 0.95
            ) -> FactorialResult | None:
    """The 2^k·r analysis of one response over the replications every point has."""
    m = d.measured()
    m = m[m["response"] == response]
    if m.empty:
        return None
    k = len(d.factors)
    per = [m[m["point"] == p].sort_values("rep")["value"].tolist() for p in range(2 ** k)]
    r = min(len(v) for v in per)
    if r < 1:
        return None
    return analyse(list(d.factors), [v[:r] for v in per], confidence=confidence)


def effects_table(res: FactorialResult) -> pd.DataFrame:
    return pd.DataFrame([{"effect": e.name, "q": e.q, "ci_low": e.ci_low,
                          "ci_high": e.ci_high, "variation_%": 100 * e.variation,
                          "significant": "yes" if e.significant else "no"}
                         for e in res.effects]
                        + [{"effect": "error", "q": np.nan, "ci_low": np.nan,
                            "ci_high": np.nan, "variation_%": 100 * res.error_variation,
                            "significant": ""}])


def point_means(d: ExperimentData) -> pd.DataFrame:
    """Per point: its levels and the mean (and reps) of each response."""
    m = d.measured()
    if m.empty:
        return pd.DataFrame()
    g = m.groupby(["point", "levels", "response"])["value"].agg(["mean", "count"])
    wide = g["mean"].unstack("response").reset_index()
    reps = g["count"].groupby(level=0).min()
    wide.insert(2, "reps", wide["point"].map(reps))
    lv = wide["levels"].map(json.loads)
    for f in d.factors:
        wide.insert(1, f, lv.map(lambda x, f=f: x.get(f)))
    return wide.drop(columns="levels")


def grid_fits(d: ExperimentData) -> pd.DataFrame:
    """Cores x work: per core count, wall time = fixed + per_task * work."""
    m = d.measured()
    m = m[m["response"] == "wall_s"]
    if m.empty:
        return pd.DataFrame()
    lv = m["levels"].map(json.loads)
    m = m.assign(cores=lv.map(lambda x: x.get("cores")), work=lv.map(lambda x: x.get("work")))
    rows = []
    for cores, g in m.groupby("cores"):
        try:
            f = linear_fit(g["work"].tolist(), g["value"].tolist())
        except ValueError:
            continue
        rows.append({"cores": cores, "points": f.points, "fixed_s": f.fixed,
                     "fixed_ci95": f.fixed_ci, "per_task_s": f.per_task,
                     "per_task_ci95": f.per_task_ci, "r2": f.r2,
                     "tasks_per_s_at_scale": 1 / f.per_task if f.per_task > 0 else np.nan})
    return pd.DataFrame(rows)


def plot_effects(results: dict[str, FactorialResult], out: Path) -> str:
    n = len(results)
    fig, axes = plt.subplots(n, 2, figsize=(11, 2.8 * n + 0.4), squeeze=False)
    for (a, b), (resp, res) in zip(axes, results.items(), strict=True):
        eff = res.ranked()
        names = [e.name for e in eff]
        a.barh(names[::-1], [100 * e.variation for e in eff][::-1], color="#1f77b4")
        a.barh(["error"], [100 * res.error_variation], color="#bbbbbb")
        a.set(xlabel="% of variation", title=f"{RESPONSE_LABELS.get(resp, resp)}: "
                                             "allocation of variation")
        qs = np.array([e.q for e in eff])
        lo = qs - np.array([e.ci_low for e in eff])
        hi = np.array([e.ci_high for e in eff]) - qs
        b.errorbar(qs[::-1], names[::-1], xerr=[lo[::-1], hi[::-1]], fmt="o", capsize=4)
        b.axvline(0, color="k", lw=0.8)
        b.set(xlabel=f"effect q (± {res.confidence:.0%} CI)", title="effects")
        for ax in (a, b):
            ax.grid(alpha=0.3, axis="x")
    return _save(fig, out / "effects.png")


def plot_grid(d: ExperimentData, fits: pd.DataFrame, out: Path) -> str:
    m = d.measured()
    m = m[m["response"] == "wall_s"]
    lv = m["levels"].map(json.loads)
    m = m.assign(cores=lv.map(lambda x: x.get("cores")), work=lv.map(lambda x: x.get("work")))
    fig, ax = plt.subplots(figsize=(7, 4.3))
    for _, f in fits.iterrows():
        g = m[m["cores"] == f["cores"]]
        pts = ax.plot(g["work"], g["value"], "o", alpha=0.7, label=f"{f['cores']} core(s)")
        xs = np.array([0, g["work"].max()])
        ax.plot(xs, f["fixed_s"] + f["per_task_s"] * xs, "-", color=pts[0].get_color(),
                label=f"fit: {f['fixed_s']:.2f} s + {f['per_task_s']:.3f} s x work")
    ax.set(xlabel="submissions graded (work)", ylabel="wall time (s)",
           title="cores x work: fixed overhead (intercept) and per-task cost (slope)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, out / "grid.png")


def write_report(path: Path) -> Path:
    """Analyse the experiment in ``path`` and write ``path/report/index.html``."""
    d = load(path)
    out = path / "report"
    out.mkdir(exist_ok=True)
    esc = html.escape
    design = d.meta["design"]
    parts = [f"<h1>gradeline experiment <code>{esc(d.meta['id'])}</code></h1>"]
    machine = d.meta.get("machine", {})
    parts.append(f"<p>{esc(str(machine.get('cpu_model')))} &middot; CPUs "
                 f"{esc(str(machine.get('cpus')))} &middot; started "
                 f"{esc(str(d.meta.get('started_at')))} &middot; design "
                 f"<b>{esc(design['kind'])}</b>, "
                 + ", ".join(f"{esc(k)} = {esc(' / '.join(map(str, v)))}"
                             for k, v in d.factors.items())
                 + f"; {design['work']} submissions per point unless <code>work</code> "
                 f"varies; warm-up {'discarded' if design['warmup'] else 'none'}.</p>")
    means = point_means(d)
    parts.append("<h2>Design points (means over replications)</h2>")
    parts.append(_table(means))
    if design["kind"] == "2k":
        parts.append("<h2>Which factor matters: effects and allocation of variation</h2>")
        resps = [r for r in ("throughput", "mean_response_s", "cpu_s", "ll_mpki")
                 if r in set(d.points["response"])]
        results = {r: res for r in resps if (res := effects(d, r)) is not None}
        if results:
            parts.append(f"<img src='{plot_effects(results, out)}' alt='effects'>")
        for r, res in results.items():
            top = res.ranked()[0]
            sig = "significant" if top.significant else "not significant"
            parts.append(f"<h3>{esc(RESPONSE_LABELS.get(r, r))}</h3><p>{res.replications} "
                         f"replications per point; the largest share of the variation is "
                         f"<b>{esc(top.name)}</b> ({100 * top.variation:.1f}%, effect "
                         f"{top.q:+.4g}, {sig} at {res.confidence:.0%}); "
                         f"experimental error {100 * res.error_variation:.1f}%.</p>")
            parts.append(_table(effects_table(res)))
        parts.append("<p>Effects q of the model y = q<sub>0</sub> + &Sigma; q<sub>i</sub> "
                     "x<sub>i</sub> + ... with each factor coded -1 (first level) / +1 "
                     "(second level): q is half the change from low to high. Variation = "
                     "SS<sub>effect</sub> / SST; the interval is q &plusmn; "
                     "t<sub>2<sup>k</sup>(r-1)</sub> s<sub>e</sub> / &radic;(2<sup>k</sup>r) "
                     "(Jain, ch. 18). An interval containing 0: not significant.</p>")
    else:
        fits = grid_fits(d)
        parts.append("<h2>Fixed overhead vs per-task cost</h2>")
        if not fits.empty:
            parts.append(f"<img src='{plot_grid(d, fits, out)}' alt='grid'>")
        parts.append(_table(fits))
        parts.append("<p>Per core count, least squares of wall time on the number of "
                     "submissions: the intercept is what a run costs however little it "
                     "grades (pool and container start, the corpus's first compile), the "
                     "slope what one more submission costs; ± 95% CI.</p>")
    parts.append("<h2>Node monitor</h2>")
    summ = mon.summary(d.monitor)
    parts.append(_table(summ))
    if not d.monitor.empty:
        runs = [r for r in summ["run"] if not str(r).endswith("-r-1")][:4]
        img = mon.plot_runs(d.monitor, runs, out, "monitor.png", "the first design points")
        parts.append(f"<img src='{img}' alt='monitor'>")
        parts.append("<p>Sampled from /proc every "
                     f"{d.meta.get('monitor_interval_s', 0.5)} s on the point's cores; "
                     "<code>monitor_cpu_share</code> is the sampling thread's own CPU time "
                     "over the run's wall time (a share of one core).</p>")
    body = "\n".join(parts)
    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>gradeline "
                    f"experiment {esc(d.meta['id'])}</title><style>{CSS}</style>{ONLOAD}"
                    f"</head><body>{body}</body></html>\n")
    return page
