"""Authoring commands: packet new/add-repo/lint/doctor, prompt new, schema (issue 7)."""

from __future__ import annotations

import argparse

from ..errors import NotImplementedYet


def cmd_packet_new(args: argparse.Namespace) -> int:
    raise NotImplementedYet("packet new")


def cmd_packet_add_repo(args: argparse.Namespace) -> int:
    raise NotImplementedYet("packet add-repo")


def cmd_packet_lint(args: argparse.Namespace) -> int:
    raise NotImplementedYet("packet lint")


def cmd_packet_doctor(args: argparse.Namespace) -> int:
    raise NotImplementedYet("packet doctor")


def cmd_prompt_new(args: argparse.Namespace) -> int:
    raise NotImplementedYet("prompt new")


def cmd_schema(args: argparse.Namespace) -> int:
    raise NotImplementedYet("schema")
