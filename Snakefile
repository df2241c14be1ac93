# gradeline workflow entry point. The Snakefile only wires things together:
# configfile, include of workflows/*.smk, and `rule all`. The rules (intake
# checkpoint, sharding, one Slurm array per batch, ingest, report) arrive with
# the orchestration issue (#4); `gradeline batch` covers local grading until then.
