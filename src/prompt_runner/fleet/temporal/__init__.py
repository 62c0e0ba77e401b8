"""The Temporal engine of fleets (the ``temporal`` extra; ``docs/fleet.md``).

Imported only by the fleet commands of a fleet with ``engine: temporal`` and
by ``fleet worker``:

- :mod:`.workflows`: the fleet's workflow and each member's (deterministic
  code, run in Temporal's sandbox);
- :mod:`.member`: one attempt of a member on a worker (sync, clone, restore,
  run attached, heartbeat, steer, push the work and the state ref);
- :mod:`.activities`: that attempt as the ``prompt-runner.run-member`` activity;
- :mod:`.worker`: ``fleet worker``;
- :mod:`.client`: ``fleet submit|status|stop`` and ``control steer --fleet``.
"""
