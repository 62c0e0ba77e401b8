"""The message table of ``packet lint``: every finding kind and what it says.

Each message states what the construct silently does, then ``Fix:``. The first
14 kinds are errors, the rest warnings (:data:`ERROR_KINDS`, :data:`WARNING_KINDS`).
"""

from __future__ import annotations

ERROR = "error"
WARNING = "warning"

_FIX_EXEC = (
    "use `completion: verifier_owned` with `incomplete: fail` (the default), or "
    "`completion: agent_owned` with `incomplete: repeat`"
)
MESSAGES: dict[str, str] = {
    # errors (SPEC 9)
    "prompt_id_filename_mismatch": (
        "prompt id {id!r} does not match the filename numeric prefix {prefix!r}: it runs in "
        "position {prefix} while checklists, logs, status and `run PACKET {id}` call it {id}. "
        "Fix: make the id and the prefix the same (rename the file or change `id:`)."
    ),
    "prompt_filename_without_prefix": (
        "{name} has no numeric prefix, so it runs after every numbered prompt (in name order "
        "among the unnumbered ones), whatever its id says. Fix: rename it NN_name.prompt.md."
    ),
    "duplicate_prompt_id": (
        "prompt id {id!r} is used by both {other} and {path}: progress, state and "
        "`run PACKET {id}` are keyed by id, so the two overwrite each other's history. "
        "Fix: give every prompt a unique id."
    ),
    "unknown_target_repo": (
        "target {target!r} names no repo of the manifest, so it gives the session no working "
        "directory and the verifier no scope. Fix: use one of {known}, or declare it with "
        "`prompt-runner packet add-repo {target} PATH --packet PACKET`."
    ),
    "unknown_verify_repo": (
        "`{key}` names repo {repo!r}, which the manifest does not declare ({clause} entry): it "
        "resolves against nothing and `run` refuses to load it. Fix: use one of {known}."
    ),
    "repo_group_in_targets": (
        "target {target!r} is a legacy repo-group reference: packets have no repo groups, so it "
        "expands to nothing and contributes no working directory or verifier scope. Fix: list "
        "the repos by name ({known})."
    ),
    "unknown_verify_clause": (
        "`{key}` is not a verifier clause: it reads like a gate but is never evaluated (and "
        "`run` refuses to load it). Fix: {hint}use one of: {known}."
    ),
    "invalid_execution_policy": (
        "{problem}; the packet does not load with this policy. Fix: " + _FIX_EXEC + "."
    ),
    "agent_owned_verify_commands": (
        "agent-owned completion checks only structural evidence, so `verify.commands` would "
        "never run (and `run` refuses it). Fix: assert the work's evidence with file clauses "
        "(`files_exist`, `contains`, `doc` ...), or use verifier-owned completion."
    ),
    "agent_owned_structural_evidence_required": (
        "under agent-owned completion the runner checks only structural clauses, and this "
        "prompt has no prompt-specific evidence (`repos_clean` and `changed_paths_only` say "
        "nothing about this prompt's work), so any session would count as complete. Fix: add "
        "evidence such as `files_exist`, `contains` or `doc` for what this prompt produces."
    ),
    # files that do not load at all
    "invalid_manifest": "{error} `run` refuses a manifest that does not validate.",
    "invalid_prompt": "{error} `run` refuses a prompt that does not validate.",
    "invalid_contract": "{error} The prompt does not load until this is fixed.",
    "packet_load_error": "the packet does not load, so `run` would refuse it: {error}",
    # warnings (SPEC 9)
    "legacy_shell_command": (
        "`{key}` ({command!r}) is a legacy shell string: it runs through `sh -c`, so quoting, "
        "globbing and the shell decide what actually executes. Fix: write "
        "`{{exec: PROGRAM, args: [...], timeout_ms: N}}`."
    ),
    "verify_command_without_timeout": (
        "`{key}` ({command!r}) has no timeout of its own: it gets the default {default} ms, so "
        "a slow but healthy check halts the run as verifier_timeout and a hung one stalls it "
        "that long. Fix: set `timeout_ms` to the command's real deadline."
    ),
    "prompt_without_verify": (
        "the prompt has no verification items, so completion falls back to the provider's own "
        "claim of success: any session that returns normally counts as done. Fix: add a "
        "`verify:` contract that proves the work (e.g. `contains:` and a `commands:` entry)."
    ),
    "contract_without_commands": (
        "the contract only checks that paths exist, changed or lack a pattern ({clauses}), "
        "which an empty file satisfies, so it cannot tell finished work from touched work. "
        "Fix: add a `commands:` "
        "entry, or assert content with `contains`, `matches` or `doc`."
    ),
    "changed_paths_only_vacuous": (
        "`changed_paths_only` reads `git status --porcelain`, so it only sees work that is "
        "still uncommitted (judged against what was uncommitted when the prompt started): "
        "that is correct when the runner owns the commit (the CLI default), or when nobody "
        "commits (`--no-commit`, `committer: noop`), but it passes vacuously when the session "
        "commits its own work (an agent told to commit, usually run with `--no-commit` or "
        "`committer: noop`). Fix: keep it unless the agent commits; then use `repos_clean`."
    ),
    "repos_clean_before_commit": (
        "`repos_clean` asks that {repos} be fully committed, but the verifier runs before the "
        "runner's git committer (`committer: git`, the CLI default) commits this prompt's "
        "work: a prompt that changes files in {repos} fails it (`uncommitted changes: ...`) "
        "and spends every repair on work that is already done. It fits only prompts whose "
        "agent commits its own work (usually run with `--no-commit` or `committer: noop`). "
        "Fix: drop `repos_clean` and let the runner commit (bound the prompt's changes with "
        "`changed_paths_only`, assert them with `contains` or `commands`); or, if the agent is "
        "to commit, say so in the body and set `committer: noop` in the manifest (or run with "
        "`--no-commit`)."
    ),
    "inert_front_matter_key": (
        "`{key}` is parsed but never sent to the provider: only the markdown body after the "
        "front matter reaches the model, so the agent never sees these files. Fix: name them "
        "in the body (e.g. a `## Required Reading` section) and remove `{key}`."
    ),
    "placeholder_marker": (
        "the body still carries scaffold placeholder marker(s) {markers}: the template's "
        "instructions would be sent to the model as the task. Fix: write those sections and "
        "delete their `<!-- prompt_runner:placeholder ... -->` lines."
    ),
    "empty_prompt_body": (
        "the body after the front matter is empty or only whitespace, so the session is sent "
        "no task and the agent can only guess. Fix: write the task below the front matter."
    ),
    "ignored_prompt_file": (
        "this file sits in prompts/ but is not loaded: prompt files must end exactly in "
        "`.prompt.md`, so the run silently has one prompt less. Fix: rename it to "
        "`NN_name.prompt.md`, or move it out of prompts/."
    ),
    "output_ignored": (
        "the contract names {path} as an output, but repo {repo!r} ignores it ({source}): the "
        "runner's git committer never commits an ignored file, so the prompt completes "
        "(`no_changes`) with its work left uncommitted. Fix: remove the pattern from the "
        "ignore file or add a `!{path}` exception, or name a path git tracks (or run with "
        "`--no-commit` if nothing is to be committed)."
    ),
    "output_not_targeted": (
        "the contract names {path} in repo {repo!r} as an output, but the prompt's targets do "
        "not include {repo!r}: the runner commits only in its targets, so if the prompt writes "
        "that file it completes with the file left uncommitted. Fix: add {repo!r} to the "
        "prompt's `targets` if the prompt writes it (a file the prompt only reads needs nothing)."
    ),
    "regex_nested_quantifier": (
        "`{key}` (/{pattern}/) repeats a part that itself repeats (nested quantifiers such as "
        "`(a+)+`): on text that almost matches it can backtrack without end, and the verifier "
        "then stops it at its deadline as verifier_timeout, which halts the run. Fix: repeat "
        "one thing once (`a+` instead of `(a+)+`), or make the inner repeat possessive "
        "(`(a++)+`) or atomic (`(?>a+)+`)."
    ),
    "depends_on_later_phase": (
        "prompt {id} (phase {phase}) depends on {dep} (phase {dep_phase}), which comes later: "
        "dependencies run first, so {dep} is pulled ahead of its phase and runs before "
        "{id}, and `--phase {phase}` leaves {id} blocked until {dep} has completed. Fix: move "
        "{dep} into phase {phase} (and before {id}), or drop the dependency."
    ),
    "profile_not_found": (
        "the manifest's `profile: {name}` names no profile here (none in the profile store, "
        "none built in): the packet runs on its own settings and the profile's are silently "
        "not applied, as in the reference system. Fix: create it with `prompt-runner profile "
        "new {name}`, fix the name (`prompt-runner profile list`), or drop `profile:`."
    ),
    "hidden_prompt_file": (
        "{name} is a hidden file (its name starts with `.`), so it is not loaded: every "
        "command ignores the dot-files in prompts/ (editors' lock files, macOS's `._` "
        "files), and the run has one prompt less. Fix: rename it to {shown} to run it, or "
        "move it out of prompts/."
    ),
}
"""Every finding kind and its message template."""

ERROR_KINDS = tuple(list(MESSAGES)[:14])
WARNING_KINDS = tuple(list(MESSAGES)[14:])
