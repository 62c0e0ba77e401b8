"""``watch``: supervision samples of a long run (issue 7)."""

from __future__ import annotations

import argparse

from ..errors import NotImplementedYet


def cmd_watch(args: argparse.Namespace) -> int:
    raise NotImplementedYet("watch")
