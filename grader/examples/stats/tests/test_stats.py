"""Visible tests: students see these results as soon as they ran."""
import pytest

from stats import mean, median, mode


def test_mean_of_integers():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_of_odd_length():
    assert median([5, 1, 3]) == 3


def test_median_of_even_length():
    assert median([4, 1, 3, 2]) == 2.5


def test_empty_input_is_an_error():
    with pytest.raises(ValueError):
        mean([])
