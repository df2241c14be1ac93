"""Entry points of JVM submissions, from the languages' own rules: Java starts the
class declaring ``static void main`` (a non-public class need not match its file;
a package qualifies it); kotlinc names a file's class after the file, every character
that is not a letter or digit made ``_``, the first capitalised, ``Kt`` appended."""
import pytest

from grader.core.entrypoint import java_main_class, kotlin_file_class, main_class
from grader.core.languages import get_language

MAIN = "public static void main(String[] args) { }"


def test_java_main_is_the_class_that_declares_it_not_the_file():
    assert java_main_class({"Solution.java": f"class Main {{ {MAIN} }}"}) == "Main"
    helper = "class Helper { static int twice(int x) { return 2 * x; } }\n"
    assert java_main_class({"Solution.java": helper + f"class Runner {{ {MAIN} }}"}) == "Runner"
    assert java_main_class({"A.java": "package se.kth.alg;\n"
                            f"public class A {{ {MAIN} }}"}) == "se.kth.alg.A"
    odd = "final class A { static public void main(String... a) {} }"
    assert java_main_class({"A.java": odd}) == "A"


def test_java_main_in_a_comment_or_a_string_is_not_one():
    src = ('// class Decoy { public static void main(String[] a) {} }\n'
           'class Real { String s = "class Fake { static void main("; ' + MAIN + ' }')
    assert java_main_class({"Real.java": src}) == "Real"
    assert java_main_class({"Lib.java": "class Lib { void main() {} }"}) is None


def test_java_entry_file_comes_first():
    srcs = {"Main.java": f"class Main {{ {MAIN} }}", "Other.java": f"class Other {{ {MAIN} }}"}
    assert java_main_class(srcs) == "Main"


@pytest.mark.parametrize("name, cls", [("main.kt", "MainKt"), ("test-hello.kt", "Test_helloKt"),
                                       ("1st.kt", "_1stKt"), ("my.solution.kt", "My_solutionKt"),
                                       ("_x.kt", "_xKt")])
def test_kotlin_file_class_is_kotlinc_naming(name, cls):
    assert kotlin_file_class(name) == cls


def test_kotlin_main_is_the_file_with_a_top_level_main():
    srcs = {"util.kt": "fun twice(x: Int) = 2 * x\n", "app-main.kt": "fun main() { }\n"}
    assert main_class("kotlin", srcs) == "App_mainKt"
    assert main_class("kotlin", {"a.kt": "package p.q\n\nfun main(args: Array<String>) {}\n"}) \
        == "p.q.AKt"
    assert main_class("kotlin", {"a.kt": "/* fun main() */ fun other() {}\n"}) is None
    assert main_class("python3", {"a.py": "def main(): pass"}) is None


def test_run_argv_starts_the_entry_class():
    java = get_language("java")
    assert java.run_argv(["Solution.java"])[-1] == "Solution"  # nothing read: the file's
    assert java.run_argv(["Solution.java"], entry="Main")[-1] == "Main"
    kotlin = get_language("kotlin")
    assert kotlin.run_argv(["test-hello.kt"])[-1] == "Test_helloKt"
    assert kotlin.run_argv(["test-hello.kt"], entry="p.AKt")[-1] == "p.AKt"
