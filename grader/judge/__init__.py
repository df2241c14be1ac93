"""Grades one submission: ``judge.Judge`` takes a job to a result and hands it to the
runner of its package's type, side by side here: Kattis packages (``kattis``,
``kattis_passes`` for interactive and multi-pass tests, ``kattis_validators`` for
output validation), Gradescope autograders (``gradescope``) and the course's unit tests
(``unittests``). It needs only a Sandbox (``ports.Sandbox``); which runtime realises it
is the adapters' business.
"""
