"""One package per outside system: the sandbox runtimes, the batch scheduler, the
results database, hardware counters, cache partitions, the spool, the web (staff and
student pages, the LTI tool, the Open OnDemand app), the student desk's socket, the
browser.

Adapters may use the core and implement the judge's ports; they never import the
pipeline or the command line.
"""
