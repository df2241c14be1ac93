"""The write path: spool intake, the journal, dedupe, the local and Slurm executors,
the array-task body, runs, serve, regrades and the after-deadline phase.

It talks to the results store and the executors through ``ports``; the composition
(``grader.compose``) decides which concrete adapters those are. What people are
answered is the read side's (``grader.views``), which never imports this package.
"""
