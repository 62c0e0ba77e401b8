"""Every call ``prompt_runner`` exports checks its arguments' types before it does
anything, raising ``ArgumentError`` naming the argument (new-user tester t4):
``doctor_report(["/tmp"])``, ``new_packet(5)`` and ``list_templates(5)`` were bare
``TypeError``s from deep inside, ``control_amend(add="files_exist")`` a
``ValueError`` ("dictionary update sequence..."), ``control_relax(drop=5)`` a
``TypeError``, and a string where a list is meant was read letter by letter
(``control_relax(drop="changed_paths_only")``: "unknown clause `c`";
``new_prompt(targets="app")``: "unknown target repo 'a'")."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.errors import ArgumentError, UserError
from tests.helpers.packets import make_packet

PASSES = {"verify": {"files_exist": ["README.md"]}}

# The parts of an annotation the check reads (the test's own reading of them).
SIMPLE = {"None", "bool", "int", "float", "str", "Path", "PathLike", "os.PathLike[str]"}
GENERIC = ("Mapping[", "dict[", "Sequence[", "Collection[", "list[", "tuple[", "Callable[")
LISTS = ("Sequence[", "Collection[")

# Arguments whose annotation is an alias or a class: the function checks them
# itself (a packet, a workspace, a fleet, a target) or takes anything (below).
SELF_CHECKED = {"packet", "workspace", "fleet", "target"}
TAKES_ANYTHING = {("run", "stream"), ("repair", "stream"), ("run", "commit_callback")}
TAKES_ANYTHING |= {("sample", "state"), ("verify", "ids")}  # ids: checked by verify (ints too)


def _parts(annotation: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for at, char in enumerate(annotation):
        depth += (char == "[") - (char == "]")
        if char == "|" and depth == 0:
            parts.append(annotation[start:at].strip())
            start = at + 1
    return [*parts, annotation[start:].strip()]


def _checkable(annotation: Any) -> bool:
    return isinstance(annotation, str) and all(
        part in SIMPLE or part.startswith(GENERIC) for part in _parts(annotation)
    )


def _public_calls() -> dict[str, Callable[..., Any]]:
    return {
        name: getattr(prompt_runner, name)
        for name in prompt_runner.__all__
        if inspect.isfunction(getattr(prompt_runner, name))
    }


def _call(func: Callable[..., Any], packet: Path, arg: str, value: Any) -> Any:
    """``func`` with its required arguments filled in (a packet, an id, text)
    and ``arg`` given ``value`` (in its place when it is positional)."""
    fill = {"packet": packet, "path": packet, "prompt_id": "01", "add": {}}
    fill |= dict.fromkeys(("for_s", "every_s"), 1)
    params = inspect.signature(func).parameters
    required = [name for name, p in params.items() if p.default is p.empty]
    positional = [n for n in required if params[n].kind is params[n].POSITIONAL_OR_KEYWORD]
    args = [value if name == arg else fill.get(name, "x") for name in positional]
    kwargs = {n: fill.get(n, "x") for n in required if params[n].kind is params[n].KEYWORD_ONLY}
    if arg not in positional:
        kwargs[arg] = value
    return func(*args, **kwargs)


def _refusal(func: Callable[..., Any], packet: Path, arg: str, value: Any) -> str:
    with pytest.raises(ArgumentError) as caught:
        result = _call(func, packet, arg, value)
        if inspect.isgenerator(result):
            next(result)
    assert isinstance(caught.value, TypeError) and caught.value.exit_code == 2
    return str(caught.value)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_every_argument_of_every_public_call_refuses_a_value_of_the_wrong_type(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path / "p", {"01": PASSES})
    before = _files(tmp_path)
    checked = 0
    for name, func in _public_calls().items():
        for arg, p in inspect.signature(func).parameters.items():
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or (name, arg) in TAKES_ANYTHING:
                continue
            annotation = p.annotation
            assert _checkable(annotation) or arg in SELF_CHECKED, (name, arg, annotation)
            message = _refusal(func, packet, arg, object())
            called = func.__name__  # lint_packet is lint
            if arg in SELF_CHECKED:  # the control calls' own check says control(packet=...)
                called = r"\w+"
            assert re.match(rf"{called}\({arg}=\.\.\.[^)]*\): must be ", message), (name, message)
            checked += 1
    assert checked >= 200, checked  # the audit reached every argument
    assert _files(tmp_path) == before  # refused before the call did anything


def test_a_bare_string_where_a_list_is_meant_is_refused_not_read_letter_by_letter(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path / "p", {"01": PASSES})
    lists = [
        (name, arg)
        for name, func in _public_calls().items()
        for arg, p in inspect.signature(func).parameters.items()
        if isinstance(p.annotation, str) and p.annotation.startswith(LISTS)
    ]
    assert ("control_relax", "drop") in lists and ("new_prompt", "targets") in lists
    assert len(lists) >= 8, lists
    for name, arg in lists:
        func = getattr(prompt_runner, name)
        message = _refusal(func, packet, arg, "files_exist")
        assert re.search(r"must be a (list|collection) of (str|paths|pairs)", message), message
        assert "not str 'files_exist'" in message, message
        if "of pairs" not in message:
            assert f"pass a list, even of one: {arg}=['files_exist']" in message, message


def test_the_testers_calls_are_argument_errors_and_change_nothing(tmp_path: Path) -> None:
    packet = make_packet(tmp_path / "p", {"01": PASSES})
    before = _files(tmp_path)
    calls: list[tuple[Callable[[], Any], str]] = [
        (
            lambda: prompt_runner.doctor_report(["/tmp"]),
            r"^doctor_report\(path=\.\.\.\): must be a path",
        ),  # type: ignore[arg-type]
        (
            lambda: prompt_runner.new_packet(5, root=tmp_path),
            r"^new_packet\(name=\.\.\.\): must be text",
        ),  # type: ignore[arg-type]
        (
            lambda: prompt_runner.list_templates(5),
            r"^list_templates\(packet=\.\.\.\): must be a path",
        ),  # type: ignore[arg-type]
        (
            lambda: prompt_runner.control_amend(packet, "01", add="files_exist", reason="r"),  # type: ignore[arg-type]
            r"^control_amend\(add=\.\.\.\): must be a mapping",
        ),
        (
            lambda: prompt_runner.control_amend(packet, "01", add=["x"], reason="r"),  # type: ignore[arg-type]
            r"^control_amend\(add=\.\.\.\): must be a mapping",
        ),
        (
            lambda: prompt_runner.control_relax(packet, "01", drop=5, reason="r", confirm=True),  # type: ignore[arg-type]
            r"^control_relax\(drop=\.\.\.\): must be a list of str, not int 5",
        ),
        (
            lambda: prompt_runner.control_relax(
                packet, "01", drop="changed_paths_only", reason="r", confirm=True
            ),
            r"drop=\['changed_paths_only'\]",
        ),
        (
            lambda: prompt_runner.new_prompt(packet, "3", name="n", targets="app", commit="c"),
            r"^new_prompt\(targets=\.\.\.\): must be a list of str or None, not str 'app'",
        ),
    ]
    for call, pattern in calls:
        with pytest.raises(ArgumentError, match=pattern):
            call()
    assert _files(tmp_path) == before


def test_what_each_argument_takes_still_works(tmp_path: Path) -> None:
    """A ``Path`` or text for a path, a tuple for a list, an int prompt id for repair."""
    packet = make_packet(tmp_path / "p", {"01": PASSES})
    assert prompt_runner.doctor_report(packet) == prompt_runner.doctor_report(str(packet))
    made = prompt_runner.new_prompt(packet, "2", name="two", targets=("app",), commit="feat: 2")
    assert made.is_file() and "app" in made.read_text()
    # add_repo's path may be a Path (it was AttributeError: 'PosixPath' has no 'strip')
    other = tmp_path / "other"
    other.mkdir()
    manifest = prompt_runner.add_repo(packet, "other", other)
    assert str(other) in manifest.read_text()
    # a tuple of clause names is a list: the call goes on to its own refusal
    with pytest.raises(UserError) as caught:
        prompt_runner.control_relax(packet, "01", drop=("files_exist",), reason="r")
    assert not isinstance(caught.value, ArgumentError)
    # repair takes "01" or 1 (an int prompt id) -- only a list is refused
    ran = make_packet(tmp_path / "q", {"01": PASSES})
    assert prompt_runner.run(ran, runtime_store="file").exit_code == 0
    with pytest.raises(ArgumentError, match=r"^repair\(prompt_id=\.\.\.\): must be text"):
        prompt_runner.repair(ran, ["1"])  # type: ignore[arg-type]
    assert prompt_runner.repair(ran, 1).exit_code == 0
