"""The pure core: how a run becomes a verdict, languages and limits, submissions as
files, and the typed values that cross every seam (jobs, outcomes, results, records,
counter samples, finished stamps). What an assignment is lives in ``grader.formats``.

Nothing here starts a process, reads the environment or talks to Slurm or SQL;
every decision is a function of its arguments, so it is tested without a sandbox.
"""
