"""What ``gradeline --help`` tells a user: what gradeline is and its commands grouped by
who uses them, on one screen; ``gradeline help`` lists every command with a line each,
``gradeline help COMMAND`` shows one; every command's help, and every group's, ends
with an example. The docs' CLI page is generated from the same parser
(``docs/hooks.py``), so the two cannot drift."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterator

from grader.core.errors import GradelineError

DESCRIPTION = """\
gradeline grades programming assignments on a Slurm cluster: submissions land in
a spool, each is graded in a sandboxed grading image on exclusive cores, results
go to PostgreSQL, and staff watch it live."""

#: the width help is laid out for (a terminal's)
WIDTH = 80

#: every top-level command, by who uses it (a unit test checks none is left out)
GROUPS: dict[str, tuple[str, ...]] = {
    "Course staff": ("examples", "check", "grade", "batch", "course", "submit", "import", "run",
                     "serve", "status", "web", "deadline", "release", "choose", "grades",
                     "results", "regrade", "similarity", "dropbox", "desk", "receipt", "lti",
                     "teams", "regrades"),
    "Students": ("hand-in", "mine", "measure", "team", "ask-regrade", "drop"),
    "Cluster admins": ("check-env", "settings", "image", "db", "cache", "metrics", "usage",
                       "ondemand"),
    "Researchers": ("corpus", "campaign", "experiment", "trace", "plan"),
    "Anyone": ("help",),
}

#: one command line per command (subcommands as "plan predict"), shown under its help
EXAMPLES: dict[str, str] = {
    "help": "gradeline help plan predict",
    "examples": "gradeline examples course/",
    "check": "gradeline check course/bigsum",
    "grade": "gradeline grade course/bigsum sum.c",
    "batch": "gradeline batch manifest.csv --out results.csv",
    "submit": "gradeline submit bigsum alice sum.c --spool /srv/spool",
    "import": "gradeline import submissions.zip --assignment bigsum --course-file course.yaml "
              "--spool /srv/spool --dry-run",
    "run": "gradeline run --spool /srv/spool --assignments course/",
    "serve": "gradeline serve --spool /srv/spool --assignments course/ --exit-when-idle",
    "status": "gradeline status --spool /srv/spool --watch",
    "web": "gradeline web --spool /srv/spool --port 8470",
    "results": "gradeline results --spool /srv/spool --assignment bigsum --format csv",
    "regrade": "gradeline regrade --spool /srv/spool --assignment bigsum",
    "dropbox": "gradeline dropbox init /srv/drop --group staff --spool /srv/spool",
    "drop": "gradeline drop /srv/drop bigsum sum.c",
    "desk": "gradeline desk --spool /srv/spool --course-file course.yaml "
            "--page-url http://login1:8470/",
    "hand-in": "gradeline hand-in bigsum sum.c",
    "mine": "gradeline mine bigsum",
    "measure": "gradeline measure primecount",
    "receipt": "gradeline receipt verify receipt.json",
    "team": "gradeline team pair join k7mq2xpa",
    "ask-regrade": "gradeline ask-regrade bigsum secret --reason 'my output matches the "
                   "expected one'",
    "teams import": "gradeline teams import pair teams.csv --course-file course.yaml",
    "teams list": "gradeline teams list pair --log --course-file course.yaml",
    "regrades list": "gradeline regrades list --assignment bigsum --course-file course.yaml",
    "regrades open": "gradeline regrades open bigsum alice secret --reason 'asked in class' "
                     "--course-file course.yaml",
    "regrades answer": "gradeline regrades answer 12 adjusted --points 30 --reason 'the "
                       "checker was wrong' --course-file course.yaml",
    "regrades override": "gradeline regrades override pair bob --points 0 --reason 'did not "
                         "take part' --course-file course.yaml",
    "regrades log": "gradeline regrades log --course-file course.yaml",
    "similarity": "gradeline similarity bigsum --course-file course.yaml --threshold 0.6",
    "course check": "gradeline course check --course-file course.yaml",
    "grades": "gradeline grades --course-file course.yaml --out grades/",
    "deadline": "gradeline deadline bigsum --course-file course.yaml --spool /srv/spool",
    "release": "gradeline release bigsum --course-file course.yaml",
    "choose": "gradeline choose bigsum alice 1764626400000000000.P42R1a2b3c4d.login1 "
              "--course-file course.yaml",
    "lti serve": "gradeline lti serve --registrations lti.yaml --spool /srv/spool "
                 "--port 8480",
    "lti keys": "gradeline lti keys --registrations lti.yaml",
    "lti sync-grades": "gradeline lti sync-grades --registrations lti.yaml",
    "lti roster": "gradeline lti roster --registrations lti.yaml --course-file course.yaml",
    "ondemand install": "gradeline ondemand install /var/www/ood/apps/sys/gradeline",
    "check-env": "gradeline check-env",
    "settings": "gradeline settings",
    "image": "gradeline image build",
    "db": "gradeline db start",
    "cache": "gradeline cache plan --mb-per-core 2.5",
    "metrics": "gradeline metrics check",
    "usage": "gradeline usage --since 2026-11-01 --course-file course.yaml",
    "corpus": "gradeline corpus course/ --count 240 --seed 1",
    "campaign": "gradeline campaign run --out camp/ -n 1,2 --reps 3",
    "experiment run": "gradeline experiment run --out exp/ --factor cores=1,2",
    "experiment grid": "gradeline experiment grid --out grid/",
    "experiment design": "gradeline experiment design --out exp/ --factor cores=1,2",
    "experiment point": "gradeline experiment point --out exp/ --point 0 --rep 0",
    "experiment report": "gradeline experiment report --out exp/ --check",
    "trace gen": "gradeline trace gen rush --corpus course/ -o rush.csv --count 200",
    "trace capture": "gradeline trace capture --spool /srv/spool -o run.csv",
    "trace swf": "gradeline trace swf --spool /srv/spool -o run.swf",
    "trace replay": "gradeline trace replay rush.csv --spool /srv/spool --mode open",
    "trace analyse": "gradeline trace analyse --spool /srv/spool --report responses/",
    "plan demands": "gradeline plan demands --spool /srv/spool -o demands.json",
    "plan predict": "gradeline plan predict --trace rush.csv --demands demands.json "
                    "--cores 16 --speedup 16:11.2",
    "plan performance": "gradeline plan performance course/primecount --students 200 "
                        "--cores 64",
    "plan models": "gradeline plan models --demands demands.json --rate 2 --cores 8",
    "plan partition": "gradeline plan partition --campaign camp/",
    "plan report": "gradeline plan report --demands demands.json --campaign camp/ "
                   "--out capacity/",
}


def commands(parser: argparse.ArgumentParser, prefix: str = ""
             ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command that runs something (subcommands as "plan predict"), in order."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, sp in subs[0].choices.items():
        yield from commands(sp, f"{prefix} {name}".strip())


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {str(c.dest): str(c.help or "") for c in subs._choices_actions}


def groups(parser: argparse.ArgumentParser, prefix: str = ""
           ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser that holds commands (the top level as ""), in order."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if subs:
        yield prefix, parser
        for name, sp in subs[0].choices.items():
            yield from groups(sp, f"{prefix} {name}".strip())


EXIT = ("Exit status: 0 done, 1 a requested check failed, 2 an error (the message says "
        "which), 128+N stopped by signal N.")


def overview(parser: argparse.ArgumentParser) -> str:
    """What ``gradeline help`` prints: every top-level command with its line, grouped by
    audience."""
    summary = _summaries(parser)
    width = max(map(len, summary)) + 2
    lines = []
    for group, names in GROUPS.items():
        lines.append(f"{group}:")
        lines += [textwrap.fill(summary[n], WIDTH, initial_indent=f"  {n.ljust(width)}",
                                subsequent_indent=" " * (width + 2)) for n in names]
        lines.append("")
    lines.append(textwrap.fill("One command's help, with an example: gradeline help COMMAND "
                               "(or gradeline COMMAND --help). " + EXIT, WIDTH))
    return "\n".join(lines)


def screen() -> str:
    """The end of ``gradeline --help``: the commands' names by audience, one screen."""
    width = max(map(len, GROUPS)) + 4
    lines = ["commands, by who uses them:"]
    for group, names in GROUPS.items():
        lines.append(textwrap.fill(" ".join(names), WIDTH,
                                   initial_indent=f"  {group.lower().ljust(width - 2)}",
                                   subsequent_indent=" " * width))
    lines += ["", textwrap.fill("gradeline help lists them with a line each; gradeline help "
                                "COMMAND (or gradeline COMMAND --help) shows one, with an "
                                "example. " + EXIT, WIDTH)]
    return "\n".join(lines)


def cmd_help(args: argparse.Namespace, _ctx: object) -> int:
    """``gradeline help [COMMAND ...]``: the list of commands, or one command's help."""
    parser: argparse.ArgumentParser = args.root_parser
    if not args.words:
        print(overview(parser))
        return 0
    name = " ".join(args.words)
    found = dict(groups(parser)) | dict(commands(parser))
    if name not in found:
        raise GradelineError(f"no command {name!r}: 'gradeline help' lists them")
    print(found[name].format_help(), end="")
    return 0


def _examples_of(name: str) -> list[str]:
    """A group's examples: those of its commands."""
    return [line for n, line in EXAMPLES.items() if n.startswith(name + " ")]


def finish(parser: argparse.ArgumentParser) -> None:
    """Add ``help``, give every command and group its example, and end the top level's
    help with the commands by audience."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    h = subs.add_parser("help", help="every command with a line each; or one command's "
                                     "help, with an example")
    h.add_argument("words", nargs="*", metavar="COMMAND",
                   help="a command (a group's as 'plan predict')")
    h.set_defaults(func=cmd_help, root_parser=parser, reports_only=True)
    for name, sp in commands(parser):
        if name in EXAMPLES:
            sp.epilog = f"example:\n  {EXAMPLES[name]}"
            sp.formatter_class = argparse.RawDescriptionHelpFormatter
    for name, sp in groups(parser):
        if name:
            sp.epilog = "examples:\n" + "\n".join(f"  {x}" for x in _examples_of(name))
            sp.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = screen()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    subs.help = argparse.SUPPRESS
    subs.metavar = "COMMAND"
