"""Which GPUs a grading may use and what its sandbox binds in: the Slurm job's GPUs
only (none for a job that holds none, whatever the node has), their device files under
/dev and the driver's control devices, the driver's libraries at /gl/gpu; the run told
CUDA_VISIBLE_DEVICES; a worker without the shape's GPUs is a placement fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.adapters import gpus
from grader.adapters.sandbox.apptainer import ApptainerSandbox
from grader.adapters.sandbox.bwrap import BwrapSandbox
from grader.core.errors import SandboxError
from grader.core.shape import SERIAL, Shape
from grader.judge import parallel

LIB = "/usr/lib/x86_64-linux-gnu"
LDCONFIG = f"""\
1234 libs found in cache `/etc/ld.so.cache'
\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => {LIB}/libnvidia-ptxjitcompiler.so.1
\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1
\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1
\tlibcudart.so.12 (libc6,x86-64) => /usr/local/lib/libcudart.so.12
\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
"""


@pytest.fixture
def dev(tmp_path: Path) -> Path:
    for name in ("nvidia0", "nvidia1", "nvidia3", "nvidiactl", "nvidia-uvm", "null"):
        (tmp_path / name).touch()
    return tmp_path


def test_a_job_uses_its_own_gpus_and_a_job_without_any_none(dev: Path) -> None:
    assert gpus.present(dev) == [0, 1, 3]
    assert gpus.allowed("1,3", in_job=True, dev=dev) == [1, 3]
    assert gpus.allowed("2", in_job=True, dev=dev) == []  # not on this node
    assert gpus.allowed(None, in_job=True, dev=dev) == []  # the job holds no GPU
    assert gpus.allowed(None, in_job=False, dev=dev) == [0, 1, 3]  # a workstation


def test_a_sandbox_binds_its_gpus_the_control_devices_and_the_driver(dev: Path,
                                                                    tmp_path: Path) -> None:
    files = gpus.device_files([3], dev)
    assert files == [(dev / "nvidia3", "/dev/nvidia3"), (dev / "nvidiactl", "/dev/nvidiactl"),
                     (dev / "nvidia-uvm", "/dev/nvidia-uvm")]
    libs = gpus.driver_libraries(LDCONFIG)
    assert [p.name for p in libs] == ["libnvidia-ptxjitcompiler.so.1", "libnvidia-ml.so.1",
                                      "libcuda.so.1"]  # not i386, not the runtime, not libc
    access = gpus.GpuAccess((3,), tuple(files), tuple(libs))
    (tmp_path / "gl" / "work").mkdir(parents=True)
    for mount in ("work", "judge", "tmp", "proc", "dev", "usr/local/bin/gl-runner"):
        (tmp_path / "root" / mount).mkdir(parents=True)
    (tmp_path / "root" / "gl" / "work").mkdir(parents=True)
    bw = BwrapSandbox(tmp_path / "root", tmp_path / "w", bwrap="/bin/true", gpus=access)
    argv = bw.container_argv([], ["gl-runner"])
    assert ["--dev-bind", str(dev / "nvidia3"), "/dev/nvidia3"] == \
        argv[argv.index(str(dev / "nvidia3")) - 1:argv.index(str(dev / "nvidia3")) + 2]
    assert str(dev / "nvidia0") not in argv and str(dev / "nvidia1") not in argv
    assert "/gl/gpu/libcuda.so.1" in argv and "--tmpfs" in argv
    app = ApptainerSandbox(tmp_path / "x.sif", tmp_path / "w", apptainer="/bin/true",
                           gpus=access)
    aargv = app.container_argv([], ["gl-runner"])
    assert f"{dev / 'nvidia3'}:/dev/nvidia3" in aargv and "--nv" not in aargv
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.1:/gl/gpu/libcuda.so.1:ro" in aargv
    none = BwrapSandbox(tmp_path / "root", tmp_path / "w", bwrap="/bin/true")
    assert not any("nvidia" in a for a in none.container_argv([], ["gl-runner"]))


def test_a_run_is_told_its_gpus_and_a_worker_without_them_is_our_fault() -> None:
    one = Shape(gpus=1)
    assert parallel.run_gpus(one, [2, 5]) == [2]
    env = parallel.run_env(one, {"PATH": "/bin"}, [2])
    assert env["CUDA_VISIBLE_DEVICES"] == "2" and env["LD_LIBRARY_PATH"] == "/gl/gpu"
    assert "CUDA_VISIBLE_DEVICES" not in parallel.run_env(SERIAL, {}, [])
    with pytest.raises(SandboxError, match="this worker has 0 GPU"):
        parallel.run_gpus(one, [])
