"""The hostile corpus's verdicts on an idle node and on a loaded one (a busy loop on
every core), under each runtime, as root and as an ordinary user: the table that shows
a verdict does not depend on how busy the machine is.

    sudo .venv/bin/python bench/hostile_verdicts.py [--runtimes apptainer,bwrap]

As root; the ordinary user is ``gradeline-ci`` (made by the site tier, or here), which
runs the project's own ``gradeline grade`` through runuser, with the images root built.
Writes bench/results/hostile/verdicts.csv and verdicts.md."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import pwd
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchlib import BIN

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests/hostile"
FIXTURES = ROOT / "tests/fixtures"
OUT = ROOT / "bench/results/hostile"
USER = "gradeline-ci"


def header(path: Path, key: str, default: str) -> str:
    """A program's ``// key: value`` (or ``# key: value``) line."""
    m = re.search(rf"^(?://|#) {key}: (.+)$", path.read_text(), re.M)
    return m.group(1).strip() if m else default


@contextlib.contextmanager
def hogs(load: str) -> Iterator[None]:
    """Another job on the node: a busy loop on every core (none when idle)."""
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
             for _ in range((os.cpu_count() or 1) if load == "loaded" else 0)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def user_env(scratch: Path) -> list[str]:
    """runuser's prefix: the user, a clean environment, root's images read-only."""
    home = pwd.getpwnam(USER).pw_dir
    env = {"HOME": home, "USER": USER, "LC_ALL": "C.UTF-8",
           "PATH": f"{BIN.parent}:/usr/local/bin:/usr/bin:/bin",
           "GRADELINE_STATE_DIR": str(scratch / "state"),
           "GRADELINE_IMAGE_DIR": os.environ.get("GRADELINE_IMAGE_DIR",
                                                 "/var/lib/gradeline/images"),
           "GRADELINE_REQUIRE_SANDBOX": "1"}
    return ["runuser", "-u", USER, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items())]


def grade(prefix: list[str], runtime: str, program: Path) -> tuple[str, str, float]:
    """(verdict, why, seconds) of one program graded against its problem."""
    problem = FIXTURES / header(program, "problem", "tiny")
    argv = [str(BIN), "grade", "--json", str(problem), str(program)]
    t0 = time.monotonic()
    # as the user: the runtime joins runuser's clean environment
    r = subprocess.run([*prefix, f"GRADELINE_RUNTIME={runtime}", *argv] if prefix else argv,
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "GRADELINE_RUNTIME": runtime})
    took = time.monotonic() - t0
    try:
        res = json.loads(r.stdout)
    except json.JSONDecodeError:
        return "ERROR", (r.stderr or r.stdout)[-200:].replace("\n", " "), took
    comp = res.get("compile") or {}
    if comp and not comp.get("ok", True):
        why = f"compile: {comp.get('termination') or comp.get('exit_code')}"
    else:
        bad = [t for t in res["tests"] if t["verdict"] != "AC"]
        why = bad[0]["feedback"][:80] if bad else ""
    return res["verdict"], why, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtimes", default="apptainer,bwrap")
    ap.add_argument("--only", default="", help="programs whose name contains this")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("hostile_verdicts: run as root (it also runs as the user)")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
    programs = sorted(p for p in HOSTILE.iterdir()
                      if p.suffix in (".c", ".cpp", ".py") and args.only in p.name)
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        scratch = Path(tmp)
        os.chmod(scratch, 0o755)
        (scratch / "state").mkdir()
        os.chown(scratch / "state", pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
        for runtime in args.runtimes.split(","):
            for who, prefix in (("root", []), ("user", user_env(scratch))):
                for load in ("idle", "loaded"):
                    with hogs(load):
                        for p in programs:
                            verdict, why, took = grade(prefix, runtime, p)
                            rows.append({"program": p.name, "expect": header(p, "expect", "?"),
                                         "runtime": runtime, "who": who, "load": load,
                                         "verdict": verdict, "why": why,
                                         "seconds": f"{took:.2f}"})
                            print(f"{runtime:9} {who:4} {load:6} {p.name:26} {verdict:4} {why}",
                                  flush=True)
    write(rows, args.runtimes.split(","))


def write(rows: list[dict[str, str]], runtimes: list[str]) -> None:
    """verdicts.csv (every run) and verdicts.md (a column per mode and load)."""
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "verdicts.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cols = [(rt, who, load) for rt in runtimes for who in ("root", "user")
            for load in ("idle", "loaded")]
    got = {(r["program"], r["runtime"], r["who"], r["load"]): r["verdict"] for r in rows}
    expect = {r["program"]: r["expect"] for r in rows}
    head = " | ".join(f"{rt} {who} {load}" for rt, who, load in cols)
    lines = [f"| program | expected | {head} | idle = loaded |",
             "|" + "---|" * (len(cols) + 3)]
    differ = 0
    for prog in sorted(expect):
        vs = [got.get((prog, *c), "-") for c in cols]
        same = all(got.get((prog, rt, who, "idle")) == got.get((prog, rt, who, "loaded"))
                   for rt, who, _ in cols)
        differ += not same
        lines.append(f"| {prog} | {expect[prog]} | {' | '.join(vs)} | "
                     f"{'yes' if same else '**no**'} |")
    unexpected = sum(r["verdict"] not in r["expect"].split() for r in rows)
    stamp = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True).stdout.strip()
    (OUT / "verdicts.md").write_text(
        f"# The hostile corpus, idle and loaded\n\n"
        f"`sudo .venv/bin/python bench/hostile_verdicts.py` at {stamp}, "
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores; loaded = a busy loop on "
        f"every core; user = `{USER}` with nothing writable (rlimits, no cgroup).\n\n"
        + "\n".join(lines)
        + f"\n\n{len(rows)} runs; verdicts not among the expected: {unexpected}; "
        f"programs whose verdict changed with load: {differ}.\n")
    print(f"hostile_verdicts: {len(rows)} runs, {unexpected} unexpected, {differ} differ "
          f"idle vs loaded -> {OUT / 'verdicts.md'}")


if __name__ == "__main__":
    main()
