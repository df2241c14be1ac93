"""resctrl planning against directory trees shaped like /sys/fs/resctrl."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from grader.adapters.resctrl import PREFIX, Resctrl, choose_mask

REPO = Path(__file__).resolve().parents[2]


def fake_tree(tmp: Path, *, cbm: str, min_bits: int, closids: int, l3_kib: int,
              cores_per_domain: int, domains: int, sparse: bool | None = None,
              shareable: str = "0") -> Resctrl:
    """An Intel-like (contiguous masks) or AMD-like (sparse_masks=1) resctrl + sysfs."""
    root, cpu = tmp / "resctrl", tmp / "cpu"
    (root / "info" / "L3").mkdir(parents=True)
    for name, value in (("cbm_mask", cbm), ("min_cbm_bits", min_bits),
                        ("num_closids", closids), ("shareable_bits", shareable)):
        (root / "info" / "L3" / name).write_text(f"{value}\n")
    if sparse is not None:
        (root / "info" / "L3" / "sparse_masks").write_text(f"{int(sparse)}\n")
    (root / "schemata").write_text(
        "    L3:" + ";".join(f"{d}={cbm}" for d in range(domains)) + "\n"
        "    MB:" + ";".join(f"{d}=100" for d in range(domains)) + "\n")
    for c in range(cores_per_domain * domains):
        idx = cpu / f"cpu{c}" / "cache" / "index3"
        idx.mkdir(parents=True)
        (idx / "size").write_text(f"{l3_kib}K\n")
        (idx / "id").write_text(f"{c // cores_per_domain}\n")
    flags = tmp / "cpuinfo"
    flags.write_text("flags\t\t: fpu sse2 cat_l3 cdp_l3 rdt_a\n")
    return Resctrl(root, cpu, flags)


@pytest.fixture
def intel(tmp_path: Path) -> Resctrl:
    # Skylake-SP like: 22 MB L3 per socket, 11 ways (2 MB each), 2 sockets x 16 cores
    return fake_tree(tmp_path, cbm="7ff", min_bits=2, closids=16, l3_kib=22528,
                     cores_per_domain=16, domains=2)


@pytest.fixture
def amd(tmp_path: Path) -> Resctrl:
    # Zen-like: 32 MB L3 per CCX of 8 cores, 16 ways (2 MB each), sparse masks allowed
    return fake_tree(tmp_path, cbm="ffff", min_bits=1, closids=16, l3_kib=32768,
                     cores_per_domain=8, domains=4, sparse=True)


def test_info_reads_the_tree(intel: Resctrl) -> None:
    info = intel.info()
    assert (info.cbm_mask, info.ways, info.min_cbm_bits, info.num_closids) == (0x7FF, 11, 2, 16)
    assert info.domains == (0, 1) and not info.sparse_masks
    assert intel.l3_bytes(3) == 22 * 2**20 and intel.domain_of(17) == 1


def test_plan_sizes_ways_to_mb_per_core(intel: Resctrl) -> None:
    plan = intel.plan("7", [0, 1, 2, 3], 2.5)
    assert plan.mb_per_way == pytest.approx(2.0)
    assert plan.masks == {0: 0b11111}  # ceil(4 x 2.5 / 2) = 5 ways
    assert plan.schemata() == "L3:0=1f"
    assert "10.00 MB" in plan.describe()


def test_min_cbm_bits_is_respected(intel: Resctrl) -> None:
    assert bin(intel.plan("1", [0], 1.0).masks[0]).count("1") == 2  # wants 1, minimum 2


def test_concurrent_jobs_get_disjoint_contiguous_masks(intel: Resctrl) -> None:
    a = intel.plan("1", [0, 1], 2.5)
    intel.apply(a)
    b = intel.plan("2", [2, 3], 2.5)
    intel.apply(b)
    assert a.masks[0] & b.masks[0] == 0
    for m in (a.masks[0], b.masks[0]):
        bits = bin(m)[2:].strip("0")
        assert set(bits) == {"1"}  # contiguous
    assert (intel.root / f"{PREFIX}2" / "cpus_list").read_text().strip() == "2-3"


def test_cores_in_two_domains_get_a_mask_in_each(intel: Resctrl) -> None:
    plan = intel.plan("9", [15, 16, 17], 2.5)
    assert set(plan.masks) == {0, 1}
    assert bin(plan.masks[0]).count("1") == 2  # 1 core: ceil(1.25) = 2 ways
    assert bin(plan.masks[1]).count("1") == 3  # 2 cores: ceil(2.5) = 3 ways


def test_more_than_the_cache_takes_all_ways_and_says_so(intel: Resctrl) -> None:
    plan = intel.plan("big", list(range(16)), 2.5)
    assert plan.masks[0] == 0x7FF
    assert any("taking all" in n for n in plan.notes)


def test_fragmented_free_ways_sparse_vs_contiguous(tmp_path: Path) -> None:
    def fragmented(r: Resctrl) -> None:
        for name, mask in (("x1", "f0f0"), ("x2", "0f00")):
            (r.root / name).mkdir()
            (r.root / name / "schemata").write_text(f"L3:0={mask}\n")

    amd = fake_tree(tmp_path / "a", cbm="ffff", min_bits=1, closids=16, l3_kib=32768,
                    cores_per_domain=8, domains=1, sparse=True)
    intel = fake_tree(tmp_path / "i", cbm="ffff", min_bits=1, closids=16, l3_kib=32768,
                      cores_per_domain=8, domains=1, sparse=False)
    for r in (amd, intel):
        fragmented(r)  # used 0xfff0 -> free 0x000f: 4 ways in one run
        (r.root / "x3").mkdir()
        (r.root / "x3" / "schemata").write_text("L3:0=0006\n")  # free now 0x0009: 2 holes
    a = amd.plan("j", [0, 1], 1.0)   # 2 cores x 1 MB / 2 MB per way = 1 way -> fits a run
    assert bin(a.masks[0]).count("1") == 1
    a2 = amd.plan("k", [0, 1, 2, 3], 1.0)  # 2 ways, free bits 0 and 3: sparse only
    assert a2.masks[0] == 0b1001 and not a2.notes
    i2 = intel.plan("k", [0, 1, 2, 3], 1.0)
    assert bin(i2.masks[0]).count("1") == 1 and any("free contiguous" in n for n in i2.notes)


def test_shareable_bits_are_avoided(tmp_path: Path) -> None:
    r = fake_tree(tmp_path, cbm="7ff", min_bits=2, closids=16, l3_kib=22528,
                  cores_per_domain=16, domains=1, shareable="3")
    assert r.plan("1", [0, 1], 2.5).masks[0] & 0x3 == 0


def test_closids_exhausted_means_no_partition(tmp_path: Path) -> None:
    r = fake_tree(tmp_path, cbm="7ff", min_bits=2, closids=4, l3_kib=22528,
                  cores_per_domain=16, domains=1)
    for j in range(3):
        r.apply(r.plan(str(j), [j], 2.5))
    plan = r.plan("late", [5], 2.5)
    assert not plan.possible and "CLOSIDs" in plan.notes[0]


def test_remove_returns_the_group(intel: Resctrl) -> None:
    intel.apply(intel.plan("5", [0], 2.5))
    assert intel.remove("5") and not (intel.root / f"{PREFIX}5").exists()
    assert not intel.remove("5")


def test_choose_mask_prefers_the_tightest_run() -> None:
    # free runs: bits 0-1 (2 ways) and bits 4-9 (6 ways); a 2-way job takes bits 0-1
    assert choose_mask(0b1111110011, 2, 10, sparse=False) == 0b11
    assert choose_mask(0b1111110011, 3, 10, sparse=False) == 0b111 << 4
    assert choose_mask(0b101, 2, 3, sparse=False) is None


def test_this_machine_says_why_not(tmp_path: Path) -> None:
    ok, why = Resctrl(tmp_path / "none").status()
    assert not ok and ("cat_l3" in why or "not mounted" in why)


def _script(name: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REPO / "slurm" / name)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60, check=False)


def test_prolog_and_epilog_scripts_on_a_fake_tree(intel: Resctrl, tmp_path: Path) -> None:
    log = tmp_path / "cache.log"
    env = {"GRADELINE_RESCTRL_ROOT": str(intel.root), "GRADELINE_SYSFS_CPU":
           str(intel.sysfs_cpu), "GRADELINE_CACHE_LOG": str(log), "SLURM_JOB_ID": "4242",
           "GRADELINE_CACHE_CPUS": "0-3", "GRADELINE_L3_MB_PER_CORE": "4"}
    p = _script("prolog.sh", env)
    assert p.returncode == 0, p.stderr
    group = intel.root / f"{PREFIX}4242"
    assert (group / "schemata").read_text().strip() == "L3:0=ff"  # 4 x 4 MB / 2 = 8 ways
    assert (group / "cpus_list").read_text().strip() == "0-3"
    assert "prolog job 4242 cpus 0-3" in log.read_text()
    assert _script("epilog.sh", env).returncode == 0
    assert not group.exists() and "removed its L3 group" in log.read_text()


def test_prolog_without_rdt_logs_and_lets_the_job_run(tmp_path: Path) -> None:
    log = tmp_path / "cache.log"
    p = _script("prolog.sh", {"GRADELINE_RESCTRL_ROOT": str(tmp_path / "nothing"),
                              "GRADELINE_CACHE_LOG": str(log), "SLURM_JOB_ID": "77"})
    assert p.returncode == 0
    assert "job 77: runs without an L3 partition" in log.read_text()
    assert _script("epilog.sh", {"GRADELINE_RESCTRL_ROOT": str(tmp_path / "nothing"),
                                 "SLURM_JOB_ID": "77"}).returncode == 0


def test_a_jobs_l3_request_is_clamped_to_the_admins_range() -> None:
    from grader.cli.measure import l3_request

    assert l3_request("", 2.5, 0.5, 4.0) == (2.5, "")
    assert l3_request("l3_mb_per_core=3", 2.5, 0.5, 4.0) == (3.0, "")
    got, note = l3_request("x l3_mb_per_core=64", 2.5, 0.5, 4.0)
    assert got == 4.0 and "clamped to 4" in note and "asked l3_mb_per_core=64" in note
    assert l3_request("l3_mb_per_core=0.01", 2.5, 0.5, 4.0)[0] == 0.5
    assert l3_request("l3_mb_per_core=1.2.3", 2.5, 0.5, 4.0) == (2.5, "ignored "
                                                                  "l3_mb_per_core='1.2.3'")


@pytest.mark.parametrize("script", ["prolog.sh", "epilog.sh"])
def test_prolog_and_epilog_run_only_root_owned_code(tmp_path: Path, script: str) -> None:
    """They run as root: a venv or package a non-root user could change is refused
    (logged; the job runs unpartitioned), an intact root-owned one runs."""
    if os.geteuid() != 0:
        pytest.skip("the check is about root-owned files")
    repo = tmp_path / "repo"
    (repo / "slurm").mkdir(parents=True)
    here = Path(__file__).resolve().parents[2] / "slurm"
    for name in (script, "root-check.sh"):
        (repo / "slurm" / name).write_text((here / name).read_text())
    gl = repo / ".venv" / "bin" / "gradeline"
    gl.parent.mkdir(parents=True)
    gl.write_text('#!/bin/sh\necho "gradeline ran: $*"\n')
    gl.chmod(0o755)
    (repo / "grader").mkdir()
    (repo / "grader" / "x.py").write_text("")
    root = tmp_path / "resctrl"
    (root / "info" / "L3").mkdir(parents=True)
    (root / "info" / "L3" / "cbm_mask").write_text("fff\n")
    (root / "gradeline_job_7").mkdir()  # the epilog acts only when the job has a group
    log = tmp_path / "cache.log"
    env = {**os.environ, "GRADELINE_RESCTRL_ROOT": str(root), "GRADELINE_CACHE_LOG": str(log),
           "SLURM_JOB_ID": "7"}

    def run() -> str:
        log.write_text("")
        subprocess.run(["sh", str(repo / "slurm" / script)], env=env, check=True, timeout=60)
        return log.read_text()

    assert "gradeline ran: cache" in run()
    (repo / "grader" / "x.py").chmod(0o666)  # any user could change what root runs
    out = run()
    assert "refused to run gradeline as root" in out and "x.py" in out
    assert "gradeline ran" not in out
    (repo / "grader" / "x.py").chmod(0o644)
    os.chown(repo / "grader" / "x.py", 1000, 1000)  # owned by someone else
    assert "refused" in run()
