"""The node monitor's samples (``monitor.csv``: run, host, t_s, cpu, metric, value) as
tables and plots beside the throughput they explain: were the cores busy, did the
machine switch contexts or wait for the disk, and what did watching cost."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


def load(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()


def summary(mon: pd.DataFrame) -> pd.DataFrame:
    """Per run: samples, mean busy share of the watched cores, user/system/iowait,
    context switches/s, peak memory used, disk MB/s, and the monitor's own CPU share."""
    if mon.empty:
        return pd.DataFrame()
    rows = []
    for run, g in mon.groupby("run", sort=False):
        def mean(metric: str, g: pd.DataFrame = g) -> float:
            v = g[g["metric"] == metric]["value"]
            return float(v.mean()) if not v.empty else float("nan")

        used = g[g["metric"] == "mem_used_bytes"]["value"]
        rows.append({"run": run, "samples": int(g["t_s"].nunique()),
                     "busy": mean("busy"), "user": mean("user"), "system": mean("system"),
                     "iowait": mean("iowait"), "ctxt_per_s": mean("ctxt_per_s"),
                     "mem_used_peak_MB": float(used.max()) / 2**20 if not used.empty
                     else float("nan"),
                     "disk_read_MB_s": mean("read_bytes_per_s") / 2**20,
                     "disk_write_MB_s": mean("write_bytes_per_s") / 2**20,
                     "monitor_cpu_share": mean("monitor_overhead")})
    return pd.DataFrame(rows)


def plot_runs(mon: pd.DataFrame, runs: list[str], out: Path, name: str, title: str) -> str:
    """Per-core busy share and context switches/s over time, one panel row per run."""
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 2.3 * len(runs) + 0.6),
                             squeeze=False)
    for (a, b), run in zip(axes, runs, strict=True):
        g = mon[mon["run"] == run]
        busy = g[g["metric"] == "busy"]
        for cpu, c in busy.groupby("cpu"):
            a.plot(c["t_s"], c["value"] * 100, lw=1, label=f"cpu {int(cpu)}")
        a.set(ylim=(0, 105), ylabel="busy %", title=f"{run}: per-core utilization")
        a.legend(fontsize=7, loc="lower right")
        cs = g[g["metric"] == "ctxt_per_s"]
        b.plot(cs["t_s"], cs["value"], lw=1, color="#9467bd")
        b.set(ylabel="context switches/s", title=f"{run}: context switches")
        for ax in (a, b):
            ax.grid(alpha=0.3)
            ax.set_xlabel("seconds into the run")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name
