"""A browser's hand-in form is judged by the size it announces before it is read: the
LTI and OnDemand front ends both refuse by this one rule."""

from __future__ import annotations

import pytest

from grader.core.upload import FORM_SLACK, MAX_UPLOAD_BYTES, form_length_refusal

LIMIT = MAX_UPLOAD_BYTES + FORM_SLACK


@pytest.mark.parametrize("length", ["0", "1", str(LIMIT)])
def test_a_form_within_the_limit_may_be_read(length: str) -> None:
    assert form_length_refusal(length) is None


@pytest.mark.parametrize("length", [str(LIMIT + 1), str(100 << 20), None, "", "-1", "1e6",
                                    " 10", "0x10"])
def test_a_form_over_the_limit_or_of_no_size_is_refused_with_the_limit(
        length: str | None) -> None:
    why = form_length_refusal(length)
    assert why is not None and f"{MAX_UPLOAD_BYTES >> 20} MiB" in why
