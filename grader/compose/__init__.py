"""The composition: which executor, store, scheduler, sandbox, assignments and course
an invocation uses, wired from its settings and options in one place, and what a
command builds from them: ``grading`` (run's pipeline, bulk pipelines, the serving
stack), ``read_side`` (a course's desk and staff pages), ``snapshots``, ``lti`` (the
LTI tool's course side). The command line and the benchmarks both build a
``context.Context``; the array task builds only its worker (``worker``: no database
driver on a compute node).

Where a value comes from, first match wins (written once, here):

1. a command's flags (``options.Options``: ``--spool``, ``--course-file``,
   ``--executor``, ...);
2. the environment (``grader.settings``: ``GRADELINE_SPOOL``, ``GRADELINE_EXECUTOR``,
   ...);
3. the course file (``course.yaml``): the course's name, its assignments' packages,
   deadlines and visibility, its Slurm account and QOS;
4. each package's own files (``problem.yaml``, ``gradeline.yaml``): limits, languages,
   points;
5. the defaults of the code.

A Snakemake workflow's config reaches gradeline as flags of the commands its rules
run, so it is the first source for those commands.
"""
