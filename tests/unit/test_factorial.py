"""2^k·r analysis against Jain's worked examples, and the fixed-overhead fit."""

from __future__ import annotations

import pytest

from grader.measure.factorial import analyse, levels_grid, linear_fit, signs


def test_signs_are_in_standard_order() -> None:
    assert signs(2) == [(-1, -1), (1, -1), (-1, 1), (1, 1)]
    assert levels_grid({"cores": [1, 2], "runtime": ["bwrap", "apptainer"]}) == [
        {"cores": 1, "runtime": "bwrap"}, {"cores": 2, "runtime": "bwrap"},
        {"cores": 1, "runtime": "apptainer"}, {"cores": 2, "runtime": "apptainer"}]
    with pytest.raises(ValueError, match="exactly two levels"):
        levels_grid({"cores": [1, 2, 4]})


def test_jain_2_3_design_effects_and_allocation_of_variation() -> None:
    # Jain (1991) ch. 17, the workstation design: A memory 4/16 MB, B cache 1/2 kB,
    # C processors 1/2; MIPS 14, 22, 10, 34, 46, 58, 50, 86 in standard order ->
    # q = 40, 10, 5, 20, 5, 2, 3, 1; SST = 4512; variation A 18%, B 4%, C 71%, AB 4%,
    # AC 1%, BC 2%, ABC 0%.
    res = analyse(["A", "B", "C"], [[y] for y in (14, 22, 10, 34, 46, 58, 50, 86)])
    q = {e.name: e.q for e in res.effects}
    assert q == pytest.approx({"I": 40, "A": 10, "B": 5, "C": 20, "A×B": 5, "A×C": 2,
                               "B×C": 3, "A×B×C": 1})
    assert [e.name for e in res.effects] == ["I", "A", "B", "A×B", "C", "A×C", "B×C",
                                             "A×B×C"]  # standard (Yates) order
    assert res.sst == pytest.approx(4512)
    share = {e.name: round(100 * e.variation) for e in res.effects}
    assert share == {"I": 0, "A": 18, "B": 4, "A×B": 4, "C": 71, "A×C": 1, "B×C": 2,
                     "A×B×C": 0}
    assert res.ranked()[0].name == "C"
    assert res.predict([1, 1, 1]) == pytest.approx(86)


def test_jain_2_2_3_design_with_replications() -> None:
    # Jain (1991) ch. 18, the memory-cache study replicated r = 3 times:
    # (15, 18, 12), (45, 48, 51), (25, 28, 19), (75, 75, 81) -> q0 41, qA 21.5, qB 9.5,
    # qAB 5; SST 7032 = SSA 5547 + SSB 1083 + SSAB 300 + SSE 102 (78.9 / 15.4 / 4.3 /
    # 1.5 %); 90% intervals q +- t[0.95; 8] s_e / sqrt(12) = +- 1.92.
    y = [[15, 18, 12], [45, 48, 51], [25, 28, 19], [75, 75, 81]]
    res = analyse(["A", "B"], y, confidence=0.90)
    assert [e.q for e in res.effects] == pytest.approx([41, 21.5, 9.5, 5])
    assert res.sst == pytest.approx(7032)
    assert res.sse == pytest.approx(102)
    assert res.effect("A").variation == pytest.approx(5547 / 7032)
    assert res.error_variation == pytest.approx(102 / 7032)
    q0 = res.effect("I")
    assert (q0.ci_low, q0.ci_high) == pytest.approx((39.08, 42.92), abs=0.01)
    assert all(e.significant for e in res.effects)


def test_an_effect_inside_the_noise_is_not_significant() -> None:
    # B changes nothing; the replications' spread is what it is
    y = [[10.0, 10.4, 9.6], [20.0, 20.5, 19.5], [10.2, 9.9, 9.9], [20.1, 19.8, 20.1]]
    res = analyse(["cores", "runtime"], y)
    assert res.effect("cores").significant
    assert not res.effect("runtime").significant
    assert res.ranked()[0].name == "cores"


def test_malformed_designs_are_refused() -> None:
    with pytest.raises(ValueError, match="need 4 experiments"):
        analyse(["A", "B"], [[1.0], [2.0]])
    with pytest.raises(ValueError, match="same number"):
        analyse(["A"], [[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match="finite"):
        analyse(["A"], [[1.0], [float("nan")]])


def test_linear_fit_separates_fixed_overhead_from_per_task_cost() -> None:
    work = [10, 10, 20, 20, 40, 40]
    time = [3.0 + 0.5 * w + d for w, d in zip(work, [0.1, -0.1, 0.05, -0.05, 0.1, -0.1],
                                                  strict=True)]
    f = linear_fit(work, time)
    assert f.fixed == pytest.approx(3.0, abs=0.15)
    assert f.per_task == pytest.approx(0.5, abs=0.01)
    assert f.fixed - f.fixed_ci <= 3.0 <= f.fixed + f.fixed_ci
    assert f.r2 > 0.99
    with pytest.raises(ValueError, match="at least 3 points"):
        linear_fit([10, 10, 10], [1, 2, 3])
