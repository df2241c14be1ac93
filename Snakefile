# gradeline workflow: one run grades one batch of the spool.
#   snakemake --profile profiles/local            # this machine's cores
#   snakemake --profile profiles/slurm            # one Slurm array job for the batch
#   snakemake --profile profiles/local campaign_report   # scaling campaign + report
#   snakemake --profile profiles/local experiment_report # 2^k·r factorial experiment
# Rules live in workflows/rules/*.smk; the config is validated against
# workflows/schemas/config.schema.yaml before anything runs.


configfile: "workflows/config.yaml"


include: "workflows/rules/common.smk"
include: "workflows/rules/grading.smk"
include: "workflows/rules/campaign.smk"
include: "workflows/rules/experiment.smk"


rule all:
    default_target: True
    input:
        summary=f"{RESULTS}/report/summary.txt",
