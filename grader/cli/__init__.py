"""The ``gradeline`` command line: thin commands over the library (``main`` for people,
``task`` for Slurm array tasks): they parse, call ``grader.compose`` (which builds the
pipelines, servers, desks and pages) and print.

This file stays empty on purpose: an array task imports ``grader.cli.task`` and
must not pay for (or need) the database driver the other commands import.
"""
