import pytest

from grader.core.errors import ConfigError
from grader.formats.kattis.validate import DefaultValidatorOptions, compare


def check(team: str, judge: str, *flags: str):
    return compare(team.encode(), judge.encode(), DefaultValidatorOptions.parse(list(flags)))


@pytest.mark.parametrize(("team", "judge"), [
    ("3\n", "3\n"),
    ("  3   4\n\n", "3 4\n"),        # whitespace changes ignored by default
    ("YES\n", "yes\n"),              # case-insensitive by default
    ("1\n2\n", "1 2"),
])
def test_accepts(team, judge):
    assert check(team, judge).accepted is True


@pytest.mark.parametrize(("team", "judge", "why"), [
    ("4\n", "3\n", "expected '3'"),
    ("3\n", "3 4\n", "ended early"),
    ("3 4\n", "3\n", "trailing output"),
    ("", "3\n", "ended early"),
])
def test_rejects_with_reason(team, judge, why):
    v = check(team, judge)
    assert v.accepted is False
    assert why in v.feedback


def test_case_sensitive_flag():
    assert check("yes", "YES", "case_sensitive").accepted is False
    assert check("YES", "YES", "case_sensitive").accepted is True


def test_space_change_sensitive_flag():
    assert check("3  4\n", "3 4\n", "space_change_sensitive").accepted is False
    assert check("3 4\n", "3 4\n", "space_change_sensitive").accepted is True
    assert check("3 4", "3 4\n", "space_change_sensitive").accepted is False


def test_float_absolute_and_relative_tolerance():
    assert check("1.0000001", "1.0", "float_absolute_tolerance", "1e-6").accepted is True
    assert check("1.00001", "1.0", "float_absolute_tolerance", "1e-6").accepted is False
    # relative: 1e6 +- 0.5 is within 1e-6 relative
    assert check("1000000.5", "1000000", "float_relative_tolerance", "1e-6").accepted is True
    assert check("1000002", "1000000", "float_relative_tolerance", "1e-6").accepted is False
    # float_tolerance sets both: either suffices
    assert check("0.0000005", "0", "float_tolerance", "1e-6").accepted is True


def test_floats_without_tolerance_are_compared_as_tokens():
    assert check("1.0", "1", ).accepted is False


def test_non_number_where_number_expected():
    v = check("abc", "1.5", "float_tolerance", "1e-6")
    assert v.accepted is False and "expected a number" in v.feedback


def test_words_still_compared_exactly_in_float_mode():
    assert check("yes 1.0000001", "yes 1.0", "float_tolerance", "1e-6").accepted is True
    assert check("no 1.0", "yes 1.0", "float_tolerance", "1e-6").accepted is False


@pytest.mark.parametrize("flags", [["bogus"], ["float_tolerance"], ["float_tolerance", "x"],
                                   ["float_absolute_tolerance", "-1"]])
def test_bad_flags_are_config_errors(flags):
    with pytest.raises(ConfigError):
        DefaultValidatorOptions.parse(flags)


def test_feedback_names_line():
    v = check("1\n2\n9\n", "1\n2\n3\n")
    assert "line 3" in v.feedback
