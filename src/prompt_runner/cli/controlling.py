"""``control ...``: watch and steer a live run (issue 5)."""

from __future__ import annotations

import argparse

from ..errors import NotImplementedYet


def _stub(name: str) -> int:
    raise NotImplementedYet(f"control {name}")


def cmd_status(args: argparse.Namespace) -> int:
    return _stub("status")


def cmd_events(args: argparse.Namespace) -> int:
    return _stub("events")


def cmd_log(args: argparse.Namespace) -> int:
    return _stub("log")


def cmd_view(args: argparse.Namespace) -> int:
    return _stub("view")


def cmd_steer(args: argparse.Namespace) -> int:
    return _stub("steer")


def cmd_contract(args: argparse.Namespace) -> int:
    return _stub("contract")


def cmd_amend(args: argparse.Namespace) -> int:
    return _stub("amend")


def cmd_relax(args: argparse.Namespace) -> int:
    return _stub("relax")
