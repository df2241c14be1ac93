"""Otter-Grader's autograders (the zip ``otter assign`` writes), graded without conda.

Otter 7's zip is a Gradescope autograder whose ``setup.sh`` downloads Miniforge and
builds a mamba environment, and whose ``run_autograder`` activates it: neither is
reachable from an offline cluster. Nothing in Otter's grading needs conda, though
(read from ucbds-infra/otter-grader at v7.0.0): the zip's ``environment.yml`` lists
the whole Python environment under ``pip:`` (``otter-grader[grading,plugins]`` and the
course's requirements), and ``run_otter.py`` grades the notebook with the ``python3``
kernel. So gradeline recognises such a zip (``run_otter.py``, ``otter_config.json``,
``environment.yml``) and builds its image with pip alone: a virtual environment of the
grading image's Python with that list and ``ipykernel``, the kernel registered as
``python3`` (``SETUP``); per submission it runs ``run_otter.py`` with that Python
(``RUN``). The zip itself is used unchanged.

What pip cannot install is refused at build, naming it: a conda-only dependency (R,
``r-ottr``, compilers), a pip option or URL. What needs the network or tools the image
lacks at grading time -- PDF export (LaTeX, pandoc, a browser), token upload to
Gradescope, plugins -- is turned off for gradeline's runs with a warning
(``config_overrides``), never failed on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grader.core.errors import ConfigError

MARKERS = ("run_otter.py", "otter_config.json", "environment.yml")
#: bumped when the build below changes: the image's name includes it
RECIPE = "otter-pip-1"
ENV = "/opt/otter-env"
#: conda dependencies that pip installs under the same name (Otter's defaults)
CONDA_AS_PIP = {"jupyter_server", "jupyter-server", "nbformat", "nbconvert", "ipykernel"}
CONDA_IGNORED = {"python", "pip"}
_PIP_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*(\[[A-Za-z0-9_,.-]+\])?"
    r"\s*((===?|[<>!~]=|[<>])\s*[A-Za-z0-9_.*+!-]+\s*,?\s*)*(;[^#]*)?$")
#: what would need the network or tools at grading time, and its "off"
OFF: dict[str, Any] = {"pdf": False, "pdf_via_html": False, "token": None, "course_id": None,
                       "assignment_id": None, "plugins": []}

SETUP = f"""#!/bin/bash
# gradeline's pip-only build of an Otter-Grader autograder (its setup.sh needs conda)
set -eu
apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
python3 -m venv {ENV}
{ENV}/bin/pip install -q --no-cache-dir -r /autograder/otter-requirements.txt
{ENV}/bin/python -m ipykernel install --sys-prefix --name python3
chmod -R a+rX {ENV}
"""

RUN = f"""#!/bin/sh
# gradeline's run of an Otter-Grader autograder: Otter's own run_otter.py, with the
# environment its pip list built (Otter's run_autograder activates conda instead)
exec {ENV}/bin/python /autograder/source/run_otter.py
"""


@dataclass(frozen=True, slots=True)
class OtterSetup:
    """What gradeline builds and changes for an Otter autograder.

    :param requirements: the pip list, ``ipykernel`` added.
    :param python: the Python version environment.yml asks for (the image's is used).
    :param config_overrides: otter_config.json keys set for gradeline's runs.
    :param warnings: what was turned off or differs, for staff.
    """

    requirements: tuple[str, ...]
    python: str | None = None
    config_overrides: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def is_otter(files: tuple[str, ...]) -> bool:
    """Whether an autograder's files are Otter's (its run_otter.py, otter_config.json and
    environment.yml at the root)."""
    return all(m in files for m in MARKERS)


def _conda_name(spec: str) -> str:
    spec = spec.split("::", 1)[-1].strip()
    return re.split(r"[=<>!~ ]", spec, maxsplit=1)[0].lower()


def parse_environment(text: str, where: str) -> tuple[list[str], str | None]:
    """(pip requirements, the Python version asked for) of an environment.yml.

    :raises ConfigError: naming a dependency pip cannot install, and what to do.
    """
    try:
        env = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: not YAML: {e}") from None
    if not isinstance(env, dict):
        raise ConfigError(f"{where}: not a conda environment (a mapping)")
    python, pip = None, []
    for dep in env.get("dependencies") or []:
        if isinstance(dep, dict) and set(dep) == {"pip"}:
            for req in dep["pip"] or []:
                req = str(req).strip()
                if not _PIP_REQUIREMENT.match(req):
                    raise ConfigError(
                        f"{where}: pip requirement {req!r} is not a package from an index "
                        "(an option, a URL or a path): gradeline builds from the package "
                        "registries; publish it or list its name")
                pip.append(req)
            continue
        if not isinstance(dep, str):
            raise ConfigError(f"{where}: dependency {dep!r} is neither a conda package nor "
                              "a pip list")
        name = _conda_name(dep)
        if name == "python":
            m = re.search(r"\d+(\.\d+)*", dep.split("python", 1)[1])
            python = m.group(0) if m else None
        elif name in CONDA_AS_PIP:
            pip.append(name.replace("-", "_"))
        elif name not in CONDA_IGNORED:
            raise ConfigError(
                f"{where}: {dep!r} is a conda package, and gradeline builds Otter "
                "autograders with pip alone (no conda on the cluster): list a pip "
                "package instead in the assignment's requirements.txt, or grade this "
                "assignment where conda is reachable (R assignments need conda's r-base "
                "and r-ottr)")
    if not any(re.match(r"otter[-_]grader\b", r, re.I) for r in pip):
        raise ConfigError(f"{where}: no otter-grader in its pip list (was the environment "
                          "overwritten?): add otter-grader to the assignment's "
                          "requirements")
    return [*pip, "ipykernel"], python


def otter_setup(root: Path, image_python: str = "3.11") -> OtterSetup:
    """The pip-only build and run of the Otter autograder in ``root``.

    :raises ConfigError: for what pip cannot give it (see ``parse_environment``), an R
        assignment, or a config that is not JSON.
    """
    reqs, python = parse_environment((root / "environment.yml").read_text(),
                                     f"{root.name}/environment.yml")
    try:
        config = json.loads((root / "otter_config.json").read_text() or "{}")
    except ValueError as e:
        raise ConfigError(f"{root.name}/otter_config.json: not JSON: {e}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{root.name}/otter_config.json: not a JSON object")
    if config.get("lang", "python") != "python":
        raise ConfigError(f"{root.name}: an Otter assignment in {config['lang']!r} needs "
                          "conda (r-base, r-ottr): gradeline grades Python notebooks")
    overrides = {k: v for k, v in OFF.items() if config.get(k) not in (None, False, [], "")}
    warnings = [f"otter_config.json {k}: turned off (it needs the network or tools the "
                "grading image lacks: PDF export, upload to Gradescope, plugins)"
                for k in overrides]
    if python and python.split(".")[:2] != image_python.split(".")[:2]:
        warnings.append(f"environment.yml asks for Python {python}; built with the grading "
                        f"image's Python {image_python}")
    return OtterSetup(tuple(reqs), python, overrides, tuple(warnings))
