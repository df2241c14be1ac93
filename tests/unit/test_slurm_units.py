from pathlib import Path

import pytest

from grader.adapters.scheduler.accounting import (
    explain_refusal,
    no_accounting,
    parse_usage,
    sacct_argv,
)
from grader.adapters.scheduler.base import SchedulerError, TaskState
from grader.adapters.scheduler.script import ArrayRequest, array_script
from grader.adapters.scheduler.slurm import parse_job_cpus, parse_tasks
from grader.pipeline.slurm.submit.arrays import shard_size, task_command


def test_shard_size_targets_a_minute_per_task():
    assert shard_size([1.0] * 100_000, 1, total_cpus=64) == 60
    assert shard_size([1.0] * 10_000, 1, total_cpus=64) == 40  # balance caps it
    assert shard_size([2.0] * 100_000, 2, total_cpus=64) == 60
    assert shard_size([1.0] * 100_000, 1, total_cpus=64, target_s=10.0) == 10  # bulk work


def test_shard_size_keeps_small_batches_balanced():
    # 191 submissions on 2 cores: about 4 tasks per core, not 4 tasks in all.
    assert shard_size([1.1] * 191, 1, total_cpus=2) == 24
    assert shard_size([1.0] * 3, 1, total_cpus=2) == 1


def test_squeue_lines_become_the_arrays_task_states():
    text = ("2972|2|PENDING|\n2972|1|RUNNING|n2\n2972|0|COMPLETED|n1\n"
            "2977|N/A|PENDING|\n29720|5|RUNNING|n1\n")
    tasks = parse_tasks(text, "2972")
    assert sorted(tasks) == [0, 1, 2]  # not another job's, nor a job without tasks
    assert tasks[1] == TaskState(1, "RUNNING", "n2") and tasks[0].final
    assert parse_tasks("2977|N/A|PENDING|\n", "2977") == {}


def test_array_script_runs_the_lean_task_entry_with_every_argument_quoted():
    d = Path("/shared/spool dir/cur/b1/array-0")
    text = array_script(ArrayRequest("gradeline-b1-0", tasks=4, cpus_per_task=2, minutes=7,
                                     output=d / "logs" / "%a.log", throttle=3,
                                     partition="grading"), task_command(d))
    lines = text.splitlines()
    assert "#SBATCH --array=0-3%3" in lines and "#SBATCH --cpus-per-task=2" in lines
    assert "#SBATCH --partition=grading" in lines and "#SBATCH --time=7" in lines
    assert lines[-1].endswith("-m grader.cli.task '/shared/spool dir/cur/b1/array-0'")
    assert not any(f"--{k}" in x for x in lines for k in ("nice", "qos", "account"))
    bulk = array_script(ArrayRequest("gradeline-bulk", tasks=1, cpus_per_task=1, minutes=5,
                                     output=d / "x.log", nice=1000, qos="bulk",
                                     account="cs101"), task_command(d)).splitlines()
    assert "#SBATCH --nice=1000" in bulk and "#SBATCH --qos=bulk" in bulk
    assert "#SBATCH --account=cs101" in bulk


def test_job_cpus_of_this_node_from_scontrol():
    text = ("JobId=7 ArrayJobId=7 ArrayTaskId=0\n   Nodes=n1 CPU_IDs=2-3 Mem=100\n"
            "JobId=8 ArrayJobId=7 ArrayTaskId=1\n   Nodes=n2 CPU_IDs=0,5 Mem=100\n")
    assert parse_job_cpus(text, "8", "n2") == (0, 5)
    assert parse_job_cpus(text, "7", "n1") == (2, 3)
    with pytest.raises(SchedulerError, match="no CPU_IDs"):
        parse_job_cpus("JobId=9 JobState=PENDING", "9", "n1")


def test_node_cpus_counts_usable_cpus_of_nodes_that_are_up():
    from grader.adapters.scheduler.slurm import node_cpus
    text = ("NodeName=n1 CPUAlloc=0 CPUEfctv=1 CPUTot=2 CoreSpecCount=1 State=IDLE\n"
            "NodeName=n2 CPUAlloc=1 CPUEfctv=1 CPUTot=2 State=MIXED\n"
            "NodeName=n3 CPUTot=8 State=DOWN+NOT_RESPONDING\n"
            "NodeName=n4 CPUTot=4 State=IDLE+DRAIN\n"
            "NodeName=n5 CPUTot=4 State=ALLOCATED\n")
    assert node_cpus(text) == 1 + 1 + 4  # spec'd cores, down and drained nodes excluded


def test_usage_sums_core_seconds_per_account_and_qos():
    text = "cs101|bulk|120|7_0\ncs101|bulk|60|7_1\ncs202|live|30|8\n|normal|5|9\n" \
           "cs101|bulk||10\n"  # a job not started yet has no CPU time
    rows = parse_usage(text)
    assert [(u.account, u.qos, u.jobs, u.core_seconds) for u in rows] == [
        ("(none)", "normal", 1, 5), ("cs101", "bulk", 2, 180), ("cs202", "live", 1, 30)]
    assert rows[1].core_hours == 0.05
    argv = sacct_argv("now-1days", ["cs101", "cs202"])
    assert argv[argv.index("-A") + 1] == "cs101,cs202" and "-X" in argv and "-a" in argv
    assert "-A" not in sacct_argv("now-1days")


def test_refusals_name_what_slurm_refused_and_a_cluster_without_accounting_says_so():
    script = "#!/bin/bash\n#SBATCH --account=cs303\n#SBATCH --qos=live\nexec true\n"
    why = explain_refusal("sbatch failed: Invalid account or account/partition combination "
                          "specified", script)
    assert "refused account cs303" in why and "sacctmgr show assoc" in why
    assert "refused qos live" in explain_refusal("sbatch failed: Invalid qos specification",
                                                 script)
    assert explain_refusal("sbatch failed: other", script) == "sbatch failed: other"
    err = no_accounting("sacct failed: Slurm accounting storage is disabled")
    assert err is not None and "--accounting" in str(err)
    assert no_accounting("sacct failed: timeout") is None
