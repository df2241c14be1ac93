"""Grades one submission: compile, run every test, validate, score.

The judge needs only a Sandbox (``ports.Sandbox``); which runtime realises it is
the adapters' business. Kattis output validators and the compile cache live here.
"""
