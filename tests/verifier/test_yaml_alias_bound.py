"""A YAML file whose nested aliases expand it without bound (a "billion laughs"
document an agent session can write) fails its `yaml` item at once instead of
hanging `verify` (new user nu14 #9: a 531-byte file with `assert: equals` ran
for minutes and ignored SIGTERM: printing the value in the failure detail went
through json.dumps's C loop over 9**11 values)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check


def bomb(levels: int = 11) -> str:
    text = "a0: &a0 [x]\n"
    for i in range(1, levels + 1):
        text += f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n"
    return text


def test_verify_refuses_an_alias_bomb_at_once(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {
                    "yaml": [{"path": "bomb.yaml", "assert": [{"path": "a11", "equals": 1}]}]
                }
            }
        },
    )
    (tmp_path / "repo" / "bomb.yaml").write_text(bomb(), encoding="utf-8")
    done = cli("verify", packet, "--json", timeout=30)
    assert done.returncode == 1, done.stdout + done.stderr
    [item] = json.loads(done.stdout)["reports"][0]["items"]
    assert item["pass"] is False and item["verdict"] == "failure"
    assert item["details"] == (
        "bomb.yaml is refused: its aliases (*name) repeat more than 100,000 values beyond "
        'those it writes (nested aliases expand it like a "billion laughs" document), which '
        "no check walks; write the repeated parts out, or nest fewer aliases"
    )


def test_an_alias_inside_its_own_anchor_is_refused(check: Check, git_repo: Path) -> None:
    (git_repo / "loop.yaml").write_text("a: &a [1, *a]\n", encoding="utf-8")
    item = check(
        {"yaml": [{"path": "loop.yaml", "assert": [{"path": "a", "equals": [1, [1]]}]}]}
    ).items[0]
    assert not item.passed
    assert item.details.startswith(
        "loop.yaml is refused: an alias (*name) inside its own anchor makes a list or map "
        "contain itself"
    )


def test_ordinary_aliases_still_pass_and_fail_as_before(check: Check, git_repo: Path) -> None:
    (git_repo / "ci.yaml").write_text(
        "defaults: &d {image: py, steps: [a, b]}\nbuild: *d\ntest: {<<: *d, image: pypy}\n",
        encoding="utf-8",
    )
    good = check({"yaml": [{"path": "ci.yaml", "assert": [{"path": "build.steps", "length": 2}]}]})
    assert good.passed, good.to_dict()
    bad = check({"yaml": [{"path": "ci.yaml", "assert": [{"path": "test", "equals": 1}]}]}).items[0]
    assert bad.details == (
        'test is {"image": "pypy", "steps": ["a", "b"]} (map), expected 1 (integer)'
    )


def test_a_failure_detail_prints_only_the_head_of_a_huge_value(tmp_path: Path) -> None:
    # Past the refusal, nothing may walk a shared value in full: the detail's
    # rendering stops after 200 characters (in Python, so a signal is handled).
    script = (
        "from prompt_runner import strict_yaml\n"
        "from prompt_runner.verifier.clauses.data import _text\n"
        f"data = strict_yaml.load({bomb(13)!r})\n"
        "print(_text(data['a13']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('[[[[[[[[[[[[[["x"], ["x"]') and done.stdout.endswith("...\n")
    assert len(done.stdout) == 201
