"""``watch``: supervision samples of a long run (SPEC 8)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def cmd_watch(args: argparse.Namespace) -> int:
    from ..watch import format_line, watch

    def emit(sample: dict[str, Any]) -> None:
        if args.json:
            text = json.dumps(sample, ensure_ascii=False, sort_keys=False)
        else:
            text = format_line(sample)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    watch(args.packet, interval_s=args.interval, emit=emit, once=args.once)
    return 0
