"""Interactive and multi-pass tests: the submission and the output validator running
together, or in turns.

**Interactive**: the validator (interactor) and the submission run at the same time,
each in a sandbox of its own with its own limits -- the submission in the judge's
container, the validator in a second one -- their stdin and stdout crossed through two
FIFOs in the test's scratch directory. The judge holds both FIFOs open while the two
runs start (so neither end waits for the other, and nobody reads a premature
end-of-file). Once both programs hold their ends, the validator's output is a pipe to
the submission alone (closing it is the submission's end of input); the submission's
output is let go once either run has ended, so a submission that dies is seen by the
validator as end of output only after its run has ended, and one that outlives the
validator gets EPIPE. The submission's CPU time is measured in its own run, alone.

The verdict follows Kattis (problemtools' interactive rule): a validator that crashed
or exited with neither 42 nor 43 is a judge error; a validator that rejected *before*
the submission ended is WA whatever the submission did afterwards (it may have been
left waiting for input); otherwise the submission's own ending (TLE, MLE, OLE, RE)
comes first, and then the validator's answer.

**Multi-pass**: after a pass the validator may accept and leave ``nextpass.in`` in its
feedback directory; the submission then runs again on it, and the validator reads it
as its input file (as DOMjudge and BAPCtools give it), up to
``limits.validation_passes``; the feedback directory persists between passes. Limits
apply to each pass separately (the test reports its slowest pass).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.core.errors import SandboxError
from grader.core.limits import Limits
from grader.core.runmeta import RunMeta
from grader.core.verdict import Validation, Verdict, determine_verdict
from grader.formats.kattis.metadata import LEGACY
from grader.formats.problem import Problem, TestCase
from grader.judge.kattis_validators import JudgeDir, Validators, judgement
from grader.judge.ports import DEFAULT_ENV, RunRequest, Sandbox

#: the validator's wall clock beyond the submission's: it outlives a submission that
#: stops reading, and sees EOF when the judge lets go of the pipes
VALIDATOR_SLACK_S = 5.0
#: How long a submission's end waits for the validator's before the validator is shown
#: the submission's end of output: a validator that rejected on its own is then seen to
#: have ended first, however late its reply (a crash after the validator said WA is WA).
#: Only a submission that ends while the validator still waits for it pays this.
EOF_GRACE_S = 0.5


@dataclass(frozen=True, slots=True)
class PassOutcome:
    """One test's result over all its passes."""

    meta: RunMeta  # the submission's slowest pass
    validation: Validation | None
    verdict: Verdict
    passes: int


def interactive_verdict(sub: RunMeta, validation: Validation, validator_first: bool
                        ) -> Verdict:
    """Kattis's rule for one interactive pass (see the module docstring)."""
    if validation.accepted is None:
        return Verdict.JE
    if validation.accepted is False and validator_first:
        return Verdict.WA
    return determine_verdict(sub, validation)


class Passes:
    """Runs interactive and multi-pass tests for a judge."""

    def __init__(self, sandbox: Sandbox, validators: Validators, cpus: Sequence[int]) -> None:
        self.sandbox = sandbox
        self.validators = validators
        self.cpus = list(cpus)
        self._peer: Sandbox | None = None

    @property
    def peer(self) -> Sandbox:
        """The validator's own container (started on its first interactive run)."""
        if self._peer is None:
            self._peer = self.sandbox.sibling()
        return self._peer

    def close(self) -> None:
        if self._peer is not None:
            self._peer.close()
            self._peer = None

    def abort(self) -> None:
        if self._peer is not None:
            self._peer.abort()

    def run(self, problem: Problem, case: TestCase, index: int, argv: Sequence[str],
            rundir: Path, out: Path, work: Path, limits: Limits, writable: bool,
            env: Mapping[str, str] | None = None) -> PassOutcome:
        env = dict(env or DEFAULT_ENV)
        jd = self.validators.judge_dir(case, work, index)
        current = case.input_path
        slowest: RunMeta | None = None
        passes = problem.validation_passes if problem.is_multi_pass else 1
        for n in range(1, passes + 1):
            stdin = out / f"{index}.p{n}.in"
            try:
                os.link(current, stdin)
            except OSError:
                shutil.copyfile(current, stdin)
            stdout, stderr = out / f"{index}.p{n}.out", out / f"{index}.p{n}.err"
            validation: Validation | None
            if problem.is_interactive:
                meta, validation, verdict = self._interact(problem, case, jd, argv, rundir,
                                                           stdin, stderr, limits, writable,
                                                           f"{index}-{n}", env)
            else:
                meta = self.sandbox.run(RunRequest(
                    list(argv), rundir, limits, stdout=stdout, stderr=stderr, stdin=stdin,
                    cpus=self.cpus, workdir_writable=writable, env=env))
                validation = self.validators.run_custom(problem, case, jd, stdout) \
                    if meta.ok else None
                verdict = determine_verdict(meta, validation)
            if slowest is None or meta.cpu_time_s > slowest.cpu_time_s:
                slowest = meta
            nextpass = jd.feedback / "nextpass.in"
            if not problem.is_multi_pass or not nextpass.exists():
                return PassOutcome(slowest, validation, verdict, n)
            if verdict is not Verdict.AC:
                if validation is not None and validation.accepted is False:
                    why = "the validator wrote nextpass.in but did not accept (exit 43)"
                    return PassOutcome(slowest, Validation(None, judge_error=why),
                                       Verdict.JE, n)
                return PassOutcome(slowest, validation, verdict, n)
            if n == passes:
                why = (f"the validator asked for pass {n + 1}; limits.validation_passes is "
                       f"{passes}")
                return PassOutcome(slowest, Validation(None, judge_error=why), Verdict.JE, n)
            current = out / f"{index}.p{n + 1}.next"
            shutil.move(nextpass, current)
            current.chmod(0o644)
            self.validators.next_input(jd, current)
        raise AssertionError("unreachable")  # pragma: no cover

    def _interact(self, problem: Problem, case: TestCase, jd: JudgeDir, argv: Sequence[str],
                  rundir: Path, stdin: Path, stderr: Path, limits: Limits, writable: bool,
                  tag: str, env: dict[str, str]) -> tuple[RunMeta, Validation, Verdict]:
        """One interactive run: the submission and the validator joined by two FIFOs.

        Long because the hand-over of the FIFO ends between the judge and the two runs is
        one protocol whose steps (and their order) must be read together."""
        try:
            vbuild, vargv = self.validators.command(problem, case)
        except SandboxError as e:
            return _killed(), Validation(None, judge_error=str(e)), Verdict.JE
        ipc = jd.root / f"ipc-{tag}"
        ipc.mkdir(mode=0o755)
        to_sub, from_sub = ipc / "to_sub", ipc / "from_sub"
        os.mkfifo(to_sub, 0o600)
        os.mkfifo(from_sub, 0o600)
        self.sandbox.own(ipc)
        # The judge holds both FIFOs open while the runs start (no open waits, no early
        # end-of-file). It lets go of the validator's output once both runs have opened
        # their ends (or ended), so the validator closing it is the submission's end of
        # input; and of the submission's output only once a run has ended too, so the
        # validator sees a crashed submission's end of output after that run's end (the
        # order the verdict rule asks for is then certain). A run that ends before the
        # other has even opened must not leave that one without a reader.
        keep = {"to_sub": os.open(to_sub, os.O_RDWR | os.O_NONBLOCK),
                "from_sub": os.open(from_sub, os.O_RDWR | os.O_NONBLOCK)}
        lock = threading.Lock()
        opened = {"sub": threading.Event(), "val": threading.Event()}
        ended = threading.Event()
        val_done = threading.Event()

        released: list[float] = []  # when the submission's output was let go

        def let_go(force: bool = False) -> None:
            with lock:
                both = all(e.is_set() for e in opened.values())
                for end in [k for k in keep if force or (both and (
                        k == "to_sub" or ended.is_set()))]:
                    if end == "from_sub":  # the time before the close: nothing can
                        released.append(time.monotonic())  # see the EOF before it
                    os.close(keep.pop(end))

        def on_open(name: str) -> Callable[[], None]:
            def mark() -> None:
                opened[name].set()
                let_go()
            return mark

        vlimits = replace(problem.validator_limits,
                          wall_time_s=max(problem.validator_limits.wall_s,
                                          limits.wall_s + VALIDATOR_SLACK_S))
        results: dict[str, tuple[RunMeta | SandboxError, float]] = {}

        def go(name: str, sbx: Sandbox, req: RunRequest) -> None:
            try:
                results[name] = (sbx.run(req), time.monotonic())
            except SandboxError as e:
                results[name] = (e, time.monotonic())
            finally:
                opened[name].set()  # ended: it holds no end any more (or never will)
                if name == "val":
                    val_done.set()
                else:
                    val_done.wait(EOF_GRACE_S)
                ended.set()
                let_go()

        sub_req = RunRequest(list(argv), rundir, limits, stdout=from_sub, stderr=stderr,
                             stdin=to_sub, cpus=self.cpus, workdir_writable=writable,
                             fifo=True, env=env, on_open=on_open("sub"))
        val_req = RunRequest(vargv, vbuild, vlimits, stdout=to_sub,
                             stderr=jd.root / f"v-{tag}.err", stdin=from_sub, cpus=self.cpus,
                             binds=jd.binds(), fifo=True, on_open=on_open("val"))
        threads = [threading.Thread(target=go, args=("sub", self.sandbox, sub_req)),
                   threading.Thread(target=go, args=("val", self.peer, val_req))]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            let_go(force=True)
        (sub, sub_t), (val, val_t) = results["sub"], results["val"]
        if isinstance(val, SandboxError):
            return (sub if isinstance(sub, RunMeta) else _killed(),
                    Validation(None, judge_error=f"interactor sandbox failed: {val}"),
                    Verdict.JE)
        validation = judgement(val, jd.feedback, jd.root / f"v-{tag}.out",
                               jd.root / f"v-{tag}.err", vlimits,
                               legacy=problem.format_version in LEGACY)
        if isinstance(sub, SandboxError):
            # the submission could not even start (the validator ended first): only the
            # validator's verdict is left to give
            verdict = Verdict.JE if validation.accepted is None else \
                Verdict.AC if validation.accepted else Verdict.WA
            if verdict is Verdict.AC:
                verdict, validation = Verdict.JE, Validation(
                    None, judge_error=f"submission sandbox failed: {sub}")
            return _killed(), validation, verdict
        return sub, validation, interactive_verdict(sub, validation,
                                                    _validator_first(val, val_t, sub_t,
                                                                     released))


def _validator_first(val: RunMeta, val_t: float, sub_t: float,
                     released: Sequence[float]) -> bool:
    """Whether the validator ended before the submission. The validator cannot see the
    submission's end of output before the judge let go of it (after a run ended, and
    ``EOF_GRACE_S`` more for the validator's own end), so a validator whose program
    exited before that moment ended on its own, first -- even when its reply came
    second (a submission that then died of the end of input replies as fast). Without
    the exit time: the order the replies came in."""
    if val.exited_at is not None and released:
        return val.exited_at < released[0]
    return val_t < sub_t


def _killed() -> RunMeta:
    """A stand-in for a run that never happened (nothing measured)."""
    return RunMeta(exit_code=None, signal=9, cpu_time_s=0.0, wall_time_s=0.0,
                   memory_bytes=None, termination=None)
