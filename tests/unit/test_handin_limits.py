"""Hand-in limits (``course.handin_limits``): a count, a least interval and a token bucket, each
refused with the time of the next allowed hand-in, or deferred, as the course says."""

from datetime import UTC, datetime, timedelta

from grader.course.handin_limits import allowance
from grader.course.spec import LimitsSpec

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def at(*minutes: float) -> list[datetime]:
    return [T0 + timedelta(minutes=m) for m in minutes]


def test_no_limits_allow_everything():
    a = allowance(LimitsSpec(), at(*range(100)), T0 + timedelta(hours=2))
    assert a.allowed and not a.deferred and a.used == 100 and a.left is None


def test_a_count_is_refused_for_good_once_used_up():
    lim = LimitsSpec(max_submissions=3)
    assert allowance(lim, at(0, 1), T0 + timedelta(minutes=2)).left == 1
    a = allowance(lim, at(0, 1, 2), T0 + timedelta(days=3))
    assert not a.allowed and a.next_at is None and "3 of the 3" in a.why


def test_a_least_interval_names_when_the_next_one_is_allowed():
    lim = LimitsSpec(min_interval=timedelta(minutes=10))
    a = allowance(lim, at(0), T0 + timedelta(minutes=4))
    assert not a.allowed and a.next_at == T0 + timedelta(minutes=10)
    assert allowance(lim, at(0), T0 + timedelta(minutes=10)).allowed


def test_the_token_bucket_allows_a_burst_then_refills_at_its_rate():
    lim = LimitsSpec(per_hour=6, burst=3)  # one more every 10 minutes
    assert allowance(lim, at(0, 0.1), T0 + timedelta(minutes=0.2)).allowed  # the third
    a = allowance(lim, at(0, 0.1, 0.2), T0 + timedelta(minutes=0.3))
    assert not a.allowed and "6 hand-ins an hour" in a.why
    # 0.1 tokens came back in the 0.1 min since the third: the rest takes ~9.9 minutes
    assert T0 + timedelta(minutes=10) <= a.next_at <= T0 + timedelta(minutes=10.4)
    assert allowance(lim, at(0, 0.1, 0.2), a.next_at).allowed
    # a flood of 200 is refused after the burst, whatever its order in the history
    flood = at(*[i * 0.01 for i in range(200)])
    assert not allowance(lim, list(reversed(flood)), T0 + timedelta(minutes=2)).allowed


def test_past_a_limit_a_deferring_course_takes_the_hand_in():
    lim = LimitsSpec(max_submissions=1, past_limit="defer")
    a = allowance(lim, at(0), T0 + timedelta(minutes=1))
    assert a.allowed and a.deferred and "1 of the 1" in a.why
