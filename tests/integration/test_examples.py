"""The bundled assignments self-check, and the CLI's grade output is the result record."""
import json
import os

import pytest

from grader.core.verdict import Verdict
from grader.examples import all_example_dirs
from grader.formats.load import load_problem

from ..support import EXAMPLES, gl

pytestmark = pytest.mark.sandbox




def test_check_passes_on_every_bundled_assignment(sandbox_factory, sbx_tmp):
    """Every package `gradeline examples` lists (codec below, in every language): the
    ones with an image of their own (gsutils, bank) get it built by the check itself
    where it is missing, as on a fresh machine."""
    r = gl("--state-dir", os.environ.get("GRADELINE_STATE_DIR", "/var/lib/gradeline"),
                "check", *(str(d) for d in all_example_dirs() if d.name != "codec"),
                timeout=1800)  # a fresh machine builds two assignment images first
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 mismatched" in r.stdout and "MISMATCH" not in r.stdout


def test_every_language_runs_its_accepted_solution(sandbox_factory, sbx_tmp):
    # codec has an accepted solution in every language: each compiles and runs within
    # the problem's memory limit whether a cgroup or rlimits enforce it (as an
    # ordinary user Go, Java, Kotlin and Node need their languages.yaml allowances)
    r = gl("--state-dir", os.environ.get("GRADELINE_STATE_DIR", "/var/lib/gradeline"),
                "check", str(EXAMPLES / "codec"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 mismatched" in r.stdout and "MISMATCH" not in r.stdout
    for name in ("Codec.java", "codec.go", "codec.js", "codec.kt", "codec.rs", "codes.cpp"):
        assert f"{name}: expected AC, got AC" in r.stdout, r.stdout


def test_jvm_submissions_start_the_class_their_sources_name(judge, tmp_path):
    # a Java file whose class holding main is not named after it, in a package; a
    # Kotlin file whose name kotlinc has to sanitise (test-hello.kt -> Test_helloKt)
    problem = load_problem(EXAMPLES / "codec")
    java = (EXAMPLES / "codec/submissions/accepted/Codec.java").read_text()
    (tmp_path / "Solution.java").write_text(
        "package gl.example;\n" + java.replace("public class Codec", "class Main"))
    (tmp_path / "test-hello.kt").write_text(
        (EXAMPLES / "codec/submissions/accepted/codec.kt").read_text())
    for name in ("Solution.java", "test-hello.kt"):
        r = judge.grade(problem, tmp_path / name)
        assert r.verdict is Verdict.AC, (name, r.compile.output if r.compile else "",
                                         [(t.name, t.feedback[:200]) for t in r.tests])


def test_java_without_a_main_method_is_ce(judge, tmp_path):
    """javac compiles a class without main; no test could start it: one CE that says
    why, not an RE per test."""
    (tmp_path / "Solution.java").write_text(
        "public class Solution {\n  static int twice(int x) { return 2 * x; }\n"
        "  // static void main(String[] a) is only in this comment\n}\n")
    r = judge.grade(load_problem(EXAMPLES / "codec"), tmp_path / "Solution.java")
    assert r.verdict is Verdict.CE and not r.tests, (r.verdict, r.tests[:1])
    assert "no class declares static void main" in r.compile.output


def test_check_reports_a_mislabelled_submission(sandbox_factory, problem_copy):
    d = problem_copy("meanstd")
    wrong = d / "submissions" / "accepted" / "actually_wrong.py"
    wrong.write_text("print(0, 0)\n")
    r = gl("check", str(d))
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "actually_wrong.py: expected AC, got WA" in r.stdout


def test_grade_json_has_top_level_verdict_and_score(sandbox_factory):
    r = gl("grade", str(EXAMPLES / "bigsum"),
                str(EXAMPLES / "bigsum/submissions/wrong_answer/int32.cpp"), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["verdict"] == "WA" and d["score"] == 30 and d["max_score"] == 100
    assert d["language"] == "cpp" and d["runtime"]["runtime"] in ("bwrap", "apptainer")
    by_group = {g["name"]: g for g in d["groups"]}
    assert by_group["secret/small"]["score"] == 30 and by_group["secret/large"]["score"] == 0
    first_wa = next(t for t in d["tests"] if t["verdict"] == "WA")
    assert first_wa["name"].startswith("secret/large/") and "expected" in first_wa["feedback"]
    for t in d["tests"]:
        assert t["cpu_time_s"] >= 0 and t["wall_time_s"] > 0 and t["exit_code"] == 0


def test_grade_table_and_exports(sandbox_factory):
    sub = str(EXAMPLES / "spread/submissions/accepted/odds_desc.py")
    table = gl("grade", str(EXAMPLES / "spread"), sub)
    assert "verdict AC   score 100/100" in table.stdout
    junit = gl("grade", str(EXAMPLES / "spread"), sub, "--format", "junit")
    assert junit.stdout.startswith("<?xml") and 'failures="0"' in junit.stdout
    gs = json.loads(gl("grade", str(EXAMPLES / "spread"), sub,
                            "--format", "gradescope").stdout)
    assert gs["score"] == 100


def test_custom_validator_feedback_reaches_the_result(judge):
    p = load_problem(EXAMPLES / "spread")
    data = sorted((EXAMPLES / "spread/data").rglob("*.*"))
    before = [(f.stat().st_uid, f.stat().st_mode) for f in data]
    r = judge.grade(p, EXAMPLES / "spread/submissions/wrong_answer/identity.py")
    # the validator's view of input and answer (hard links where readable) left the
    # package's files as they were: not handed to the sandbox's user, not re-moded
    assert [(f.stat().st_uid, f.stat().st_mode) for f in data] == before
    assert r.verdict is Verdict.WA
    wa = next(t for t in r.tests if t.verdict is Verdict.WA)
    assert "positions 1 and 2 hold 1 and 2" in wa.feedback  # the validator's judgemessage


def test_broken_custom_validator_is_judge_error_not_student_fault(judge, problem_copy):
    d = problem_copy("spread")
    (d / "output_validators/spread_validator/validate.py").write_text("raise SystemExit(7)\n")
    r = judge.grade(load_problem(d), d / "submissions/accepted/evens_odds.cpp")
    assert r.verdict is Verdict.JE and r.score == 0
    assert "exit code 7" in r.tests[0].feedback


def test_language_not_accepted_is_ce(judge, problem_copy, tmp_path):
    d = problem_copy("bigsum")
    (d / "gradeline.yaml").write_text("time_limit_s: 1\nlanguages: [python3]\n")
    r = judge.grade(load_problem(d), EXAMPLES / "bigsum/submissions/accepted/sum.cpp",
                    language="cpp")
    assert r.verdict is Verdict.CE and "not accepted" in r.compile.output


def test_python_syntax_error_is_ce_naming_the_line(judge, tmp_path):
    """Every file of a Python submission is syntax-checked before any test runs: a
    syntax error in a helper module is one CE with Python's message, not an RE per test."""
    d = tmp_path / "sub"
    d.mkdir()
    (d / "main.py").write_text("import helper\nprint(helper.total())\n")
    (d / "helper.py").write_text("def total(:\n    return 0\n")
    r = judge.grade(load_problem(EXAMPLES / "bigsum"), d, language="python3")
    assert r.verdict is Verdict.CE and not r.tests
    assert "SyntaxError" in r.compile.output and "helper.py" in r.compile.output \
        and "line 1" in r.compile.output, r.compile.output


def test_javascript_syntax_error_in_any_file_is_ce(judge, problem_copy, tmp_path):
    """Every .js file is syntax-checked (node --check takes one file): an error in a
    helper module is one CE naming it, not an RE per test; a sound pair grades."""
    d = tmp_path / "sub"
    d.mkdir()
    (d / "main.js").write_text(
        "const {total} = require('./helper.js');\n"
        "const w = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/);\n"
        "console.log(total(w).toString());\n")
    (d / "helper.js").write_text("function total(w { return 0; }\nmodule.exports = {total};\n")
    pkg = problem_copy("bigsum")
    gl_yaml = pkg / "gradeline.yaml"
    gl_yaml.write_text(gl_yaml.read_text().replace("[c, cpp, python3]", "[javascript]"))
    problem = load_problem(pkg)
    r = judge.grade(problem, d, language="javascript")
    assert r.verdict is Verdict.CE and not r.tests, (r.verdict, r.compile.output)
    assert "helper.js" in r.compile.output and "SyntaxError" in r.compile.output
    (d / "helper.js").write_text(
        "function total(w) { const n = Number(w[0]); let s = 0n;\n"
        "  for (let i = 1; i <= n; i++) s += BigInt(w[i]); return s; }\n"
        "module.exports = {total};\n")
    r = judge.grade(problem, d, language="javascript")
    assert r.verdict is Verdict.AC, [(t.name, t.verdict, t.feedback) for t in r.tests]


def test_python_submission_of_several_files_imports_its_modules(judge, tmp_path):
    """No bytecode is written at compile time and the build dir is read-only in the
    tests: the main file's imports still work (Python compiles them in memory)."""
    d = tmp_path / "sub"
    d.mkdir()
    (d / "main.py").write_text("import sys\nfrom helper import total\n"
                               "print(total(sys.stdin.buffer.read().split()))\n")
    (d / "helper.py").write_text("def total(data):\n"
                                 "    n = int(data[0])\n"
                                 "    return sum(map(int, data[1:1 + n]))\n")
    r = judge.grade(load_problem(EXAMPLES / "bigsum"), d, language="python3")
    assert r.verdict is Verdict.AC, [(t.name, t.verdict, t.feedback) for t in r.tests]


def test_results_record_where_they_were_graded(judge):
    r = judge.grade(load_problem(EXAMPLES / "meanstd"),
                    EXAMPLES / "meanstd/submissions/accepted/stats.cpp")
    assert r.runtime["cpus"] == [0] and r.runtime["host"]
    assert r.timing["compile_s"] > 0 and r.timing["run_s"] > 0


def test_compile_cache_reuses_comment_only_variants(judge, tmp_path):
    p = load_problem(EXAMPLES / "bigsum")
    src = (EXAMPLES / "bigsum/submissions/accepted/sum.cpp").read_text()
    variants = {"a": f"// student a\n{src}", "b": f"// student b, attempt 2\n{src}",
                "c": f"// student c\n{src.replace('%lld', '%lld ')}"}
    results = {}
    for name, text in variants.items():
        d = tmp_path / name
        d.mkdir()
        (d / "sum.cpp").write_text(text)
        results[name] = judge.grade(p, d / "sum.cpp")
    assert not results["a"].compile.cached
    assert results["b"].compile.cached  # differs only in a comment
    assert not results["c"].compile.cached  # differs in code
    assert results["a"].verdict == results["b"].verdict == Verdict.AC
    assert [t.verdict for t in results["a"].tests] == [t.verdict for t in results["b"].tests]


@pytest.mark.parametrize("header", ["bits/stdc++.h", "iostream", "cstdio"])
def test_the_images_precompiled_headers_are_valid_for_the_default_flags(
        sandbox_factory, sbx_tmp, header):
    """g++ marks a precompiled header it uses with '!' under -H ('x' when it rejects
    one): the image's headers must be used by a compile with the default C++ flags, and
    ignored, not fatal, for other flags."""
    from grader.core.languages import get_language
    from grader.core.limits import Limits
    from grader.judge.ports import RunRequest

    box = sandbox_factory([0], sbx_tmp)
    build = sbx_tmp / "build"
    build.mkdir(mode=0o755)
    (build / "a.cpp").write_text(f"#include <{header}>\nint main() {{ return 0; }}\n")
    box.own(build)
    gch = f"/usr/local/include/gl-pch/{header}.gch"
    for flags, used in ((None, True), (["-O0", "-std=gnu++20"], False)):
        argv = get_language("cpp").compile_argv(["a.cpp"], flags, accelerate=True)
        argv[1:1] = ["-H", "-Winvalid-pch"]
        meta = box.run(RunRequest(argv, build, Limits(cpu_time_s=30.0, memory_bytes=1 << 30),
                                  stdout=sbx_tmp / "o", stderr=sbx_tmp / "e",
                                  workdir_writable=True, cpus=[0]))
        err = (sbx_tmp / "e").read_text()
        assert meta.ok, err[-2000:]
        assert (f"! {gch}" in err) is used, err[:2000]


def test_on_reject_break_stops_each_group_at_its_first_rejection(sandbox_factory, sbx_tmp):
    """A course's `GRADELINE_ON_REJECT=break`: the same verdict as running every test,
    fewer runs, and the tests not run count as failed in the score."""
    from grader.judge.judge import Judge

    p = load_problem(EXAMPLES / "bigsum")
    sub = EXAMPLES / "bigsum/submissions/time_limit_exceeded/quadratic.py"
    full = Judge(sandbox_factory([0], sbx_tmp / "a"), sbx_tmp / "a", [0]).grade(p, sub)
    quick = Judge(sandbox_factory([0], sbx_tmp / "b"), sbx_tmp / "b", [0],
                  on_reject="break").grade(p, sub)
    assert full.verdict == quick.verdict == Verdict.TLE
    assert len(quick.tests) < len(full.tests) == len(p.cases)
    for g in quick.groups:
        ran = [t for t in quick.tests if t.group == g.name]
        rejected = [i for i, t in enumerate(ran) if t.verdict is not Verdict.AC]
        assert not rejected or rejected == [len(ran) - 1]  # stopped at its first rejection
    assert quick.score <= full.score
    assert quick.runtime["on_reject"] == "break"


def test_check_env_reports_every_capability(sandbox_factory):
    r = gl("check-env")
    names = [ln.split()[1] for ln in r.stdout.splitlines() if ln[:4] in ("ok  ", "FAIL", "warn")]
    assert names == ["root", "runtime", "bwrap", "cgroups", "image", "debootstrap", "database",
                     "slurm", "counters:", "counters:", "counters:", "L3"] \
        or "apptainer" in r.stdout
    # the measurement lines say why a source is unusable, never just "no"
    assert "cachegrind" in r.stdout and "resctrl" in r.stdout
    assert r.returncode == (1 if "FAIL" in r.stdout else 0)
