"""A UTF-8 byte-order mark that starts a file (as Windows editors save it) is not
part of the text any text clause reads (new user nu14 #6: `doc.requires_sections`
and an anchored `matches` missed the first line while `contains` and `yaml`
passed; a first-line marker or forbidden line went unseen, a wrong pass)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check

BOM = b"\xef\xbb\xbf"


def test_verify_reads_the_first_line_of_a_bom_file(tmp_path: Path) -> None:
    verify = {
        "doc": [{"path": "report.md", "requires_sections": ["# Report", "## Verdict"]}],
        "matches": [{"path": "report.md", "pattern": "^# Report$"}],
        "contains": [{"path": "report.md", "text": "# Report"}],
        "yaml": [{"path": "c.yaml", "assert": [{"path": "name", "equals": "api"}]}],
    }
    packet = make_packet(tmp_path, {"01": {"verify": verify}})
    (tmp_path / "repo" / "report.md").write_bytes(BOM + b"# Report\n\n## Verdict\nok\n")
    (tmp_path / "repo" / "c.yaml").write_bytes(BOM + b"name: api\n")
    done = cli("verify", packet, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    items = json.loads(done.stdout)["reports"][0]["items"]
    assert [(i["kind"], i["pass"]) for i in items] == [
        ("contains", True),
        ("matches", True),
        ("doc", True),
        ("yaml", True),
    ]
    assert items[1]["details"] == "report.md matches /^# Report$/ at line 1"


def test_a_marker_or_forbidden_line_behind_a_bom_is_seen(check: Check, git_repo: Path) -> None:
    (git_repo / "notes.md").write_bytes(BOM + b"TODO: write this\n")
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_bytes(BOM + b"import pdb\nx = 1\n")
    report = check(
        {
            "doc": ["notes.md"],
            "source_absent": [{"pattern": "^import pdb", "paths": ["src"]}],
        }
    )
    doc, source = report.items
    assert not doc.passed and doc.details == "forbidden markers: TODO (line 1); finish those parts"
    assert not source.passed and source.extra["hits"] == [
        {"path": "src/app.py", "line": 1, "text": "import pdb"}
    ]


def test_json_refuses_a_bom_in_words_the_author_can_act_on(check: Check, git_repo: Path) -> None:
    (git_repo / "package.json").write_bytes(BOM + b'{"name": "x"}\n')
    item = check({"json": ["package.json"]}).items[0]
    assert not item.passed
    assert item.details == (
        "package.json does not parse as JSON: it starts with a UTF-8 byte-order mark "
        "(RFC 8259: JSON text must not carry one); save the file without it"
    )
