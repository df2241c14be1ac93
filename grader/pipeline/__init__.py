"""Orchestration: spool intake, the journal, dedupe, the local and Slurm
executors, the array-task body, runs and regrades.

It talks to the results store and the executors through ``ports``; the command
line decides which concrete adapters those are.
"""
