"""Batch schedulers: the Scheduler port, Slurm through its CLI or pyslurm, and the
batch script of one grading array."""
