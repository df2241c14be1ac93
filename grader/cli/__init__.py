"""The ``gradeline`` command line: the only place that wires concrete adapters
together (``main`` for people, ``task`` for Slurm array tasks).

This file stays empty on purpose: an array task imports ``grader.cli.task`` and
must not pay for (or need) the database driver the other commands import.
"""
