"""Keys the reference system writes or documents load with its meaning (issue 14).

``log_meta: none|full`` (booleans still accepted), the manifest's
``prompt_dir``, a profile's ``prompt_template``; an unknown key stays an error
with a did-you-mean.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter


def home() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


@pytest.mark.parametrize(
    ("written", "meant"), [("none", "none"), ("full", "full"), (True, "full"), (False, "none")]
)
def test_log_meta_loads_as_none_or_full(tmp_path: Path, written: object, meant: str) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"log_meta": written})
    assert api.plan(packet).render["log_meta"] == meant


def test_log_meta_default_is_none_and_a_bad_value_names_the_key(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert api.plan(packet).render["log_meta"] == "none"
    bad = make_packet(tmp_path / "b", {"01": {}}, manifest={"log_meta": "some"})
    with pytest.raises(UserError) as err:
        load_packet(bad)
    assert "log_meta" in str(err.value) and "'none'" in str(err.value)


def test_profile_log_meta_none_as_the_reference_init_writes_it(tmp_path: Path) -> None:
    write_front_matter(
        home() / "profiles" / "mine.md",
        {"provider": "simulated", "model": "m", "log_meta": "none", "prompt_template": "from-adr"},
        "# Profile mine\n",
    )
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": "mine"})
    assert api.plan(packet).render["log_meta"] == "none"


def test_cli_log_meta_takes_a_value(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    doc = json.loads(cli("plan", packet, "--json", "--log-meta", "full").stdout)
    assert doc["render"]["log_meta"] == "full"
    doc = json.loads(cli("plan", packet, "--json", "--log-meta", "none").stdout)
    assert doc["render"]["log_meta"] == "none"
    bad = cli("plan", packet, "--log-meta", "loud")
    assert bad.returncode == 2 and "--log-meta" in bad.stderr


def test_prompt_dir_names_where_the_prompts_are(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {}, manifest={"prompt_dir": "steps"})
    write_front_matter(
        packet / "steps" / "01_a.prompt.md", {"id": "01", "targets": ["app"]}, "# A\n"
    )
    loaded = load_packet(packet)
    assert loaded.ids() == ["01"]
    assert loaded.prompts[0].relfile == "steps/01_a.prompt.md"
    assert loaded.prompt_dir == packet.resolve() / "steps"


def test_prompt_dir_default_and_escape(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"prompt_dir": "prompts"})
    assert load_packet(packet).ids() == ["01"]
    bad = make_packet(tmp_path / "b", {"01": {}}, manifest={"prompt_dir": "../elsewhere"})
    with pytest.raises(UserError) as err:
        load_packet(bad)
    assert "prompt_dir" in str(err.value)


def test_unknown_manifest_key_suggests_the_known_one(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"prompt_dirs": "prompts"})
    with pytest.raises(UserError) as err:
        load_packet(packet)
    assert "unknown key" in str(err.value) and "did you mean 'prompt_dir'" in str(err.value)
