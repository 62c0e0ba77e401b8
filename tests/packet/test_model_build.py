"""Which packet models are built at import and which on first use (``defer_build``).

Every run validates the manifest and the front matter and instantiates the
configs' defaults, so those are built at import; the rest are validated only
inside those schemas and build their own validator only when used alone
(docs/performance.md, "The runner's own overhead", round five). A deferred
model refuses and accepts the same values as before.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import BaseModel, ValidationError

from prompt_runner.packet import models, simulate

EAGER = {
    "RetryConfig",
    "RepairConfig",
    "UsageLimitConfig",
    "RecoveryConfig",
    "ExecutionConfig",
    "AgentControlConfig",
    "Manifest",
    "PromptFrontMatter",
}

PROBE = """
from pydantic import BaseModel
from prompt_runner.packet import models, simulate
built = sorted(
    name
    for mod in (models, simulate)
    for name, c in vars(mod).items()
    if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == mod.__name__
    and c.__pydantic_complete__
)
print(",".join(built))
"""


def test_only_the_models_every_run_uses_are_built_at_import() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert set(out.strip().split(",")) == EAGER


def test_every_model_is_either_eager_or_deferred() -> None:
    for mod in (models, simulate):
        for name, c in vars(mod).items():
            if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == mod.__name__:
                assert c.model_config["defer_build"] is (name not in EAGER), name


def test_a_deferred_model_validates_and_refuses_as_before() -> None:
    assert models.RepoSpec.model_validate({"path": "../app"}).path == "../app"
    with pytest.raises(ValidationError, match="path must not be empty"):
        models.RepoSpec.model_validate({"path": " "})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        simulate.SimulateWrite.model_validate({"path": "a", "text": "b", "mode": "x"})
