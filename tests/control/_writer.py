"""A request writer process for the stress test: ``python _writer.py STATE_ROOT INDEX COUNT OUT``.

Submits ``COUNT`` ``set_view`` requests (no run id: any run applies them) and
writes their file names, in submission order, to ``OUT`` as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from prompt_runner.control.requests import build_request
from prompt_runner.control.store import ControlStore

VALUES = ("none", "summary", "preview", "full")


def main() -> None:
    root, index, count, out = (
        Path(sys.argv[1]),
        int(sys.argv[2]),
        int(sys.argv[3]),
        Path(sys.argv[4]),
    )
    os.nice(5)  # two cores: let the runner keep up with eight writers
    store = ControlStore(root)
    names = []
    for i in range(count):
        request = build_request(
            "set_view", {"tool_output": VALUES[i % 4]}, run_id=None, author=f"w{index}"
        )
        names.append(store.write_request(request))
    out.write_text(json.dumps(names), encoding="utf-8")


if __name__ == "__main__":
    main()
