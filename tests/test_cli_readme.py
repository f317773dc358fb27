"""README.md's command reference and `iobench --help` name the same commands.

The reference is the `###` headings under "## Commands": each names its commands in code,
e.g. ### `iobench run [TARGET]...` or ### `iobench import` and `iobench export`. A command
of a group is named with it (`iobench clients check`). Everywhere else in the README, a
command line in code (`iobench ...` in backticks or a ```sh block) must name a command
that exists."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Cli

README = Path(__file__).parents[1] / "README.md"
WORD = r"[a-z][a-z-]*"
# iobench WORD [WORD]: the command and, for a group, the sub-command (across a line break,
# unless the next line is another command: a group may run on its own).
INVOCATION = re.compile(rf"(?:^|[\s/])iobench\s+({WORD})(?:\s+(?!iobench\b)({WORD}))?")


def _help_commands(cli: Cli, *group: str) -> list[str]:
    """The command names `iobench [GROUP] --help` lists under "Commands:"."""
    code, out, err = cli(*group, "--help")
    assert code == 0, err
    listing = out.split("\nCommands:\n", 1)[1] if "\nCommands:\n" in out else ""
    names = []
    for line in listing.splitlines():
        if not line.startswith("  "):
            break
        if not line.startswith("   "):  # a wrapped description is indented further
            names.append(line.split()[0])
    return names


def _commands_in_help(cli: Cli) -> tuple[set[str], set[str]]:
    """Every command as a user types it ("run", "clients check"), and the groups. A group
    that runs on its own (its usage says ``[COMMAND``, as `iobench suites`) is a command too."""
    commands: set[str] = set()
    groups: set[str] = set()
    for name in _help_commands(cli):
        subcommands = _help_commands(cli, name)
        if subcommands:
            groups.add(name)
            commands.update(f"{name} {sub}" for sub in subcommands)
            _, out, _ = cli(name, "--help")
            if f"Usage: iobench {name} [OPTIONS] [COMMAND" in out:
                commands.add(name)
        else:
            commands.add(name)
    return commands, groups


def _named(code: str, groups: set[str]) -> set[str]:
    """The commands the command lines in ``code`` name."""
    named = set()
    for m in INVOCATION.finditer(code):
        command, sub = m.groups()
        named.add(f"{command} {sub}" if command in groups and sub else command)
    return named


def _reference_headings(readme: str) -> list[str]:
    section = readme.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("### ")]


def _code(readme: str) -> list[str]:
    """The README's code: inline spans (also across a line break) and ```sh blocks."""
    blocks = re.findall(r"^```sh\n(.*?)^```", readme, flags=re.S | re.M)
    prose = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
    return blocks + re.findall(r"`([^`]+)`", prose)


def test_readme_reference_names_every_command_in_help(cli: Cli) -> None:
    commands, groups = _commands_in_help(cli)
    assert {"run", "clients check"} <= commands  # the help listing was read
    headings = _reference_headings(README.read_text())
    documented = set().union(
        *(_named(span, groups) for h in headings for span in re.findall(r"`([^`]+)`", h))
    )
    assert sorted(commands - documented) == [], "commands in --help without a README heading"
    assert sorted(documented - commands) == [], "README headings name no such command"


def test_readme_names_no_command_that_does_not_exist(cli: Cli) -> None:
    commands, groups = _commands_in_help(cli)
    named = set().union(*(_named(code, groups) for code in _code(README.read_text())))
    assert "run" in named and "clients check" in named  # the code was read
    assert sorted(named - commands - groups) == []  # `iobench clients` shows its commands
