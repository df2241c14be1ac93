#!/bin/sh
# Slurm prolog: runs as root before each job/array task on its node.
# The L3 cache partition (resctrl group for the job's CPU_IDs) is created here
# with issue #5; on hardware without RDT it logs that and the job runs normally.
exit 0
