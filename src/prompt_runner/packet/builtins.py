"""The built-in profiles and templates, and the ``config.md`` that ``init`` writes:
available without ``init``, so a packet that names them runs on a fresh machine
(a file in the home store with the same name wins)."""

from __future__ import annotations

# Without retry.max_attempts: set, it would become the budget of every failure
# class (README, "Budgets"); the per-class defaults are what the reference writes.
_RECOVERY_TEXT = """recovery:
  resume_attempts: 2
  retry:
    base_delay_ms: {base}
    max_delay_ms: {cap}
    jitter: {jitter}
  repair:
    enabled: true
    max_attempts: 2
"""

BUILTIN_PROFILES: dict[str, str] = {
    "simulated-default": f"""---
name: "simulated-default"
description: "Built-in simulated provider: runs packets with no agent CLI."
provider: "simulated"
model: "simulated-demo"
reasoning_effort: "low"
permission_mode: "bypass"
allowed_tools: ["Read", "Edit", "Write", "Bash"]
cli_confirmation: "off"
log_mode: "compact"
log_meta: "none"
events_mode: "compact"
tool_output: "summary"
{_RECOVERY_TEXT.format(base=0, cap=0, jitter="false")}---
# simulated-default

Runs packets through the built-in simulated provider, which executes each
prompt's `simulate:` script. Use it to try a packet, test a contract, or demo
recovery without spending tokens; retries do not wait.
""",
    "codex-default": f"""---
name: "codex-default"
description: "Codex CLI for local packet work, with the model and effort confirmed."
provider: "codex"
model: "gpt-5.6-luna"
reasoning_effort: "xhigh"
permission_mode: "bypass"
allowed_tools: ["Read", "Edit", "Write", "Bash"]
cli_confirmation: "require"
log_mode: "compact"
log_meta: "none"
events_mode: "compact"
tool_output: "summary"
{_RECOVERY_TEXT.format(base=1000, cap=30000, jitter="true")}---
# codex-default

Drives the Codex CLI (`codex`). Install it with `npm install -g @openai/codex`.
`cli_confirmation: require` fails a session whose launch cannot prove the
configured model and reasoning effort ran.
""",
}
"""The profiles ``init`` writes, with the values the reference system's ``init`` writes."""

NEW_PROFILE_BASE = "codex-default"
"""The profile whose settings ``init --default-profile NAME`` copies into a new ``NAME``
(as the reference's ``init`` does)."""

DEFAULT_PROFILE = "simulated-default"
"""The profile when nothing names one: the ``default_profile`` our ``init`` writes into
``config.md`` and what ``packet new`` names without ``--profile`` or a ``config.md``
default (the reference: ``codex-default``), so no packet reaches a paid provider by
surprise."""

BUILTIN_TEMPLATES: dict[str, str] = {
    "default": """---
verify:
  files_exist: []
---
# {{name}}

## Mission

<!-- prompt_runner:placeholder mission -->
Describe the change this prompt must make.

## Targets

{{targets_bullets}}

## Done when

<!-- prompt_runner:placeholder done_when -->
List the checks that prove it, and mirror them in `verify:`.
""",
    "from-adr": """---
verify:
  files_exist: []
---
# {{name}}

## Required Reading

<!-- prompt_runner:placeholder required_reading -->
Name the ADR and the files the agent must read first (the body is all it sees).

## Decision To Implement

<!-- prompt_runner:placeholder decision -->
Quote the decision from the ADR.

## Targets

{{targets_bullets}}

## Done when

<!-- prompt_runner:placeholder done_when -->
List the checks that prove it, and mirror them in `verify:`.
""",
}

CONFIG_TEXT = """---
default_profile: "{profile}"
---
# Prompt Runner configuration

`default_profile` is the profile of every packet that names none (and what
`packet new` writes without `--profile`). Profiles live in `profiles/`,
prompt templates in `templates/`.
"""
