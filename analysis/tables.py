"""A campaign directory (runs.csv, counters.csv, cachegrind.csv) -> the tables we owe users.

Pure pandas on the tidy CSVs, so the same code analyses a campaign from this laptop,
from a 64-core node, or the thesis's published numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from analysis.scaling import USLFit, fit_usl, mean_ci, usl

# The thesis's own figures (Throughput_max in req/s), kept as data, not as code.
THESIS_64 = pd.Series([0.66, 8.75, 16.44, 19.56], index=[1, 16, 32, 64], name="X_max")
THESIS_16 = {"table_2_2": pd.Series([0.3, 3.44], index=[1, 16]),
             "text_runs": pd.Series([0.3, 3.37], index=[1, 16])}  # S(16)=11.47 vs 11.23


@dataclass
class CampaignData:
    path: Path
    meta: dict[str, Any]
    runs: pd.DataFrame
    counters: pd.DataFrame
    cachegrind: pd.DataFrame


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()


def load(path: Path) -> CampaignData:
    meta = json.loads((path / "campaign.json").read_text())
    return CampaignData(path, meta, _csv(path / "runs.csv"), _csv(path / "counters.csv"),
                        _csv(path / "cachegrind.csv"))


def throughput_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (workload, N): X_max mean ± CI95 over reps, S(N) ± CI, efficiency, ideal."""
    rows = []
    measured = runs[~runs["warmup"].astype(bool)]
    for (w, n), g in measured.groupby(["workload", "n"]):
        m, h = mean_ci(g["throughput"].tolist())
        rows.append({"workload": w, "N": int(n), "reps": len(g), "X": m, "X_ci95": h,
                     "X_raw": g["raw_throughput"].mean(),
                     "R_mean_s": g["mean_response_s"].mean(), "p95_s": g["p95_s"].mean()})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    out = []
    for _, g in df.groupby("workload"):
        g = g.sort_values("N").copy()
        base = g[g["N"] == 1]
        if base.empty:
            g["S"] = np.nan
        else:
            x1, h1 = float(base["X"].iloc[0]), float(base["X_ci95"].iloc[0])
            g["S"] = g["X"] / x1
            rel = np.sqrt((g["X_ci95"] / g["X"]) ** 2 + (h1 / x1) ** 2)
            g["S_ci95"] = np.where(g["N"] == 1, 0.0, g["S"] * rel)
        g["efficiency"] = g["S"] / g["N"]
        g["ideal_S"] = g["N"].astype(float)
        out.append(g)
    return pd.concat(out, ignore_index=True)


def knee(summary: pd.DataFrame, workload: str, threshold: float = 0.9) -> int | None:
    """The first N whose efficiency S(N)/N is below ``threshold`` even at the top of its
    95% CI (None: linear so far, or not distinguishable from it). A noisy point estimate
    alone must not move an admin's partition advice: on a 2-core VM one slow repetition
    put S(2) at 1.71 +- 0.77."""
    g = summary[summary["workload"] == workload].sort_values("N")
    below = g[_efficiency_top(g) < threshold]
    return int(below["N"].iloc[0]) if not below.empty else None


def efficiency_below_within_noise(summary: pd.DataFrame, workload: str,
                                  threshold: float = 0.9) -> list[int]:
    """The N whose point efficiency is below ``threshold`` but whose CI reaches it."""
    g = summary[summary["workload"] == workload]
    low = g[(g["efficiency"] < threshold) & (_efficiency_top(g) >= threshold)]
    return [int(n) for n in low["N"]]


def _efficiency_top(g: pd.DataFrame) -> pd.Series:
    """S(N)/N at the top of its 95% CI (the point value where no CI was computed)."""
    ci = g["S_ci95"].fillna(0.0) if "S_ci95" in g else 0.0
    return (g["S"] + ci) / g["N"]


@dataclass(frozen=True)
class ScalingFit:
    workload: str
    model: str  # "USL" or "Amdahl (beta = 0: too few core counts for USL)"
    fit: USLFit

    def describe(self) -> str:
        f = self.fit
        peak = "none (no coherency term)" if math.isinf(f.n_peak) else f"{f.n_peak:.1f}"
        return (f"{self.workload}: {self.model}: gamma {f.gamma:.3f} "
                f"[{f.gamma_ci[0]:.3f}, {f.gamma_ci[1]:.3f}], alpha {f.alpha:.4f} "
                f"[{f.alpha_ci[0]:.4f}, {f.alpha_ci[1]:.4f}], beta {f.beta:.2e} "
                f"[{f.beta_ci[0]:.2e}, {f.beta_ci[1]:.2e}], N_peak {peak}")


def fit_scaling(runs: pd.DataFrame, workload: str) -> ScalingFit | None:
    """USL on every measured rep when there are >= 3 core counts; with 2 (this 2-core
    machine) only the contention term is identifiable, so Amdahl's law (USL, beta=0)."""
    g = runs[(runs["workload"] == workload) & ~runs["warmup"].astype(bool)]
    g = g[np.isfinite(g["throughput"])]
    ns, xs = g["n"].to_numpy(float), g["throughput"].to_numpy(float)
    if len(set(ns)) >= 3 and len(ns) >= 4:
        return ScalingFit(workload, "USL", fit_usl(ns, xs))
    if len(set(ns)) < 2 or len(ns) < 3:
        return None

    def amdahl(n: np.ndarray, gamma: float, alpha: float) -> np.ndarray:
        return np.asarray(usl(n, gamma, alpha, 0.0))

    (gm, a), cov = optimize.curve_fit(amdahl, ns, xs, p0=(xs[ns == 1].mean(), 0.05),
                                      bounds=([0, -1], [np.inf, 1]))
    t = stats.t.ppf(0.975, max(len(ns) - 2, 1))
    e = np.sqrt(np.clip(np.diag(cov), 0, None)) * t
    return ScalingFit(workload, "Amdahl (USL with beta = 0: only two core counts)",
                      USLFit(float(gm), float(a), 0.0, (gm - e[0], gm + e[0]),
                             (a - e[1], a + e[1]), (0.0, 0.0)))


def operational_laws(runs: pd.DataFrame) -> pd.DataFrame:
    """Per measured rep, each law's prediction against what was measured.

    * interactive response time law (closed loop, N workers, think time Z = 0):
      R = N / X - Z, against the mean response time of the jobs;
    * Little's law over the steady window: L = X * R, against the measured occupancy;
    * utilization law: U = X * D with D the CPU demand per job measured at N = 1,
      against U = CPU seconds / (N * wall). A ratio > 1 is demand inflation: each job
      costs more CPU when N run together (the thesis's L3 effect shows up here)."""
    rows = []
    m = runs[~runs["warmup"].astype(bool)]
    demand1 = m[m["n"] == 1].groupby("workload").apply(
        lambda g: (g["cpu_s"] / g["jobs"]).mean(), include_groups=False)
    for r in m.itertuples():
        x, n = float(r.throughput), int(r.n)
        rows.append({"workload": r.workload, "N": n, "rep": r.rep, "law": "interactive R=N/X-Z",
                     "predicted": n / x, "measured": r.mean_response_s})
        rows.append({"workload": r.workload, "N": n, "rep": r.rep, "law": "Little L=X*R",
                     "predicted": x * r.mean_response_s, "measured": r.occupancy})
        if r.workload in demand1.index:
            u_meas = r.cpu_s / (n * r.wall_s)
            rows.append({"workload": r.workload, "N": n, "rep": r.rep,
                         "law": "utilization U=X*D(1)",
                         "predicted": r.raw_throughput * demand1[r.workload] / n,
                         "measured": u_meas})
    df = pd.DataFrame(rows)
    if not df.empty:
        df["rel_error"] = (df["measured"] - df["predicted"]) / df["predicted"]
    return df


def laws_summary(laws: pd.DataFrame) -> pd.DataFrame:
    if laws.empty:
        return laws
    return (laws.groupby(["workload", "N", "law"])
            .agg(predicted=("predicted", "mean"), measured=("measured", "mean"),
                 rel_error=("rel_error", "mean")).reset_index())


# ------------------------------------------------------------------ cachegrind

def miss_curve(cg: pd.DataFrame, process: str | None = None) -> pd.DataFrame:
    """Per simulated L3 size: LL miss ratio (misses / LL refs) and misses per 1000
    instructions (MPKI), summed over the sources (and over the processes g++ starts)."""
    d = cg if process is None else cg[cg["process"] == process]
    g = d.groupby("ll_mb")[["Ir", "ll_refs", "ll_misses"]].sum().reset_index()
    g["miss_ratio"] = g["ll_misses"] / g["ll_refs"]
    g["mpki"] = 1000 * g["ll_misses"] / g["Ir"]
    g["process"] = process or "all"
    return g


def enough_l3_per_core(curve: pd.DataFrame, tolerance: float = 0.10) -> tuple[float, bool]:
    """(smallest simulated L3 per core whose MPKI is within ``tolerance`` of the largest
    size's, whether the curve flattened inside the sweep). Not flattened means misses
    still fall at the largest size: the answer is then "at least that much", and the
    sweep should go further (``--ll-mb``)."""
    c = curve.sort_values("ll_mb")
    floor = float(c["mpki"].iloc[-1])
    ok = c[c["mpki"] <= floor * (1 + tolerance)]
    mb = float(ok["ll_mb"].iloc[0])
    return mb, mb < float(c["ll_mb"].iloc[-1])


def simulated_inflation(curve: pd.DataFrame, l3_total_mb: float, ns: list[int]
                        ) -> pd.DataFrame:
    """Inflation of LL misses when N cores share ``l3_total_mb``: each core's compile
    sees L3/N, so Count(N) / (N Count(1)) = misses(L3/N) / misses(L3) per compile.
    Sizes between simulated points are interpolated on log2(size); beyond the largest
    the curve is taken as flat (stated in the report)."""
    c = curve.sort_values("ll_mb")
    lx, y = np.log2(c["ll_mb"].to_numpy()), c["mpki"].to_numpy()

    def at(mb: float) -> float:
        return float(np.interp(math.log2(mb), lx, y))

    base = at(l3_total_mb)
    return pd.DataFrame([{"L3_total_MB": l3_total_mb, "N": n, "L3_per_core_MB": l3_total_mb / n,
                          "inflation": at(l3_total_mb / n) / base} for n in ns])


def recommendation(mb_per_core: float, cores: tuple[int, ...] = (4, 8, 16, 32, 64, 128)
                   ) -> pd.DataFrame:
    """Cores -> minimum L3 (the thesis's table 10.1, from our measured curve)."""
    return pd.DataFrame({"cores": list(cores),
                         "min_L3_MB": [round(c * mb_per_core, 1) for c in cores],
                         "L3_per_core_MB": [mb_per_core] * len(cores)})


def counter_inflation(counters: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Hardware counters: per event, (Count(N)/jobs) / (Count(1)/jobs) -- equal to
    Count(N) / (N Count(1)) when each of N workers does the work one did."""
    if counters.empty:
        return pd.DataFrame()
    tot = counters[counters["cpu"].isna()] if "cpu" in counters else counters
    jobs = runs.set_index(["workload", "n", "rep"])["jobs"]
    tot = tot.join(jobs, on=["workload", "n", "rep"])
    tot["per_job"] = tot["value"] / tot["jobs"]
    g = tot.groupby(["source", "event", "workload", "n"])["per_job"].mean().reset_index()
    out = []
    for (_, _, _), h in g.groupby(["source", "event", "workload"]):
        one = h[h["n"] == 1]["per_job"]
        if not one.empty and float(one.iloc[0]) > 0:
            h = h.assign(inflation=h["per_job"] / float(one.iloc[0]))
            out.append(h)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()
