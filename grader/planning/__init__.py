"""Capacity planning: traces of submissions, what they cost (demands), queueing models,
the discrete-event simulator of serve and its pilots, replaying a trace against a live
spool, and the response-time analysis of a run. The command line only wires these."""
