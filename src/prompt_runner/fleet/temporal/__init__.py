"""The Temporal engine of fleets (the ``temporal`` extra): being built (``docs/fleet.md``)."""
