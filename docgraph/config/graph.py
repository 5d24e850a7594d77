"""How documents become graphs (:mod:`docgraph.graph`); torch-free."""

from __future__ import annotations

from dataclasses import dataclass, replace

from docgraph.config.fields import check_config, integer, strings, switch

__all__ = ["GraphConfig"]


@dataclass
class GraphConfig:
    """How documents become graphs.

    Args:
        max_neighbours: ``p``, the most neighbours a node receives messages from (sampled
            uniformly without replacement); ``0`` or ``None`` keeps all of them.
        seed: Seed of the neighbour sampling in :func:`~docgraph.graph.documents_to_graphs`.
            ``None`` (the default) means "the run's seed": :meth:`resolve` (called by
            :meth:`docgraph.config.ExperimentConfig.graph_config`) fills it in, so runs with
            different seeds sample different edges; an explicit value pins the sampling across
            runs. A graph built from an unresolved ``None`` uses ``0``.
        lowercase: Compare words case-insensitively when connecting tokens (the paper's choice).
        skip_tokens: Words (exact or lowercased form) that get no edges, e.g.
            :data:`docgraph.graph.PUNCTUATION`; empty by default, as in the paper.
        max_word_len: Characters kept per token in ``chars``.
        max_doc_tokens: Documents longer than this are split into chunks of whole sentences,
            losing the edges between chunks; ``None`` never splits.
    """

    max_neighbours: int | None = integer(
        5, low=0, optional=True, flag="--neighbours",
        help="neighbours p sampled per token (0 keeps all)")
    seed: int | None = integer(None, low=0, optional=True, flag="--graph-seed",
                               help="seed of the neighbour sampling (default: the run's)")
    lowercase: bool = switch(True, help="connect words case-insensitively")
    skip_tokens: frozenset[str] = strings(help="words that get no edges")
    max_word_len: int = integer(20, low=1, help="characters kept per token")
    max_doc_tokens: int | None = integer(
        None, low=1, optional=True, flag="--max-doc-tokens",
        help="split longer documents into chunks of whole sentences")

    def __post_init__(self) -> None:
        check_config(self, "graph")
        self.skip_tokens = frozenset(self.skip_tokens)

    def resolve(self, run_seed: int) -> GraphConfig:
        """A copy whose ``seed`` is ``run_seed`` when it is ``None`` (unchanged otherwise).

        Args:
            run_seed: The seed of the run (:attr:`docgraph.config.ExperimentConfig.seed`).

        Returns:
            A new :class:`GraphConfig` with an integer ``seed``.
        """
        return replace(self, seed=run_seed if self.seed is None else self.seed)
