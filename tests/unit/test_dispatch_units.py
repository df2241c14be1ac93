from grader.dispatch import shard_size
from grader.scheduler import _expand


def test_shard_size_targets_a_minute_per_task():
    assert shard_size([1.0] * 100_000, 1, total_cpus=64) == 60
    assert shard_size([1.0] * 10_000, 1, total_cpus=64) == 40  # balance caps it
    assert shard_size([2.0] * 100_000, 2, total_cpus=64) == 60


def test_shard_size_keeps_small_batches_balanced():
    # 191 submissions on 2 cores: about 4 tasks per core, not 4 tasks in all.
    assert shard_size([1.1] * 191, 1, total_cpus=2) == 24
    assert shard_size([1.0] * 3, 1, total_cpus=2) == 1


def test_expand_array_task_strings():
    assert _expand("0-3,7,9-10%2") == [0, 1, 2, 3, 7, 9, 10]
    assert _expand("") == []
