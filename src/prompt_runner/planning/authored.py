"""The plan's own checks, for the authoring writers that write what a plan reads later.

``profile new`` (:func:`~prompt_runner.packet.profiles.new_profile`) and
``packet new`` (:func:`~prompt_runner.packet.scaffold.new_packet`) refuse,
before anything is written, a value the plan would refuse: an option the
provider cannot honour, a ``recovery.failover`` the plan cannot build, a
profile ``prompt_template`` that names no template. Those writers sit in the
packet layer, below planning, so they cannot import these checks; the library
(``api_authoring``) and the CLI hand them :data:`PLAN_CHECKS` as ``judge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..packet.models import RecoveryConfig
from ..packet.templates import check_profile_template
from ..packet.validation import validate_model
from .provider_options import check_authored_options
from .recovery import check_class_names, check_failover_shape, failover_levels


class PlanChecks:
    """The checks (see the module doc); each raises ``UserError`` naming ``file``/``where``."""

    def options(self, data: Mapping[str, Any], *, provider: str | None, file: str) -> None:
        """Refuse plan keys in ``data`` that ``provider`` (``None``: any) refuses
        (:func:`~prompt_runner.planning.provider_options.check_authored_options`)."""
        check_authored_options(data, provider=provider, file=file)

    def recovery(self, block: Mapping[str, Any], where: str) -> None:
        """Refuse a ``recovery`` block the plan refuses: a ``failover`` that is not a
        list of mappings, names an unknown provider or key, or holds a value of the
        wrong type; a ``retry.class_attempts`` key naming no failure class."""
        check_failover_shape(block, where)
        recovery = validate_model(RecoveryConfig, dict(block), file=where, prefix="recovery")
        check_class_names(recovery, where)
        failover_levels(recovery, where)

    def template(self, name: str, where: str) -> None:
        """Refuse a profile ``prompt_template`` naming no home or built-in template."""
        check_profile_template(name, where)


PLAN_CHECKS = PlanChecks()
