"""What a user reads first: ``gradeline --help`` grouped by audience, an example that
parses under every command's help, and a quiet end when the reader of the output left."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from grader.cli import help as help_text
from grader.cli.main import build_parser


def test_every_command_is_in_exactly_one_audience() -> None:
    parser = build_parser()
    top = {name.split()[0] for name, _ in help_text.commands(parser)}
    grouped = [n for names in help_text.GROUPS.values() for n in names]
    assert sorted(grouped) == sorted(top)


def test_every_command_has_an_example_that_parses() -> None:
    parser = build_parser()
    names = [name for name, _ in help_text.commands(parser)]
    assert set(help_text.EXAMPLES) == set(names)
    for name, line in help_text.EXAMPLES.items():
        argv = shlex.split(line)
        assert argv[0] == "gradeline" and " ".join(argv[1:]).startswith(name), line
        args = parser.parse_args(argv[1:])  # exits (SystemExit) on a wrong example
        assert callable(args.func), line


def test_help_says_what_gradeline_is_and_shows_the_groups(capsys) -> None:
    parser = build_parser()
    text = parser.format_help()
    assert text.startswith("usage: gradeline")
    assert "gradeline grades programming assignments" in text
    for group in help_text.GROUPS:
        assert f"\n{group}:\n" in text
    assert "GradelineError" not in text  # no developer docstring
    sub = dict(help_text.commands(parser))["plan predict"].format_help()
    assert "example:\n  gradeline plan predict --trace" in sub


@pytest.mark.parametrize("buffered", [True, False])
def test_output_into_a_closed_pipe_ends_quietly(buffered: bool) -> None:
    """``gradeline examples | head -0``: the reader is gone before anything is written
    (output written at once, or flushed when the command ends)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    r, w = os.pipe()
    os.close(r)  # nobody will read
    proc = subprocess.run([sys.executable, "-m", "grader", "examples"], stdout=w,
                          stderr=subprocess.PIPE, env=env, timeout=60)
    os.close(w)
    assert proc.stderr == b""
    assert proc.returncode == 0
