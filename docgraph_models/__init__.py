"""The models that ship with docgraph: one packed model directory per name (``conll03``,
``ontonotes``, ...), each with the manifest that checks its files.

The weights live apart from the library's code and are installed with it by the same ``pip
install``; :mod:`docgraph.persistence.shipped` finds this package by name and a model in it by
the model's name. Their cards are ``docs/models.md``.
"""

__all__: list[str] = []
