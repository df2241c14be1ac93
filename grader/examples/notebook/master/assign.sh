#!/usr/bin/env bash
# Regenerates ../autograder.zip, ../student/notebook.ipynb and environment.yml.txt from master.ipynb
# with `otter assign` (otter-grader 7.0.0).
#
# Usage:  master/assign.sh            # regenerate and overwrite the committed files
#         master/assign.sh --check    # regenerate into a temp dir and compare with the committed
#                                     # files, ignoring the known non-deterministic parts
# Env:    OTTER=/path/to/otter        # default: `otter` on PATH (needs otter-grader[grading]==7.0.0,
#                                     # i.e. ipykernel, because run_tests executes the master notebook)
#         OTTER_OFFLINE=1             # run otter assign inside `bwrap --unshare-net` (no network needed)
#
# What is NOT deterministic (everything else is byte-for-byte reproducible):
#   * the zip file name: dist/autograder/master-autograder_<YYYY_MM_DDTHH_MM_SS_ffffff>.zip
#     (we rename it to autograder.zip);
#   * the zip itself: member mtimes are the generation time, so the zip bytes/sha256 change on
#     every run; the member *contents* are identical;
#   * the student notebook: the cells Otter inserts (the "Initialize Otter" cell and the
#     grader.check(...) cells) get random nbformat cell ids; the rest is identical.
#     (Cells copied from master.ipynb keep their ids "cell-NN", which make_master set.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"                     # the package root (grader/examples/notebook/)
otter="${OTTER:-otter}"
mode="${1:-write}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
cmd=("$otter" assign master/master.ipynb "$work/dist")
if [[ "${OTTER_OFFLINE:-0}" == 1 ]]; then
  cmd=(bwrap --bind / / --dev /dev --proc /proc --unshare-net "${cmd[@]}")
fi
echo "+ (cd $root && ${cmd[*]})" >&2
"${cmd[@]}"

zips=("$work"/dist/autograder/master-autograder_*.zip)
[[ ${#zips[@]} == 1 && -f "${zips[0]}" ]] || { echo "expected exactly one autograder zip" >&2; exit 1; }
new_zip="${zips[0]}"
new_student="$work/dist/student/master.ipynb"

if [[ "$mode" == "--check" ]]; then
  python3 - "$new_zip" "$root/autograder.zip" "$new_student" "$root/student/notebook.ipynb" \
            "$root/master/environment.yml.txt" <<'PY'
import json, sys, zipfile
new_zip, old_zip, new_nb, old_nb, env_txt = sys.argv[1:]
def members(p):
    with zipfile.ZipFile(p) as z:
        return {n: z.read(n) for n in z.namelist()}
def nb(p):
    d = json.load(open(p, encoding="utf-8"))
    for c in d["cells"]:
        c.pop("id", None)
    return d
ok = True
a, b = members(new_zip), members(old_zip)
if a != b:
    ok = False
    print("zip members differ:", sorted(set(a) ^ set(b)) or [n for n in a if a[n] != b.get(n)])
if nb(new_nb) != nb(old_nb):
    ok = False
    print("student notebook differs (ignoring cell ids)")
if a.get("environment.yml") != open(env_txt, "rb").read():
    ok = False
    print("environment.yml.txt differs from the zip's environment.yml")
print("OK: regenerated output matches (modulo zip timestamps and inserted cell ids)" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
else
  cp "$new_zip" "$root/autograder.zip"
  mkdir -p "$root/student"
  cp "$new_student" "$root/student/notebook.ipynb"
  unzip -p "$root/autograder.zip" environment.yml > "$root/master/environment.yml.txt"
  echo "wrote autograder.zip (from $(basename "$new_zip")), student/notebook.ipynb, master/environment.yml.txt" >&2
fi
