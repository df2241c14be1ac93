"""The campaign report: plots (matplotlib) and one HTML page a person opens in a browser.

Self-contained: the page and its PNGs sit in ``<campaign>/report/``; nothing is
fetched from the network, so it renders on an offline cluster login node too.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import monitor
from analysis import tables as ca
from analysis.scaling import fit_usl, speedup

COLORS = {"pipeline": "#1f77b4", "bare": "#ff7f0e", "cpu": "#2ca02c"}
LABELS = {"pipeline": "gradeline pipeline (sandboxed)", "bare": "bare loop (g++ + run + "
          "compare)", "cpu": "pure CPU loop"}


def _save(fig: Figure, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def plot_scaling(summary: pd.DataFrame, out: Path) -> str:
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    nmax = int(summary["N"].max())
    a.plot([1, nmax], [1, nmax], "k--", lw=1, label="ideal S(N) = N")
    for w, g in summary.groupby("workload"):
        a.errorbar(g["N"], g["S"], yerr=g.get("S_ci95"), marker="o", capsize=4,
                   color=COLORS.get(str(w)), label=LABELS.get(str(w), str(w)))
        b.errorbar(g["N"], g["X"], yerr=g["X_ci95"], marker="o", capsize=4,
                   color=COLORS.get(str(w)), label=LABELS.get(str(w), str(w)))
    a.set(xlabel="cores N (pinned workers)", ylabel="speedup S(N) = X(N) / X(1)",
          title="Scaling, mean ± 95% CI")
    b.set(xlabel="cores N", ylabel="throughput X (jobs/s)", yscale="log",
          title="Throughput_max(N)")
    b.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    b.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    for ax in (a, b):
        ax.set_xticks(sorted(summary["N"].unique()))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, out / "scaling.png")


def plot_miss_rate(curves: pd.DataFrame, enough: float, out: Path) -> str:
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for proc, g in curves.groupby("process"):
        a.plot(g["ll_mb"], g["miss_ratio"] * 100, marker="o", label=str(proc))
        b.plot(g["ll_mb"], g["mpki"], marker="o", label=str(proc))
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(curves["ll_mb"].unique()))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.axvline(enough, color="grey", ls=":", label=f"enough: {enough:g} MB/core")
        ax.axvline(2.5, color="red", ls="--", lw=0.8, label="thesis: 2.5 MB/core")
        ax.set_xlabel("simulated L3 per core (MB), cachegrind")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    a.set(ylabel="LL miss ratio (%) = misses / LL refs", title="g++ compiling the corpus")
    b.set(ylabel="LL misses per 1000 instructions", title="g++ LL MPKI")
    return _save(fig, out / "miss_rate.png")


def plot_inflation(sim: pd.DataFrame, hw: pd.DataFrame, out: Path) -> str:
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for (proc, total), g in sim.groupby(["process", "L3_total_MB"]):
        ax.plot(g["N"], g["inflation"], marker="o", ls="-" if proc == "all" else ":",
                label=f"simulated, g++ {proc}: {total:g} MB L3 shared by N cores")
    if not hw.empty:
        for (src, ev, w), g in hw.groupby(["source", "event", "workload"]):
            ax.plot(g["n"], g["inflation"], marker="s", ls="--", label=f"{src} {ev} ({w})")
    ax.axhline(1, color="k", lw=0.8)
    ax.axhline(2.25, color="red", ls="--", lw=0.8, label="thesis: 2.25 at N=16 (20 MB)")
    ax.set(xscale="log", xlabel="cores N sharing the L3",
           ylabel="inflation Count(N) / (N Count(1))", title="L3-miss inflation of g++")
    ax.set_xticks(sorted(sim["N"].unique()))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, out / "inflation.png")


def plot_usl(runs: pd.DataFrame, fits: list[ca.ScalingFit], out: Path) -> str:
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    m = runs[~runs["warmup"].astype(bool)]
    for f in fits:
        g = m[m["workload"] == f.workload]
        a.plot(g["n"], g["throughput"], "o", color=COLORS.get(f.workload), alpha=0.6)
        ns = np.linspace(1, max(8, g["n"].max() * 4), 100)
        a.plot(ns, f.fit.predict(ns), "-", color=COLORS.get(f.workload),
               label=f"{f.workload}: {f.model.split(' (')[0]}")
    a.set(xlabel="cores N", ylabel="throughput X (jobs/s)",
          title="This campaign: fits (extrapolated beyond measured N)")
    thesis = ca.THESIS_64
    fit = fit_usl(thesis.index.to_numpy(float), thesis.to_numpy(float))
    ns = np.linspace(1, 96, 200)
    b.plot(thesis.index, thesis.values, "ko", label="thesis, 64-core Xeon (80 MB L3)")
    b.plot(ns, fit.predict(ns), "k-", label=f"USL fit, N_peak {fit.n_peak:.0f}")
    b.set(xlabel="cores N", ylabel="Throughput_max (req/s)",
          title="Reference: the thesis's published figures")
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, out / "usl.png")


def _table(df: pd.DataFrame, floatfmt: str = "{:.4g}") -> str:
    if df.empty:
        return "<p><em>no data</em></p>"
    return str(df.to_html(index=False, float_format=lambda v: floatfmt.format(v),
                          border=0, classes="t"))


CSS = """body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table.t{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.t td,table.t th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:right}
.note{background:#fff8e1;border-left:4px solid #f0ad4e;padding:.5em 1em}
img{max-width:100%;border:1px solid #eee}code{background:#f4f4f4;padding:0 .2em}"""

ONLOAD = """<script>window.addEventListener('load',function(){var ok=0;
document.querySelectorAll('img').forEach(function(i){if(i.naturalWidth>0)ok++;});
document.body.setAttribute('data-images-loaded',ok);});</script>"""


def write_report(path: Path) -> Path:
    """Analyse the campaign in ``path`` and write ``path/report/index.html``."""
    d = ca.load(path)
    out = path / "report"
    out.mkdir(exist_ok=True)
    meta = d.meta
    summary = ca.throughput_summary(d.runs) if not d.runs.empty else pd.DataFrame()
    parts = [*_header(d), *_scaling(summary, meta, out), *_cache(d, summary, out),
             *_fits(d, summary, out), *_monitor(path, summary, out), *_laws(d)]
    esc = html.escape
    body = "\n".join(parts)
    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>gradeline "
                    f"campaign {esc(meta['id'])}</title><style>{CSS}</style>{ONLOAD}</head>"
                    f"<body>{body}</body></html>\n")
    return page


def _header(d: ca.CampaignData) -> list[str]:
    """The campaign, its machine and where its cache numbers come from."""
    parts: list[str] = []
    esc = html.escape
    meta, machine = d.meta, d.meta.get("machine", {})
    parts.append(f"<h1>gradeline scaling campaign <code>{esc(meta['id'])}</code></h1>")
    l3 = machine.get("l3_bytes")
    parts.append(
        f"<p>{esc(str(machine.get('cpu_model')))} &middot; cores used "
        f"{esc(str(machine.get('cpus')))} &middot; L3 reported "
        f"{l3 / 2**20:g} MiB &middot; kernel {esc(str(machine.get('kernel')))} &middot; "
        f"{esc(str(meta.get('started_at')))} &rarr; {esc(str(meta.get('finished_at')))}</p>"
        if l3 else f"<p>{esc(str(machine.get('cpu_model')))}</p>")
    parts.append(f"<p>Command: <code>{esc(meta.get('command', ''))}</code><br>Config: "
                 f"<code>{esc(str(meta.get('config')))}</code></p>")
    src = machine.get("sources", {})
    items = "".join(f"<li><b>{esc(k)}</b>: {'usable' if v['usable'] else 'UNUSABLE'} "
                    f"&mdash; {esc(v['reason'])}</li>" for k, v in src.items())
    parts.append(f"<div class='note'><b>Where the cache numbers come from.</b><ul>{items}"
                 f"<li><b>L3 partitioning (resctrl)</b>: {esc(str(machine.get('resctrl')))}"
                 "</li></ul>Simulated (cachegrind) and measured (likwid/perf) numbers are "
                 "labelled as such everywhere below.</div>")
    return parts


def _scaling(summary: pd.DataFrame, meta: dict[str, Any], out: Path) -> list[str]:
    """S(N) per workload, its table, and where each leaves linear."""
    parts: list[str] = []
    esc = html.escape
    parts.append("<h2>Scaling S(N) of the three workloads</h2>")
    if not summary.empty:
        parts.append(f"<img src='{plot_scaling(summary, out)}' alt='S(N)'>")
        cols = ["workload", "N", "reps", "X", "X_ci95", "S", "S_ci95", "efficiency",
                "ideal_S", "X_raw", "R_mean_s", "p95_s"]
        parts.append(_table(summary[[c for c in cols if c in summary]]))
        knees = []
        for w in summary["workload"].unique():
            k = ca.knee(summary, str(w))
            nmax = int(summary["N"].max())
            noisy = ca.efficiency_below_within_noise(summary, str(w))
            knees.append(f"<li>{esc(str(w))}: " + (
                f"leaves linear (efficiency &lt; 0.9 beyond its 95% CI) at N = {k}" if k else
                f"still linear (efficiency &ge; 0.9 within its 95% CI) up to N = {nmax}"
                + (f"; the point estimate is below 0.9 at N = {', '.join(map(str, noisy))} but "
                   "inside the noise: "
                   "more repetitions (--adaptive) would tell" if noisy else "")) + "</li>")
        parts.append(f"<p>Knee (where S(N) leaves linear):</p><ul>{''.join(knees)}</ul>")
        trim = meta["config"].get("trim", 0.0)
        window = (f"the first and last {trim:.0%} of completions trimmed" if trim else
                  "from the first job's start to the last finish, so worker start-up is "
                  "excluded")
        parts.append(f"<p>X is jobs/s over each repetition's steady window ({window}); "
                     f"X_raw includes start-up. {meta['config'].get('warmup_reps', 0)} "
                     "warm-up repetition(s) per point are run and discarded. ± is the 95% "
                     "CI (t-distribution) over repetitions.</p>")
    return parts


def _cache(d: ca.CampaignData, summary: pd.DataFrame, out: Path) -> list[str]:
    """g++'s simulated L3 misses, the inflation factors and the L3-per-core advice."""
    parts: list[str] = []
    esc = html.escape
    l3 = d.meta.get("machine", {}).get("l3_bytes")
    parts.append("<h2>g++ L3 miss rate vs L3 per core (cachegrind, simulated)</h2>")
    rec_mb = None
    if not d.cachegrind.empty:
        whole = ca.miss_curve(d.cachegrind)
        curves = pd.concat([whole] + [
            ca.miss_curve(d.cachegrind, p) for p in ("cc1plus", "ld")
            if p in set(d.cachegrind["process"])], ignore_index=True)
        rec_mb, flat = ca.enough_l3_per_core(whole)
        cc_mb, cc_flat = (ca.enough_l3_per_core(ca.miss_curve(d.cachegrind, "cc1plus"))
                          if "cc1plus" in set(d.cachegrind["process"]) else (rec_mb, flat))
        parts.append(f"<img src='{plot_miss_rate(curves, rec_mb, out)}' alt='miss rate'>")
        parts.append(_table(curves[["process", "ll_mb", "Ir", "ll_refs", "ll_misses",
                                    "miss_ratio", "mpki"]]))
        srcs = ", ".join(sorted(set(d.cachegrind["source"])))
        parts.append(f"<p>Sources compiled: {esc(srcs)}. <code>all</code> sums every "
                     "process g++ starts (driver, cc1plus, as, collect2, ld).</p>")
        sims = []
        for proc in ("all", "cc1plus"):
            if proc != "all" and proc not in set(d.cachegrind["process"]):
                continue
            curve = whole if proc == "all" else ca.miss_curve(d.cachegrind, proc)
            for total, ns in ((20.0, [1, 2, 4, 8, 16]), (80.0, [1, 2, 4, 8, 16, 32, 64])):
                sims.append(ca.simulated_inflation(curve, total, ns).assign(process=proc))
        sim = pd.concat(sims, ignore_index=True).sort_values(["process", "L3_total_MB", "N"])
        hw = ca.counter_inflation(d.counters, d.runs)
        parts.append("<h2>L3-miss inflation factors</h2>")
        parts.append(f"<img src='{plot_inflation(sim, hw, out)}' alt='inflation'>")
        parts.append("<p>Simulated: N cores sharing the thesis's 20 MB (16-core) and 80 MB "
                     "(64-core) L3 each see L3/N; inflation = misses(L3/N) / misses(L3) per "
                     "compile (interpolated on log size; flat beyond the largest simulated "
                     "size, so shares above it read as 1.0).</p>")
        parts.append(_table(sim))
        if hw.empty:
            parts.append("<p class='note'>No hardware-counter inflation: no counter source "
                         "is usable on this machine (see above).</p>")
        else:
            parts.append(_table(hw))
        parts.append("<h2>Recommendation: L3 per core</h2>")
        def verdict(mb: float, flattened: bool, what: str) -> str:
            return (f"{what}'s miss curve flattens at <b>{mb:g} MB of L3 per core</b>"
                    if flattened else
                    f"{what}'s misses still fall at the largest simulated size: it wants "
                    f"<b>&ge; {mb:g} MB of L3 per core</b> (extend <code>--ll-mb</code> "
                    "to find where it flattens)")
        parts.append(f"<p>{verdict(rec_mb, flat, 'g++ (all its processes)')}; "
                     f"{verdict(cc_mb, cc_flat, 'cc1plus alone')}. Criterion: the smallest "
                     "simulated size whose MPKI is within 10% of the largest size's. The "
                     "thesis recommended &ge; 2.5 MB. Minimum L3 per socket at "
                     f"{rec_mb:g} MB per core:</p>")
        parts.append(_table(ca.recommendation(rec_mb)))
        if not summary.empty and l3:
            ns = sorted(summary["N"].unique())
            parts.append("<p>On this machine: " + ", ".join(
                f"N={n}: {l3 / 2**20 / n:g} MB/core" for n in ns) + ".</p>")
    return parts


def _fits(d: ca.CampaignData, summary: pd.DataFrame, out: Path) -> list[str]:
    """USL and Amdahl fits of this campaign beside the thesis's figures."""
    parts: list[str] = []
    esc = html.escape
    parts.append("<h2>USL / Amdahl fits</h2>")
    fits = [f for w in (summary["workload"].unique() if not summary.empty else [])
            if (f := ca.fit_scaling(d.runs, str(w))) is not None]
    if fits:
        parts.append(f"<img src='{plot_usl(d.runs, fits, out)}' alt='USL'>")
        parts.append("<ul>" + "".join(f"<li>{esc(f.describe())}</li>" for f in fits) + "</ul>")
    t = ca.THESIS_64
    s = speedup(t)
    tf = fit_usl(t.index.to_numpy(float), t.to_numpy(float))
    parts.append(f"<p>Reference (thesis, 64 cores): S = {', '.join(f'{v:.2f}' for v in s['S'])}"
                 f" at N = {', '.join(map(str, t.index))}; USL alpha {tf.alpha:.4f}, beta "
                 f"{tf.beta:.2e}, N_peak {tf.n_peak:.0f}. Its 16-core server: S(16) = "
                 f"{3.37 / 0.3:.2f} from the runs' 3.37 req/s, {3.44 / 0.3:.2f} from table "
                 "2.2's 3.44 &mdash; the thesis is inconsistent there; both kept as data.</p>")
    return parts


def _monitor(path: Path, summary: pd.DataFrame, out: Path) -> list[str]:
    """What the node monitor saw during the repetitions."""
    parts: list[str] = []
    parts.append("<h2>Node monitor during the repetitions</h2>")
    mon = monitor.load(path / "monitor.csv")
    if mon.empty:
        parts.append("<p><em>no monitor samples (a campaign from before the monitor)</em></p>")
    else:
        summ = monitor.summary(mon)
        parts.append(_table(summ))
        last = [str(r) for r in summ["run"]]
        top = [r for w in summary["workload"].unique()
               for r in last[::-1] if r.startswith(f"{w}/{int(summary['N'].max())}/")][:3] \
            if not summary.empty else last[:3]
        if top:
            img = monitor.plot_runs(mon, top, out, "monitor.png",
                                    "the last repetition of each workload at the largest N")
            parts.append(f"<img src='{img}' alt='monitor'>")
        parts.append("<p>Sampled from /proc on the repetition's cores (busy = 1 - idle - "
                     "iowait) every 0.5 s; <code>monitor_cpu_share</code> is the sampling "
                     "thread's CPU time over the repetition's wall time, a share of one "
                     "core: the price of watching.</p>")
    return parts


def _laws(d: ca.CampaignData) -> list[str]:
    """The operational laws checked against the runs."""
    parts: list[str] = []
    parts.append("<h2>Operational-law checks</h2>")
    laws = ca.laws_summary(ca.operational_laws(d.runs)) if not d.runs.empty else pd.DataFrame()
    parts.append(_table(laws))
    parts.append("<p>Interactive law with think time Z = 0 (each worker is a closed-loop "
                 "'student'); Little's law over the steady window; utilization law with the "
                 "CPU demand per job D measured at N = 1 &mdash; a measured/predicted ratio "
                 "above 1 at larger N is per-job CPU demand inflation (cache contention, "
                 "memory bandwidth), below 1 idle cores.</p>")
    return parts
