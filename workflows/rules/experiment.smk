# Factorial experiment (not part of the default target): a 2^k·r design over the
# factors in config["experiment"], ONE JOB PER DESIGN POINT x REPLICATION, each with
# the whole machine (threads: all cores locally; an exclusive node through Slurm).
#   snakemake --profile profiles/local experiment_report
#   snakemake --profile profiles/experiment-slurm experiment_report
# A warm-up run (discarded) goes first; the report analyses effects and allocation of
# variation and is checked in headless Chromium.


localrules:
    experiment_design,
    experiment_report,


wildcard_constraints:
    point=r"\d+",
    rep=r"\d+",


rule experiment_design:
    output:
        design=f"{RESULTS}/experiment/experiment.json",
    log:
        f"{RESULTS}/logs/experiment-design.log",
    params:
        out=experiment_dir_of_output,
        factors=experiment_factor_options(),
        reps=config["experiment"]["reps"],
        work=config["experiment"]["work"],
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline experiment design --out {params.out} {params.factors} "
        "--reps {params.reps} --work {params.work} > {log} 2>&1"


rule experiment_warmup:
    input:
        design=rules.experiment_design.output.design,
    output:
        point=f"{RESULTS}/experiment/points/p0-warmup.json",
    log:
        f"{RESULTS}/logs/experiment-warmup.log",
    params:
        out=experiment_dir,
    threads: workflow.cores
    resources:
        slurm_extra="--exclusive",
        runtime=60,
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline experiment point --out {params.out} --point 0 --rep -1 > {log} 2>&1"


rule experiment_point:
    input:
        design=rules.experiment_design.output.design,
        warmup=rules.experiment_warmup.output.point,
    output:
        point=f"{RESULTS}/experiment/points/p{{point}}-r{{rep}}.json",
    log:
        f"{RESULTS}/logs/experiment/p{{point}}-r{{rep}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/experiment/p{{point}}-r{{rep}}.tsv"
    params:
        out=experiment_dir,
    threads: workflow.cores
    resources:
        slurm_extra="--exclusive",
        runtime=60,
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline experiment point --out {params.out} --point {wildcards.point} "
        "--rep {wildcards.rep} > {log} 2>&1"


rule experiment_report:
    input:
        design=rules.experiment_design.output.design,
        points=experiment_points(),
    output:
        page=f"{RESULTS}/experiment/report/index.html",
    log:
        f"{RESULTS}/logs/experiment-report.log",
    params:
        out=experiment_dir,
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline experiment report --out {params.out} --check > {log} 2>&1"
