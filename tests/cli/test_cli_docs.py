"""docs/cli.md documents every subcommand of `pisa-mm` and every option each one accepts."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from pisa_mm.cli import SUBCOMMANDS, build_parser

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("pisa-mm has no subcommands")


SUBPARSERS = _subparsers()


def _section(doc: str, name: str) -> str:
    """The text of the `## \\`pisa-mm NAME\\`` section, up to the next level-2 heading."""
    match = re.search(rf"^## `pisa-mm {re.escape(name)}`\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
    assert match is not None, f"docs/cli.md has no '## `pisa-mm {name}`' section"
    return match.group(1)


def test_every_subcommand_is_registered() -> None:
    # A subcommand whose module fails to import is silently skipped by build_parser.
    assert sorted(SUBPARSERS) == sorted(SUBCOMMANDS)


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_subcommand_has_a_section(name: str) -> None:
    _section(CLI_DOC.read_text(encoding="utf-8"), name)


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_every_option_is_documented(name: str) -> None:
    doc = CLI_DOC.read_text(encoding="utf-8")
    section = _section(doc, name)
    missing = []
    for action in SUBPARSERS[name]._actions:
        for option in action.option_strings:
            # whole-word match: `--unroll` must not be satisfied by `--unrolling`
            pattern = rf"(?<![\w-]){re.escape(option)}(?![\w-])"
            if not re.search(pattern, section):
                missing.append(option)
        for choice in action.choices or ():
            if not isinstance(action, argparse._SubParsersAction) and str(choice) not in section:
                missing.append(f"{'/'.join(action.option_strings)} {choice}")
    assert not missing, f"`pisa-mm {name}`: {missing} missing from its section of docs/cli.md"


def test_top_level_options_are_documented() -> None:
    parser, _ = build_parser()
    doc = CLI_DOC.read_text(encoding="utf-8")
    for action in parser._actions:
        for option in action.option_strings:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", doc), option
