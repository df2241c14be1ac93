"""Grades one submission: ``judge.Judge`` takes a job to a result. A Kattis package it
grades itself, with the helpers side by side here (``kattis``, ``kattis_passes`` for
interactive and multi-pass tests, ``kattis_validators`` for output validation); a
Gradescope autograder (``gradescope``) and the course's unit tests (``unittests``) it
hands to their runners. It needs only a Sandbox (``ports.Sandbox``); which runtime realises it
is the adapters' business.
"""
