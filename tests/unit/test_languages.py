import pytest

from grader.core.errors import SubmissionError
from grader.core.languages import detect_language, get_language, load_languages


def test_table_has_c_cpp_python():
    langs = load_languages()
    assert {"c", "cpp", "python3"} <= set(langs)
    assert list(langs["cpp"].default_flags[:2]) == ["-O2", "-std=gnu++17"]


@pytest.mark.parametrize(("files", "want"), [
    (["a.cpp"], "cpp"), (["main.cc", "util.h"], "cpp"), (["x.c"], "c"), (["s.py"], "python3"),
    (["a.cpp", "helper.c"], "cpp"),
])
def test_detect(files, want):
    assert detect_language(files).id == want


def test_detect_respects_allowed_languages():
    with pytest.raises(SubmissionError, match="accepted language"):
        detect_language(["a.py"], allowed=["c", "cpp"])


def test_ambiguous_and_unknown():
    with pytest.raises(SubmissionError, match="several languages"):
        detect_language(["a.py", "b.cpp"])
    with pytest.raises(SubmissionError, match="cannot detect"):
        detect_language(["README.md"])
    with pytest.raises(SubmissionError, match="unknown language"):
        get_language("cobol")


def test_argv_expansion():
    cpp = get_language("cpp")
    assert cpp.compile_argv(["b.cpp", "a.cpp", "x.h"]) == \
        ["g++", "-O2", "-std=gnu++17", "-pipe", "-o", "sol", "a.cpp", "b.cpp"]
    assert cpp.compile_argv(["a.cpp"], ["-O0"]) == ["g++", "-O0", "-o", "sol", "a.cpp"]
    assert cpp.run_argv(["a.cpp"]) == ["./sol"]
    py = get_language("python3")
    assert py.run_argv(["util.py", "main.py"]) == ["python3", "main.py"]
    assert py.main_file(["b.py", "a.py"]) == "a.py"
    # the package's included files are never the entry unless named main (a driver);
    # the format repository's maximal example: include.py sorts before tle.py
    assert py.run_argv(["include.py", "tle.py"], own=["tle.py"]) == ["python3", "tle.py"]
    assert py.main_file(["main.py", "sol.py"], own=["sol.py"]) == "main.py"


def test_acceleration_flags_come_first_and_only_when_asked():
    """The image's precompiled headers and gold come before every other flag (an
    assignment's own flags still follow and win); off, the compile is the bare loop's."""
    cpp = get_language("cpp")
    fast = cpp.compile_argv(["a.cpp"], accelerate=True)
    assert fast == ["g++", "-isystem", "/usr/local/include/gl-pch", "-fuse-ld=gold", "-O2",
                    "-std=gnu++17", "-pipe", "-o", "sol", "a.cpp"]
    assert cpp.compile_argv(["a.cpp"], ["-O0"], accelerate=True)[-4:] == \
        ["-O0", "-o", "sol", "a.cpp"]
    assert "-fuse-ld=gold" in get_language("c").compile_argv(["a.c"], accelerate=True)
    assert get_language("python3").accelerate == ()
