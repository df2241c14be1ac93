"""How much memory each language's runtime needs beyond the data a program holds,
under the sandbox's memory limit as it is enforced now (a cgroup, or without one
RLIMIT_AS = limit + the language's allowance).

    GRADELINE_CGROUPS=0 .venv/bin/python bench/memory_allowance.py --data-mib 64

For each language a program that holds ``--data-mib`` MiB (every page written), then
prints "ok"; the smallest memory limit (MiB, bisected) under which it runs to the end
is printed with the peak memory measured there. ``limit - data`` is what the runtime
costs a student: the smaller, the fairer a limit written for C is to that language.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from grader.adapters.sandbox import open_sandbox
from grader.compose.worker import sandbox_config
from grader.core.languages import get_language
from grader.core.limits import MIB, Limits
from grader.judge.ports import DEFAULT_ENV, RunRequest
from grader.settings import load

N = "{n}"
PROGRAMS = {
    "c": ("hold.c", f"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {{ size_t n = (size_t){N} << 20; volatile char *p = malloc(n);
  if (!p) return 3; for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  printf("ok %d\\n", p[n - 1]); return 0; }}
"""),
    "cpp": ("hold.cpp", f"""#include <iostream>
#include <vector>
int main() {{ std::vector<char> v((size_t){N} << 20, 1); std::cout << "ok " << int(v.back())
  << std::endl; }}
"""),
    "python3": ("hold.py", f"x = b'x' * ({N} << 20)\nprint('ok', len(x) >> 20)\n"),
    "java": ("Hold.java", f"""public class Hold {{ public static void main(String[] a) {{
  byte[] b = new byte[{N} << 20]; java.util.Arrays.fill(b, (byte) 1);
  System.out.println("ok " + b[b.length - 1]); }} }}
"""),
    "kotlin": ("hold.kt", f"""fun main() {{ val b = ByteArray({N} shl 20) {{ 1 }}
  println("ok " + b[b.size - 1]) }}
"""),
    "go": ("hold.go", f"""package main
import "fmt"
func main() {{ b := make([]byte, {N}<<20); for i := range b {{ b[i] = 1 }}
  fmt.Println("ok", b[len(b)-1]) }}
"""),
    "rust": ("hold.rs", f"""fn main() {{ let v = vec![1u8; {N} << 20];
  println!("ok {{}}", v[v.len() - 1]); }}
"""),
    "javascript": ("hold.js", f"const b = Buffer.alloc({N} << 20, 1);\n"
                   "console.log('ok', b[b.length - 1]);\n"),
}


def run_once(box, d: Path, argv: list[str], limit_mib: int, env: dict[str, str],
             allow: tuple[int, int]):
    lim = Limits(cpu_time_s=20.0, wall_time_s=40.0, memory_bytes=limit_mib * MIB,
                 processes=64).for_runtime(allow[0] * MIB, allow[1] * MIB)
    meta = box.run(RunRequest(argv, d, lim, stdout=d / "out", stderr=d / "err", cpus=[0],
                              env=env))
    ok = meta.exit_code == 0 and meta.termination is None and \
        (d / "out").read_text(errors="replace").startswith("ok")
    return ok, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-mib", type=int, default=64)
    ap.add_argument("--lang", action="append", help="only these (default: all)")
    ap.add_argument("--runtime-mib", type=int, default=None,
                    help="instead of each language's runtime_mib (languages.yaml)")
    ap.add_argument("--reserve-mib", type=int, default=None,
                    help="instead of each language's reserve_mib (languages.yaml)")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="gl-mem-", dir="/var/tmp"))
    scratch.chmod(0o755)
    box = open_sandbox(sandbox_config(load()), scratch, slot=0, cpus=[0])
    mode = "cgroup" if box.cgroups is not None else "rlimits (no cgroup)"
    print(f"memory limit enforced by: {mode}; data held: {args.data_mib} MiB")
    for knob in ("runtime_mib", "reserve_mib"):
        value = getattr(args, knob)
        print(f"{knob}: " + ("each language's" if value is None else f"{value} MiB for all"))
    print(f"{'language':<11} {'min limit MiB':>13} {'limit - data':>12} {'peak MiB':>9}")
    try:
        for lid in args.lang or list(PROGRAMS):
            lang = get_language(lid)
            name, text = PROGRAMS[lid]
            d = scratch / lid
            d.mkdir()
            d.chmod(0o755)
            box.own(d)
            (d / name).write_text(text.replace(N, str(args.data_mib)))
            env = {**DEFAULT_ENV, **lang.env}
            allow = (lang.runtime_mib if args.runtime_mib is None else args.runtime_mib,
                     lang.reserve_mib if args.reserve_mib is None else args.reserve_mib)
            cargv = lang.compile_argv([name])
            if cargv:
                big = Limits(cpu_time_s=120.0, wall_time_s=240.0, memory_bytes=1024 * MIB,
                             processes=256).for_runtime(allow[0] * MIB, allow[1] * MIB)
                cm = box.run(RunRequest(cargv, d, big, stdout=d / "cout", stderr=d / "cerr",
                                        cpus=[0], env=env, workdir_writable=True))
                if cm.exit_code != 0:
                    why = ((d / "cerr").read_text() + (d / "cout").read_text()).strip()
                    print(f"{lid:<11} compile failed: {cm.to_text()!r} {why[:200]!r}")
                    continue
            lo, hi = args.data_mib, args.data_mib + 1024  # lo fails (or is untried), hi runs
            ok, meta = run_once(box, d, lang.run_argv([name], memory_bytes=hi * MIB), hi, env,
                                allow)
            if not ok:
                print(f"{lid:<11} does not run even with {hi} MiB: {meta.to_text()!r}")
                continue
            best = meta
            while hi - lo > 2:
                mid = (lo + hi) // 2
                ok, meta = run_once(box, d, lang.run_argv([name], memory_bytes=mid * MIB), mid,
                                    env, allow)
                if ok:
                    hi, best = mid, meta
                else:
                    lo = mid
            peak = (best.memory_bytes or 0) / MIB
            print(f"{lid:<11} {hi:>13} {hi - args.data_mib:>12} {peak:>9.1f}", flush=True)
    finally:
        box.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
