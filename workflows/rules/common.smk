# Helpers and config validation shared by the gradeline rules.
import os

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")

RESULTS = f"results/{config['run_id']}"


def gradeline_options():
    """Options every gradeline stage gets from the config."""
    opts = f"--spool {config['spool']} --course {config['course']}"
    for a in config.get("assignments", []):
        opts += f" --assignments {a}"
    return opts


def dispatch_options():
    """Where and how the grading stage runs (set by the profile): on Slurm, pilots by
    default (long-lived tasks pull the batch's tickets) or one array job per batch."""
    opts = f"--executor {config.get('executor', 'auto')}"
    opts += f" --dispatch {config.get('dispatch', 'pilots')}"
    if config.get("shard_size", 0):
        opts += f" --shard-size {config['shard_size']}"
    return opts


def batch_name(wildcards):
    """The batch the intake checkpoint claimed (empty when nothing was waiting)."""
    with open(checkpoints.intake.get().output.batch) as f:
        return f.read().strip()


def stored_batches(wildcards):
    """The stored-marker of the claimed batch, or nothing for an empty spool."""
    name = batch_name(wildcards)
    return [f"{RESULTS}/batches/{name}/stored.txt"] if name else []


def experiment_dir(wildcards, input):
    """The experiment's directory: where its design lives."""
    return os.path.dirname(input.design)


def experiment_dir_of_output(wildcards, output):
    return os.path.dirname(output.design)


def experiment_factor_options():
    """--factor NAME=LOW,HIGH for each factor of the experiment's config."""
    return " ".join(f"--factor {f}" for f in config["experiment"]["factors"])


def experiment_points():
    """Every design point x replication of the experiment (2^k points)."""
    points = 2 ** len(config["experiment"]["factors"])
    return [
        f"{RESULTS}/experiment/points/p{p}-r{r}.json"
        for r in range(config["experiment"]["reps"])
        for p in range(points)
    ]
