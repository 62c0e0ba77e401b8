"""``watch``: supervision samples of a long run (SPEC 8)."""

from __future__ import annotations

import argparse
import json
import sys

from ..api_status import watch_samples


def cmd_watch(args: argparse.Namespace) -> int:
    for sample in watch_samples(args.packet, interval_s=args.interval, once=args.once):
        text = json.dumps(sample.to_dict(), ensure_ascii=False) if args.json else sample.line
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    return 0
