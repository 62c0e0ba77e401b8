"""The checklist: a human view of a contract (``*.prompt.checklist.md``).

Labels come from each clause's registered labeler. Clauses are listed in
alphabetical order of their names, which reproduces the checklist files the
reference system writes (e.g. ``changed path allowed``, then ``contains``, then
``file exists``). The verifier report, not this file, decides completion.
"""

from __future__ import annotations

from prompt_runner.render.printable import printable
from prompt_runner.verifier import registry
from prompt_runner.verifier.model import Contract

NO_ITEMS = (
    "_No verification items yet: add a `verify:` block to the prompt, "
    "then run `checklist sync` again._"
)


def checklist_items(contract: Contract, *, default_repo: str | None) -> list[str]:
    """One human label per contract entry, e.g. ``"file exists: hello.txt"``.

    Args:
        contract: the parsed contract.
        default_repo: the prompt's first target; entries naming another repo
            are labelled ``repo:path``.
    """
    labels: list[str] = []
    for name in sorted(contract.clauses()):
        spec = registry.get(name)
        if spec is None:
            continue
        labels.extend(spec.label(entry, default_repo) for entry in contract.entries[name])
    return labels


def render_checklist(
    prompt_id: str, prompt_name: str, contract: Contract, *, default_repo: str | None
) -> str:
    """The full checklist markdown of one prompt (ends with a newline).

    A prompt without items gets a checklist that says so (the caller warns).
    Every value is written on its line (:func:`markdown_line`): a newline in a
    contract path or a prompt name cannot start an item of its own.
    """
    items = checklist_items(contract, default_repo=default_repo)
    body = "\n".join(f"- [ ] {markdown_line(label)}" for label in items) if items else NO_ITEMS
    return (
        f"# Checklist {markdown_line(prompt_id)}: {markdown_line(prompt_name)}\n\n"
        "Generated from the prompt verification contract.\n\n"
        "## Verification Items\n\n"
        f"{body}\n"
    )


def markdown_line(value: str) -> str:
    """``value`` fit for one markdown line: control characters (newlines too) escaped."""
    text = printable(value).replace("\n", "\\n").replace("\t", "\\t")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
