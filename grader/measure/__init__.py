"""Scaling campaigns: the corpus, the three workloads (pipeline, bare loop, CPU
loop), the cachegrind L3 sweep, and the tidy CSV schema the analysis reads.
"""
