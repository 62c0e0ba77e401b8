"""The provider option table (``docs/provider-options.md``), written from the adapters.

Every option key a CLI adapter takes is honoured (as the flag or variable
named here) or refused at plan time (for the reason given here): the table is
built from the same :data:`~prompt_runner.providers._cli_options.COMMON_OPTIONS`,
:data:`~prompt_runner.providers._cli_options.COMMON_REFUSED` and per-adapter ``options`` /
``refused`` / ``unsupported`` mappings the plan-time checks use, so it cannot
drift from them (a test compares the file with :func:`markdown`).

Regenerate with ``python -m prompt_runner.planning.provider_options >
docs/provider-options.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..providers._cli import CliProvider
from ..providers._cli_options import COMMON_OPTIONS, COMMON_REFUSED
from ..providers.base import SessionRequest
from ..providers.registry import get_provider, refuse_unknown_effort
from .maps import LIFTED_KEYS, option_maps

CLI_PROVIDERS = ("claude", "codex", "gemini", "amp", "cursor", "antigravity")

_HEAD = """\
# Provider options

Generated from the adapters (`python -m prompt_runner.planning.provider_options`);
a test keeps this file equal to what the plan-time checks do. Every key below
is either honoured, as the flag or variable named, or refused when the packet
is planned, with the reason given. No option is accepted and ignored; an
unknown key is refused with a did-you-mean.

Which maps reach a prompt: `adapter_opts` and `sdk_opts` reach every
provider, then the provider's own map (`claude_opts`, `codex_opts` and
`codex_thread_opts`, `gemini_opts`, `amp_opts`, `cursor_opts`,
`antigravity_opts`), merged key by key, later wins, each level (profile <
packet < prompt) over the one before. A map set in the manifest that no
prompt's provider takes, or in a prompt whose provider does not take it, is
refused (a profile's maps are not checked: a profile serves many packets; nor
is anything under an explicit `--provider`).

Inside any map, {lifted} mean the same as the top-level key and
are resolved with it: a map's value set at a more specific level wins; beside
the top-level key at the same level, the top-level key wins. Where a provider
cannot honour the top-level key, the map's copy is refused the same way.

Flags were checked against the captured `--help` of Claude Code 2.1.332 and
Codex CLI 0.171.0 (`../shared/agent-cli/`); Gemini's, Amp's, Cursor's and
Antigravity's come from their documentation (`OTHER-PROVIDERS.md` there),
as no binary could be run here.

Differences from the reference (Prompt Runner SDK 0.13), on purpose:

- Keys its session manager acts on (`transport_headless_timeout_ms`, `debug`,
  `provider_backend`, the `ollama*` keys, Codex's app-server keys...) are
  refused with the reason: this runner starts each CLI itself.
- A map's `reasoning_effort` (or `model`...) set at a more specific level
  beats the top-level key; the reference copies the top-level
  `reasoning_effort` over `codex_thread_opts`' whatever the level.
- A map that reaches no prompt's provider is refused; the reference ignores it.
- `claude_opts.include_thinking: false` drops the `thinking` events (Claude
  Code has no flag for it); `true` is the default.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _section(title: str, rows: list[tuple[str, str, str]]) -> list[str]:
    lines = [f"## {title}", "", "| key | | honoured as / refused because |", "|---|---|---|"]
    lines += [f"| `{key}` | {verdict} | {_cell(text)} |" for key, verdict, text in rows]
    return [*lines, ""]


def provider_rows(provider: CliProvider) -> list[tuple[str, str, str]]:
    """``(key, "honoured"|"refused", how or why)`` for ``provider``'s own keys and
    the common keys it treats differently from :data:`COMMON_REFUSED`."""
    rows = [(key, "honoured", how) for key, how in sorted(provider.options.items())]
    rows += [
        (key, "refused", why)
        for key, why in sorted(provider.refused.items())
        if key not in provider.options
    ]
    refused_top = dict(provider.unsupported)
    if provider.efforts is None:
        refused_top["reasoning_effort"] = "no effort setting"
    for key in LIFTED_KEYS:
        if key in refused_top:
            rows.append((key, "refused (top-level key too)", refused_top[key]))
        else:
            rows.append((key, "honoured", "as the top-level key (README, Providers)"))
    return rows


def check_authored_options(
    values: Mapping[str, Any], *, provider: str | None, file: str | Path
) -> None:
    """Refuse, before an authoring command writes them, the plan keys the plan
    would refuse for ``provider`` (``profile new``, ``packet new``).

    Args:
        values: the plan keys about to be written (``model``,
            ``reasoning_effort``, ``permission_mode``, ``allowed_tools``,
            ``cli_confirmation``, ``system_prompt``...; others are ignored),
            already checked for type and enumerated words by the model.
        provider: the provider the file names: a CLI provider's own plan-time
            check (:meth:`~prompt_runner.providers._cli.CliProvider.validate_options`)
            judges ``values`` on a representative request. ``None`` (the file
            serves packets of any provider) or ``simulated`` (which ignores
            effort): ``reasoning_effort`` must be one that some provider
            accepts (:func:`~prompt_runner.providers.registry.any_effort`);
            model names are free text.
        file: the file the values would be written to: every refusal names it.

    Raises:
        UserError: naming ``file``, the key and the allowed values: an effort no
            provider (or not ``provider``) accepts, a ``permission_mode`` the
            provider cannot map, a key the provider cannot honour (``model``
            for amp...).
    """
    effort = values.get("reasoning_effort")
    if provider is None or provider == "simulated":
        try:
            refuse_unknown_effort(effort)
        except UserError as exc:
            raise UserError(exc.reason, file=file, key=exc.key, fix=exc.fix) from None
        return
    request = SessionRequest(
        prompt_id="profile",
        prompt_text="",
        cwd=Path.cwd(),
        provider=provider,
        model=values.get("model"),
        reasoning_effort=effort,
        permission_mode=values.get("permission_mode") or "default",
        allowed_tools=tuple(values.get("allowed_tools") or ()),
        system_prompt=values.get("system_prompt"),
        append_system_prompt=values.get("append_system_prompt"),
        max_turns=values.get("max_turns"),
        cli_confirmation=values.get("cli_confirmation") or "off",
    )
    try:
        get_provider(provider).validate_options(request)
    except UserError as exc:
        raise UserError(exc.reason, file=file, key=exc.key, fix=exc.fix) from None


def markdown() -> str:
    """The whole of ``docs/provider-options.md``."""
    lifted = ", ".join(f"`{key}`" for key in LIFTED_KEYS)
    lines = [_HEAD.format(lifted=lifted)]
    common = [(key, "honoured", how) for key, how in COMMON_OPTIONS.items()]
    common += [(key, "refused", why) for key, why in COMMON_REFUSED.items()]
    lines += _section("Every CLI provider", common)
    for name in CLI_PROVIDERS:
        provider = get_provider(name)
        assert isinstance(provider, CliProvider)
        maps = ", ".join(f"`{m}`" for m in option_maps(name))
        overrides = sorted(set(provider.options) & set(COMMON_REFUSED))
        note = (
            f"Maps: {maps}. Honours, unlike the table above: "
            + ", ".join(f"`{k}`" for k in overrides)
            + "."
            if overrides
            else f"Maps: {maps}."
        )
        rows = provider_rows(provider)
        lines += _section(f"{name} (`{provider.cli}`)", rows)
        lines.insert(len(lines) - len(rows) - 3, note + "\n")
    lines.append(
        "The simulated provider runs no CLI: of the maps it reads only `max_cost_usd` "
        "(the cost budget); any other key reaching it is refused (not under an explicit "
        "`--provider simulated`, which tries a packet written for another provider)."
    )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.stdout.write(markdown())
