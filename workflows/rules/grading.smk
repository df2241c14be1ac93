# Intake (a checkpoint: which batch exists is known only after it ran) -> grading
# (on Slurm: pilot tasks that pull the batch's tickets by default, or one array job
# for the batch with dispatch=arrays; else local workers) -> ingest -> report.
# Every rule runs on the submit host: the grading rule starts the pilots or submits
# the array itself (each task runs the lean `python -m grader.cli.task`), which
# measured far cheaper than one Snakemake jobstep per submission (about 7 s of
# start-up each on this machine).


localrules:
    intake,
    grade_batch,
    ingest_batch,
    report,


checkpoint intake:
    output:
        batch=f"{RESULTS}/intake/batch.txt",
    log:
        f"{RESULTS}/logs/intake.log",
    params:
        opts=gradeline_options(),
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline run --stage intake {params.opts} --batch-file {output.batch} > {log} 2>&1"


rule grade_batch:
    input:
        batch=f"{RESULTS}/intake/batch.txt",
    output:
        graded=f"{RESULTS}/batches/{{batch}}/graded.txt",
    log:
        f"{RESULTS}/logs/grade-{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/grade-{{batch}}.tsv"
    params:
        opts=gradeline_options(),
        dispatch=dispatch_options(),
    resources:
        runtime=600,
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline run --stage grade --batch {wildcards.batch} {params.opts} {params.dispatch}"
        " > {log} 2>&1 && date -u +%FT%TZ > {output.graded}"


rule ingest_batch:
    input:
        graded=f"{RESULTS}/batches/{{batch}}/graded.txt",
    output:
        stored=f"{RESULTS}/batches/{{batch}}/stored.txt",
    log:
        f"{RESULTS}/logs/ingest-{{batch}}.log",
    params:
        opts=gradeline_options(),
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline run --stage ingest --batch {wildcards.batch} {params.opts} --executor local"
        " > {log} 2>&1 && date -u +%FT%TZ > {output.stored}"


rule report:
    input:
        stored=stored_batches,
    output:
        summary=f"{RESULTS}/report/summary.txt",
    log:
        f"{RESULTS}/logs/report.log",
    params:
        opts=gradeline_options(),
    conda:
        "../envs/gradeline.yaml"
    shell:
        "gradeline status {params.opts} > {output.summary} 2> {log}"
