"""A frozen Hugging Face encoder that turns documents into one vector per word.

:class:`ContextualEncoder` tokenises a document (:class:`TokenizedDocument`), cuts it into
windows (:mod:`docgraph.data.lm_windows`), runs the transformer on them in batches and pools
the subword states into word vectors, as :class:`ContextualSettings` says; the recipe and its
sources are in :mod:`docgraph.data.contextual`. ``transformers`` is imported when an encoder is
made, never at import time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from docgraph.data.document import Document
from docgraph.data.lm_fingerprints import LanguageModelError, corpus_hash, model_dir_hash
from docgraph.data.lm_windows import Window, context_window, pool_words, split_targets

log = logging.getLogger("docgraph")

POOLINGS = ("mean", "first")
_FORMAT_VERSION = 1


def _require_transformers():
    try:
        import transformers
    except ImportError as err:
        raise ImportError(
            "contextual embeddings (--lm) need the 'transformers' package "
            "(pip install 'docgraph[lm]')"
        ) from err
    return transformers


# ---------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class ContextualSettings:
    """How words get their contextual vectors.

    Args:
        context: Subwords of document context on *each* side of a sentence (64, FLERT's value;
            ``0``: every sentence alone). Shortened when the window would exceed the maximum
            length; the context never crosses a document boundary.
        pooling: ``"mean"`` of a word's subword states or the ``"first"`` subword's state.
        layers: Mean of the last ``layers`` hidden layers (4, Devlin et al.'s feature-based
            recipe); at most all hidden states (the embedding output included) are used.
        max_length: Subwords per window, special tokens included (``None``: the smaller of the
            tokenizer's ``model_max_length`` and the model's ``max_position_embeddings``).
        batch_size: Windows per forward pass (does not change the features).
        pack: Put consecutive sentences of a document into one window of up to ``max_length``
            less ``2 * context`` target subwords (see :mod:`docgraph.data.contextual`);
            ``False``: one window per sentence, as FLERT does and as the +LM runs in
            ``benchmarks/results`` were trained (all but the ``-lm-pack-`` ones).
    """

    context: int = 64
    pooling: str = "mean"
    layers: int = 4
    max_length: int | None = None
    batch_size: int = 16
    pack: bool = False

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(f"lm_pooling must be one of {POOLINGS}, not {self.pooling!r}")
        if self.context < 0:
            raise ValueError(f"lm_context must be >= 0, got {self.context}")
        if self.layers < 1:
            raise ValueError(f"lm_layers must be >= 1, got {self.layers}")
        if self.max_length is not None and self.max_length < 4:
            raise ValueError(f"max_length must be >= 4, got {self.max_length}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    def cache_dict(self) -> dict[str, Any]:
        """The settings that change the features (all but ``batch_size``).

        ``pack`` appears only when set, so caches and model records without it keep their
        keys.
        """
        out = asdict(self)
        out.pop("batch_size")
        if not self.pack:
            out.pop("pack")
        return out


class LanguageModelOptions(Protocol):
    """The fields of a run configuration that choose a language model and its settings
    (:class:`~docgraph.config.ExperimentConfig` has them; ``--lm``, ``--lm-context``,
    ``--lm-pooling``, ``--lm-layers``, ``--lm-pack``)."""

    lm: str | None
    lm_context: int
    lm_pooling: str
    lm_layers: int
    lm_pack: bool


@dataclass
class TokenizedDocument:
    """Subwords of one document and where its words and sentences are.

    Attributes:
        ids: Subword ids without special tokens.
        word_spans: ``(first_subword, end_subword)`` per word; shortened for a word longer than
            a window.
        sentence_spans: ``(first_word, end_word)`` per sentence.
    """

    ids: list[int]
    word_spans: list[tuple[int, int]]
    sentence_spans: list[tuple[int, int]]


# ---------------------------------------------------------------------------- encoder
class ContextualEncoder:
    """A frozen Hugging Face encoder that turns documents into one vector per word.

    Args:
        model_dir: A directory loadable with ``AutoTokenizer`` (a fast tokenizer) and
            ``AutoModel``; nothing is downloaded.
        settings: Pooling, layers, context and lengths.
        device: Where the transformer runs.
        precision: ``"bf16"`` runs the transformer under :func:`torch.autocast` in bfloat16
            (tagging, :mod:`docgraph.runtime.precision`); the word vectors are float32 either
            way. Features cached for training are float32 runs.

    Shapes:
        - :meth:`encode` of documents with :math:`T` tokens in all: :math:`(T, H)` float32,
          rows in the order of the documents' tokens, :math:`H` = :attr:`dim`.

    Raises:
        ImportError: Without ``transformers``.
        LanguageModelError: If the directory is missing or not a loadable model.
    """

    def __init__(self, model_dir: str | Path, settings: ContextualSettings | None = None,
                 device: str = "cpu", precision: str = "fp32") -> None:
        transformers = _require_transformers()
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
        self.model_dir = Path(model_dir)
        self.settings = settings or ContextualSettings()
        self.device = device
        self.precision = precision
        if not self.model_dir.is_dir():
            raise LanguageModelError(f"{self.model_dir}: language-model directory not found")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                    str(self.model_dir), use_fast=True, local_files_only=True)
                self.model = transformers.AutoModel.from_pretrained(
                    str(self.model_dir), local_files_only=True)
        except (OSError, ValueError, KeyError) as err:
            raise LanguageModelError(
                f"{self.model_dir}: not a Hugging Face encoder directory with a tokenizer and "
                f"weights ({err})") from err
        if not self.tokenizer.is_fast:
            raise LanguageModelError(
                f"{self.model_dir}: needs a fast tokenizer (tokenizer.json), for word ids")
        self.model.eval().requires_grad_(False).to(device)
        limits = [int(self.tokenizer.model_max_length)]
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions:
            # RoBERTa-like models reserve padding_idx + 1 positions
            pad = getattr(self.model.config, "pad_token_id", None)
            offset = pad + 1 if self.model.config.model_type in ("roberta", "xlm-roberta",
                                                                  "camembert") and pad else 0
            limits.append(int(positions) - offset)
        self.max_length = self.settings.max_length or min(limits)
        if self.max_length > 100_000:  # tokenizer without a limit and a model without positions
            raise LanguageModelError(f"{self.model_dir}: the maximum length is unknown; set "
                                     "ContextualSettings.max_length")
        # The special tokens around one sequence ([CLS] ... [SEP], <s> ... </s>), read off an
        # encoded probe: positions without a word id.
        try:
            probe = self.tokenizer(["a"], is_split_into_words=True, add_special_tokens=True)
        except ValueError as err:  # byte-level BPE (RoBERTa, GPT-2) on pre-split words
            if "add_prefix_space" not in str(err):
                raise
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(self.model_dir), use_fast=True, local_files_only=True, add_prefix_space=True)
            probe = self.tokenizer(["a"], is_split_into_words=True, add_special_tokens=True)
        words = probe.word_ids()
        first = next(i for i, w in enumerate(words) if w is not None)
        last = max(i for i, w in enumerate(words) if w is not None)
        self.prefix_ids: list[int] = list(probe["input_ids"][:first])
        self.suffix_ids: list[int] = list(probe["input_ids"][last + 1:])
        self.prefix = len(self.prefix_ids)
        self.budget = self.max_length - self.prefix - len(self.suffix_ids)
        if self.budget < 1:
            raise LanguageModelError(f"{self.model_dir}: max_length {self.max_length} leaves "
                                     "no room for subwords")
        self._hash: str | None = None

    @classmethod
    def from_config(cls, config: LanguageModelOptions, device: str = "cpu",
                    precision: str = "fp32") -> ContextualEncoder:
        """The encoder a run configuration names: any object with the fields of
        :class:`LanguageModelOptions` (``lm``, ``lm_context``, ``lm_pooling``, ``lm_layers``,
        ``lm_pack``), such as an :class:`~docgraph.config.ExperimentConfig`, running in
        ``precision`` (see :class:`ContextualEncoder`).

        Raises:
            ValueError: If ``config.lm`` is ``None``.
        """
        if config.lm is None:
            raise ValueError("the configuration names no language model (lm is None)")
        settings = ContextualSettings(context=config.lm_context, pooling=config.lm_pooling,
                                      layers=config.lm_layers, pack=config.lm_pack)
        return cls(config.lm, settings, device, precision)

    @property
    def dim(self) -> int:
        """Size :math:`H` of the word vectors."""
        return int(self.model.config.hidden_size)

    @property
    def model_hash(self) -> str:
        """:func:`model_dir_hash` of the model directory (computed once per encoder)."""
        if self._hash is None:
            self._hash = model_dir_hash(self.model_dir)
        return self._hash

    def cache_key(self, documents: Sequence[Document]) -> str:
        """Hash of model files, settings, tokenizer version, effective length, corpus and (when
        not float32) precision."""
        transformers = _require_transformers()
        parts = {
            "format": _FORMAT_VERSION,
            "model": self.model_hash,
            "settings": self.settings.cache_dict(),
            "max_length": self.max_length,
            "transformers": transformers.__version__,
            "corpus": corpus_hash(documents),
        }
        if self.precision != "fp32":
            parts["precision"] = self.precision
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    # -- tokenisation
    def tokenize(self, doc: Document) -> TokenizedDocument:
        """Subwords of a document; a word without subwords becomes the unknown token."""
        words = doc.tokens
        per_word: list[list[int]] = [[] for _ in words]
        if words:
            enc = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False,
                                 verbose=False)
            for sub_id, w in zip(enc["input_ids"], enc.word_ids()):
                if w is not None:
                    per_word[w].append(sub_id)
        unk = self.tokenizer.unk_token_id
        ids: list[int] = []
        word_spans: list[tuple[int, int]] = []
        long_words = 0
        for pieces in per_word:
            if not pieces:
                pieces = [unk if unk is not None else 0]
            start = len(ids)
            ids.extend(pieces)
            end = len(ids)
            if end - start > self.budget:
                long_words += 1
                end = start + self.budget
            word_spans.append((start, end))
        if long_words:
            log.warning("document %r: %d word(s) with more than %d subwords keep only their "
                        "first %d", doc.doc_id, long_words, self.budget, self.budget)
        sentence_spans, w = [], 0
        for sent in doc.sentences:
            sentence_spans.append((w, w + len(sent)))
            w += len(sent)
        return TokenizedDocument(ids, word_spans, sentence_spans)

    def windows(self, doc_index: int, tokens: TokenizedDocument) -> list[Window]:
        """The windows of one document (see :mod:`docgraph.data.contextual`)."""
        out = []
        pack = self.budget - 2 * self.settings.context if self.settings.pack else 0
        for target in split_targets(tokens.sentence_spans, tokens.word_spans, self.budget, pack):
            start, end = context_window(target, len(tokens.ids), self.budget,
                                        self.settings.context)
            out.append(Window(doc_index, start, end, target[0], target[1]))
        return out

    # -- encoding
    def _forward(self, inputs: list[list[int]]):
        import torch

        width = max(len(x) for x in inputs)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.full((len(inputs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(inputs), width), dtype=torch.long)
        for row, x in enumerate(inputs):
            ids[row, :len(x)] = torch.tensor(x)
            mask[row, :len(x)] = 1
        with torch.inference_mode(), torch.autocast(torch.device(self.device).type,
                                                    dtype=torch.bfloat16,
                                                    enabled=self.precision == "bf16"):
            out = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                             output_hidden_states=True)
            hidden = out.hidden_states[-min(self.settings.layers, len(out.hidden_states)):]
            return torch.stack(hidden).float().mean(0).cpu().numpy()

    def _encode_group(self, docs: list[tuple[int, TokenizedDocument]], bar: Any = None
                      ) -> Iterator[np.ndarray]:
        """Word vectors of consecutive documents, one ``[W, H]`` array per document."""
        states = {i: np.zeros((len(t.ids), self.dim), dtype=np.float32) for i, t in docs}
        windows = [w for i, t in docs for w in self.windows(i, t)]
        windows.sort(key=lambda w: w.end - w.start)
        tokens = dict(docs)
        word_starts = {i: np.fromiter((a for a, _ in t.word_spans), dtype=np.int64,
                                      count=len(t.word_spans)) for i, t in docs}
        bs = self.settings.batch_size
        for k in range(0, len(windows), bs):
            batch = windows[k:k + bs]
            inputs = [self.prefix_ids + tokens[w.doc].ids[w.start:w.end] + self.suffix_ids
                      for w in batch]
            hidden = self._forward(inputs)
            for row, w in enumerate(batch):
                a = self.prefix + w.target_start - w.start
                states[w.doc][w.target_start:w.target_end] = hidden[row, a:a + w.target_end
                                                                    - w.target_start]
            if bar is not None:  # words whose first subword the batch encoded
                bar.update(sum(int(np.searchsorted(word_starts[w.doc], w.target_end)
                                   - np.searchsorted(word_starts[w.doc], w.target_start))
                               for w in batch))
        for i, t in docs:
            yield pool_words(states[i], t.word_spans, self.settings.pooling)

    def encode(self, documents: Sequence[Document], out: np.ndarray | None = None,
               progress: bool = False, group_subwords: int = 50_000) -> np.ndarray:
        """Word vectors of every token of ``documents``, in order.

        Documents are tokenised and encoded in groups of about ``group_subwords`` subwords
        (windows sorted by length within a group, ``batch_size`` per pass) so that memory stays
        bounded on large corpora.

        Args:
            documents: The documents (never mixed in one window).
            out: Optional ``[T, H]`` array to fill (e.g. a float16 memory map).
            progress: Show a tqdm bar over subwords on stderr.
            group_subwords: Subwords per group.

        Returns:
            ``out`` or a new float32 array ``[T, H]``.
        """
        total = sum(d.num_tokens for d in documents)
        if out is None:
            out = np.zeros((total, self.dim), dtype=np.float32)
        elif out.shape != (total, self.dim):
            raise ValueError(f"out has shape {out.shape}, expected {(total, self.dim)}")
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=total, desc=f"lm features ({self.model_dir.name})",
                       unit="word", leave=False)
        try:
            row = 0
            group: list[tuple[int, TokenizedDocument]] = []
            size = 0

            next_report = 0.1

            def flush() -> None:
                nonlocal row, group, size, next_report
                for vectors in self._encode_group(group, bar):
                    out[row:row + len(vectors)] = vectors
                    row += len(vectors)
                group, size = [], 0
                if bar is None and total and row / total >= next_report:
                    # without a terminal (a log file, a background job): a line every 10%
                    log.info("lm features (%s): %d%% of %d words", self.model_dir.name,
                             100 * row // total, total)
                    next_report = (10 * row // total + 1) / 10

            for i, doc in enumerate(documents):
                tokens = self.tokenize(doc)
                group.append((i, tokens))
                size += len(tokens.ids)
                if size >= group_subwords:
                    flush()
            if group:
                flush()
        finally:
            if bar is not None:
                bar.close()
        return out
