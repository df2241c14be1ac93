"""The ICPC/Kattis problem package format, read as judges read it: ``problem.yaml``
(legacy, 2023-07 and 2025-09), limits, test data and its scoring tree, constants and
the default output validator."""
