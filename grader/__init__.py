"""gradeline: batch-scheduled grading of programming assignments.

The package is layered; each folder is one layer and imports only go down
(``make lint`` checks it with import-linter):

    cli/       the commands; the only place that wires concrete adapters together
    measure/   scaling campaigns (corpus, workloads, cachegrind sweep, CSV schema)
    pipeline/  spool -> intake -> dedupe -> executor (local | Slurm) -> journal -> store
    adapters/  one package per outside system (sandbox, scheduler, store, metrics, ...)
    judge/     grades one submission through the Sandbox port
    core/      pure: packages, limits, verdicts, scoring, results, jobs, records

Beside them, used by every layer: ``settings`` (the only reader of the
environment), ``cpuset`` (CPU lists) and ``faults`` (named crash points for tests).
"""

__version__ = "0.1.0"
