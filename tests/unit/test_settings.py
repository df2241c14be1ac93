"""Settings (the only reader of the environment) and faults (named crash points)."""

from dataclasses import fields
from pathlib import Path

import pytest

from grader import faults
from grader.core.errors import ConfigError
from grader.settings import KNOBS, Settings, SlurmTask


def test_every_setting_is_documented_and_every_knob_is_a_setting():
    assert {k.field for k in KNOBS} == {f.name for f in fields(Settings)}
    assert all(k.doc for k in KNOBS)


def test_defaults_and_state_dir_per_user():
    root = Settings.from_env({}, euid=0)
    assert root.state_dir == Path("/var/lib/gradeline") and root.runtime == "auto"
    assert root.compile_cache and root.cgroups and root.metrics is None
    user = Settings.from_env({"XDG_STATE_HOME": "/x", "HOME": "/h"}, euid=1000)
    assert user.state_dir == Path("/x/gradeline")
    assert Settings.from_env({"HOME": "/h"}, euid=1000).state_dir == \
        Path("/h/.local/state/gradeline")


def test_values_are_parsed_once_and_typed():
    s = Settings.from_env({"GRADELINE_STATE_DIR": "/s", "GRADELINE_COMPILE_CACHE": "0",
                           "GRADELINE_ASSIGNMENTS": "/a:/b", "GRADELINE_METRICS": "off",
                           "GRADELINE_L3_MB_PER_CORE": "4", "SLURM_ARRAY_TASK_ID": "3",
                           "SLURMD_NODENAME": "n2", "GRADELINE_RUNTIME": "BWRAP"}, euid=0)
    assert s.state_dir == Path("/s") and not s.compile_cache and s.metrics is None
    assert s.assignments == (Path("/a"), Path("/b")) and s.l3_mb_per_core == 4.0
    assert s.runtime == "bwrap"
    assert s.slurm == SlurmTask(array_task_id="3", node="n2")
    assert s.slurm.record() == {"slurm_array_task_id": "3", "slurmd_nodename": "n2"}


@pytest.mark.parametrize(("env", "message"), [
    ({"GRADELINE_EXECUTOR": "cloud"}, "GRADELINE_EXECUTOR='cloud': use one of auto"),
    ({"GRADELINE_METRICS": "papi"}, "GRADELINE_METRICS='papi'"),
    ({"GRADELINE_L3_MB_PER_CORE": "lots"}, "GRADELINE_L3_MB_PER_CORE='lots' is not a number"),
    ({"GRADELINE_SANDBOX_UID_BASE": "-5"}, "must be > 0"),
])
def test_bad_values_name_the_variable(env, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        Settings.from_env(env, euid=0)


def test_describe_lists_every_knob_with_its_value():
    rows = Settings.from_env({"GRADELINE_COURSE": "algo"}, euid=0).describe()
    assert ("GRADELINE_COURSE", "algo") in [(e, v) for e, v, _ in rows]
    assert len(rows) == len(KNOBS)


def test_fault_specs_are_checked():
    armed = faults.parse("before-done=crash, shard-start:shard-0=crash-once")
    assert [(a.point, a.instance, a.action) for a in armed] == \
        [("before-done", "", "crash"), ("shard-start", "shard-0", "crash-once")]
    for bad in ("nowhere=crash", "before-done=explode", "before-done"):
        with pytest.raises(ConfigError, match="GRADELINE_FAULT"):
            faults.parse(bad)


def test_unarmed_points_do_nothing_and_crash_once_fires_once(tmp_path, monkeypatch):
    faults.arm("")
    faults.point("before-done")  # not armed: returns
    exits = []
    monkeypatch.setattr(faults.os, "_exit", lambda code: exits.append(code))
    faults.arm("shard-start:shard-0=crash-once", tmp_path)
    faults.point("shard-start", "shard-1")  # another instance: nothing
    faults.point("shard-start", "shard-0")
    faults.point("shard-start", "shard-0")
    assert exits == [137]
    faults.arm("")


def test_an_unset_variable_leaves_the_fields_one_default():
    """Each default is declared once, on its field: an empty environment gives exactly
    the dataclass's defaults (the state dir aside, which depends on the account)."""
    assert Settings.from_env({}, euid=0) == Settings()
    assert Settings.from_env({"HOME": "/h"}, euid=1000) == \
        Settings(state_dir=Path("/h/.local/state/gradeline"))
