"""Pausing the cyclic garbage collector while a packet is read or resolved.

Loading 5,000 prompt files allocates millions of short-lived objects (YAML
nodes, dicts, models) that hold no reference cycles; the collector, triggered
by allocation counts, walked them again and again -- about a third of
``load_packet``'s time. Reference counting still frees everything as usual;
only the cycle search waits until the block ends (and runs then, as its
counters say).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Within the block the cyclic collector does not run (nested blocks are fine)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
