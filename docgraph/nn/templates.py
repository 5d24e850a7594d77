"""PyG's generated ``propagate`` modules kept in memory instead of in ``$TMPDIR``.

:class:`~torch_geometric.nn.conv.MessagePassing` renders a ``propagate`` (and
``edge_updater``) module from a Jinja template for each layer class and imports it from a file
it writes with ``NamedTemporaryFile(delete=False)``: every process that builds a layer leaves
one in the temporary directory, never removed. :func:`templates_in_memory` has the same
modules rendered and executed in memory instead; their source lines are registered with
:mod:`linecache` under a name of their own, so :func:`inspect.getsource` and TorchScript read
them as they read a file.
"""

from __future__ import annotations

import linecache
import os.path as osp
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch_geometric.nn.conv.message_passing as message_passing

__all__ = ["module_in_memory", "templates_in_memory"]


def module_in_memory(module_name: str, template_path: str, tmp_dirname: str = "",
                     **kwargs: Any) -> types.ModuleType:
    """The module of a PyG template rendered with ``kwargs``, executed in memory (the
    signature of :func:`torch_geometric.template.module_from_template`; ``tmp_dirname`` is
    not used)."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    from jinja2 import Environment, FileSystemLoader

    env = Environment(loader=FileSystemLoader(osp.dirname(template_path)))
    source = env.get_template(osp.basename(template_path)).render(**kwargs)
    filename = f"<docgraph: {module_name}>"
    # an entry without a modification time is never dropped by linecache.checkcache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(module_name)
    module.__file__ = filename
    sys.modules[module_name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


@contextmanager
def templates_in_memory() -> Iterator[None]:
    """Within the block, :class:`~torch_geometric.nn.conv.MessagePassing` renders its
    templates with :func:`module_in_memory` (no file written)."""
    original = message_passing.module_from_template
    message_passing.module_from_template = module_in_memory
    try:
        yield
    finally:
        message_passing.module_from_template = original
