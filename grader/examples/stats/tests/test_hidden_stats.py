"""Hidden tests: run in their own run, shown after staff release them."""
from stats import mean, median, mode


def test_mode_prefers_the_smallest_of_ties():
    assert mode([3, 1, 3, 1, 2]) == 1


def test_median_does_not_reorder_its_input():
    data = [3, 1, 2]
    median(data)
    assert data == [3, 1, 2]


def test_mean_of_a_long_list():
    assert mean(list(range(1, 100_001))) == 50_000.5
