"""What a run imports before it needs it (start-up cost, docs/performance.md,
"The runner's own overhead", round five).

``regex`` is loaded on the first pattern a contract compiles
(``verifier/regexes.py``), the ``supervise`` package only when a registered
survivor is reaped (``runner/orphans.py``); a run whose contract has no
pattern and whose registry is empty loads neither. The behaviour on the other
side -- patterns checked, survivors stopped -- is tested where it lives
(``tests/verifier/test_regex_deadline.py``, ``tests/runner/test_survivors.py``,
``tests/runner/test_verify_command_orphans.py``). A body without the
placeholder word is not searched for scaffold markers, so the lint room is not
loaded either (the refusal: ``tests/runner/test_guards.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from prompt_runner.packet.lint.context import PLACEHOLDER_MARKER
from prompt_runner.runner import lifecycle, orphans
from prompt_runner.supervise import members
from tests.helpers.packets import make_packet

PROBE = """
import sys
from prompt_runner.cli.main import main
try:
    main(["run", sys.argv[1]])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
names = ("regex", "prompt_runner.supervise", "prompt_runner.packet.lint")
print("LOADED", [m for m in names if m in sys.modules], "CODE", code, file=sys.stderr)
"""


def loaded_by_run(tmp_path: Path, verify: dict[str, Any]) -> str:
    writes = {"writes": [{"path": "out.txt", "text": "done\n"}]}
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [writes]}, "verify": verify}})
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("LOADED")]
    assert line, proc.stderr
    return line[-1]


def test_the_marker_variable_is_the_supervise_rooms() -> None:
    assert orphans.MARKER_ENV == members.MARKER_ENV


def test_a_run_without_patterns_or_survivors_loads_neither(tmp_path: Path) -> None:
    verify = {"files_exist": ["out.txt"], "contains": [{"path": "out.txt", "text": "done"}]}
    assert loaded_by_run(tmp_path, verify) == "LOADED [] CODE 0"


def test_a_contract_with_a_pattern_loads_regex_and_is_checked(tmp_path: Path) -> None:
    assert loaded_by_run(tmp_path, {"matches": [{"path": "out.txt", "pattern": "^do.e$"}]}) == (
        "LOADED ['regex'] CODE 0"
    )


def test_every_placeholder_marker_holds_the_word() -> None:
    marker = "<!-- prompt_runner:placeholder goal -->"
    assert PLACEHOLDER_MARKER.findall(marker) == ["goal"]
    assert lifecycle.PLACEHOLDER_WORD in PLACEHOLDER_MARKER.pattern
    assert PLACEHOLDER_MARKER.findall(marker.replace(lifecycle.PLACEHOLDER_WORD, "x")) == []
