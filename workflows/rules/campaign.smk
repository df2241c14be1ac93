# Scaling campaign (not part of the default target): the corpus at N = 1..cores for
# the pipeline, the bare loop and a pure CPU loop, the cachegrind L3 sweep, then the
# HTML report, checked in headless Chromium.
#   snakemake --profile profiles/local campaign_report
import os


localrules:
    campaign,
    campaign_report,


rule campaign:
    output:
        runs=f"{RESULTS}/campaign/runs.csv",
        meta=f"{RESULTS}/campaign/campaign.json",
    log:
        f"{RESULTS}/logs/campaign.log",
    params:
        out=lambda w, output: os.path.dirname(output.runs),
        submissions=config["campaign"]["count"],
        reps=config["campaign"]["reps"],
        ll_mb=",".join(str(x) for x in config["campaign"]["ll_mb"]),
    threads: workflow.cores
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline campaign run --out {params.out} --count {params.submissions} "
        "--reps {params.reps} --ll-mb {params.ll_mb} --no-report > {log} 2>&1"


rule campaign_report:
    input:
        runs=f"{RESULTS}/campaign/runs.csv",
    output:
        page=f"{RESULTS}/campaign/report/index.html",
    log:
        f"{RESULTS}/logs/campaign-report.log",
    params:
        out=lambda w, input: os.path.dirname(input.runs),
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline campaign report --out {params.out} --check > {log} 2>&1"
