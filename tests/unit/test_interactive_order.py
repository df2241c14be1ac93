"""Who ended first in an interactive test: the validator's exit against the moment the
judge let the validator see the submission's end of output."""

from grader.core.runmeta import RunMeta
from grader.judge.kattis_passes import _validator_first


def meta(exited_at: float | None) -> RunMeta:
    return RunMeta(exit_code=43, signal=None, cpu_time_s=0.0, wall_time_s=0.0,
                   exited_at=exited_at)


def test_a_validator_that_exited_before_the_release_was_first_whatever_the_replies() -> None:
    # garbage.py: the validator rejected; the submission then died of the end of input
    # and its reply came first -- the validator's exit time still says who was first
    assert _validator_first(meta(10.000), val_t=10.003, sub_t=10.001, released=[10.002])
    # crash.py: the validator only saw the end of output after the judge let it go
    assert not _validator_first(meta(10.004), val_t=10.005, sub_t=10.001, released=[10.002])


def test_without_an_exit_time_the_replies_decide() -> None:
    assert _validator_first(meta(None), val_t=1.0, sub_t=2.0, released=[1.5])
    assert not _validator_first(meta(None), val_t=2.0, sub_t=1.0, released=[1.5])
    assert not _validator_first(meta(5.0), val_t=2.0, sub_t=1.0, released=[])
