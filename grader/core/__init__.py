"""The pure core: what an assignment is, how a run becomes a verdict, how tests
become a score, and the typed values that cross every seam (jobs, outcomes,
records, counter samples).

Nothing here starts a process, reads the environment or talks to Slurm or SQL;
every decision is a function of its arguments, so it is tested without a sandbox.
"""
