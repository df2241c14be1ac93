"""``gradeline ondemand install DEST``: gradeline's Open OnDemand app put where OnDemand
finds apps (a system app: /var/www/ood/apps/sys/gradeline; a developer's:
~/ondemand/dev/gradeline), its Python the one running this command."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

from grader.cli.common import Commands
from grader.compose.context import Context
from grader.core.errors import GradelineError

SITE = Path(__file__).resolve().parent.parent / "adapters" / "web" / "ondemand" / "site"


def cmd_install(args: argparse.Namespace, ctx: Context) -> int:
    dest = Path(args.dest)
    python = args.python or sys.executable
    if not Path(python).is_file():
        raise GradelineError(f"--python {python}: no such interpreter")
    (dest / "bin").mkdir(parents=True, exist_ok=True)
    for name in ("passenger_wsgi.py", "manifest.yml"):
        shutil.copyfile(SITE / name, dest / name)
    wrapper = dest / "bin" / "python"
    text = (SITE / "bin" / "python").read_text()
    wrapper.write_text(text.replace("@PYTHON@", shlex.quote(python)))
    wrapper.chmod(0o755)
    config = dest / "gradeline-ondemand.yaml"
    if args.config:
        shutil.copyfile(args.config, config)
    elif not config.exists():
        shutil.copyfile(SITE / "gradeline-ondemand.yaml", config)
    print(f"installed the Open OnDemand app in {dest} (Python {python}); its courses: "
          f"{config}")
    return 0


def register(sub: Commands) -> None:
    o = sub.add_parser("ondemand", help="gradeline as an Open OnDemand app (hand-in, "
                                        "results and staff pages in the portal)")
    os_ = o.add_subparsers(dest="ondemand_command", required=True)
    i = os_.add_parser("install", help="put the app in DEST (an OnDemand apps directory)")
    i.add_argument("dest", help="e.g. /var/www/ood/apps/sys/gradeline")
    i.add_argument("--config", type=Path, help="the site's gradeline-ondemand.yaml to use")
    i.add_argument("--python", help="the Python the app runs with (default: this one)")
    i.set_defaults(func=cmd_install)
