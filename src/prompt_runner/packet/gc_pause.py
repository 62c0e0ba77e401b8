"""Pausing the cyclic garbage collector while a packet is read or resolved.

Loading 5,000 prompt files allocates millions of objects (YAML nodes, dicts,
models) that hold no reference cycles; the collector, triggered by allocation
counts, walked them again and again as they aged -- about a third of
``load_packet``'s time. Within a :func:`gc_paused` block it does not run;
reference counting still frees everything as usual. When the outermost block
ends, what is tracked moves to the oldest generation at once (``gc.freeze()``
then ``gc.unfreeze()``: two list splices), instead of the first collection
after the block walking all of it: it is looked at again only by a full
collection, whenever the collector's own counters call for one. Nothing is
kept from being collected, only collected later.
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
            gc.freeze()  # every tracked object to the permanent generation, unscanned,
            gc.unfreeze()  # and back into the oldest one
            gc.enable()
