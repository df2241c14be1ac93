"""What a user reads first: ``gradeline --help`` on one screen, grouped by audience;
``gradeline help`` with every command; an example that parses under every command's
help and every group's; and a quiet end when the reader of the output left."""

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


def _example_lines(text: str, head: str) -> list[str]:
    """The command lines under the last ``head`` of a help text, which must end it."""
    blocks = text.rstrip().split("\n\n")
    assert blocks[-1].startswith(head + "\n"), text
    return [ln.strip() for ln in blocks[-1].splitlines()[1:]]


def test_every_group_ends_its_help_with_examples_that_parse(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    parser = build_parser()
    found = [name for name, _ in help_text.groups(parser) if name]
    assert {"course", "lti", "plan", "trace", "experiment", "ondemand"} <= set(found)
    for name, sp in help_text.groups(parser):
        if not name:
            continue
        lines = _example_lines(sp.format_help(), "examples:")
        assert lines, name
        for line in lines:
            argv = shlex.split(line)
            assert argv[:1 + len(name.split())] == ["gradeline", *name.split()], line
            assert callable(parser.parse_args(argv[1:]).func), line
    for name, sp in help_text.commands(parser):
        assert _example_lines(sp.format_help(), "example:") == [help_text.EXAMPLES[name]]


def test_help_fits_a_screen_and_names_every_command(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    parser = build_parser()
    text = parser.format_help()
    assert text.startswith("usage: gradeline")
    assert "gradeline grades programming assignments" in text
    lines = text.rstrip().splitlines()
    assert len(lines) <= 25 and max(map(len, lines)) <= 80, text
    words = set(text.split())
    for group, names in help_text.GROUPS.items():
        assert f"  {group.lower()} " in text
        assert set(names) <= words, (group, set(names) - words)
    assert "gradeline help COMMAND" in " ".join(lines)
    assert "GradelineError" not in text  # no developer docstring
    sub = dict(help_text.commands(parser))["plan predict"].format_help()
    assert sub.startswith("usage: gradeline plan predict ")  # not the top level's usage
    assert "example:\n  gradeline plan predict --trace" in sub


def test_help_lists_every_command_or_shows_one(capsys) -> None:
    from grader.cli import main as cli

    parser = build_parser()
    assert cli.main(["help"]) == 0
    listing = capsys.readouterr().out
    for group, names in help_text.GROUPS.items():
        assert f"\n{group}:\n" in f"\n{listing}"
        for n in names:
            assert f"\n  {n} " in listing, n
    assert cli.main(["help", "plan", "predict"]) == 0
    assert capsys.readouterr().out == \
        dict(help_text.commands(parser))["plan predict"].format_help()
    assert cli.main(["help", "trace"]) == 0
    assert "examples:\n  gradeline trace gen" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main(["help", "plan", "nosuch"])
    assert e.value.code == 2
    assert "no command 'plan nosuch': 'gradeline help' lists them" in capsys.readouterr().err


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
