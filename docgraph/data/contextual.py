"""Contextual word features from a frozen Hugging Face encoder (BERT, RoBERTa, MiniLM, ...).

The paper ("Network Training") takes "the output hidden states of BERT ... as additional
contextualized embeddings, which are combined with other three types of word representations".
This module computes one vector per corpus token; :func:`docgraph.graph.attach_token_features`
puts them on the graphs and :class:`~docgraph.model.GCDoc` concatenates them at its embedding
layer. It knows files, model directories and strings; the transformer is only run, never trained.

Recipe (all choices documented in :class:`ContextualSettings`):

* **Feature-based BERT** (Devlin et al. 2019, Sec. 5.3): the model is frozen and in eval mode;
  the state of a subword is the mean of the last ``layers`` (4) hidden layers.
* **Subword pooling**: a word's vector is the mean of its subwords' states (``"mean"``) or the
  state of its first subword (``"first"``). A word the tokenizer maps to no subword at all (a
  lone control or zero-width character) is read as the unknown token.
* **Document context** (FLERT, Schweter and Akbik 2020): every sentence is encoded together
  with up to ``context`` subwords to its left and ``context`` to its right, taken from the
  neighbouring sentences of the *same* document (never of another one) and shortened to fit the
  model's maximum length; only the sentence's own subwords give features. ``context=0`` encodes
  every sentence alone.
* **Packed windows** (opt-in, ``pack``): consecutive sentences of a document share one window
  of up to the maximum length, with ``context`` subwords of context only at its two ends. Every
  sentence still sees at least ``context`` subwords on each side (where its document has them),
  its pack-mates more; a document costs a few long windows instead of one window per sentence
  that repeats ``2 * context`` subwords of context, several times fewer subwords to encode.
* **Long sentences** whose subwords do not fit the model's maximum length are split into
  windows of whole words, each encoded with the rest of the document as context; nothing is
  truncated, except a single word with more subwords than a whole window, which keeps its first
  ones and is reported with a warning.

Features of a corpus split are cached (:func:`cached_features`) as a float16 ``.npy`` file,
read back memory-mapped, whose name holds a hash of the model directory's files, the settings
and the corpus text; any change of them is a cache miss.

``transformers`` is imported lazily: the rest of ``docgraph`` works without it
(``pip install 'docgraph[lm]'``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from docgraph.data.document import Document
from docgraph.persistence.atomic import atomic_write, atomic_write_json

if TYPE_CHECKING:
    from docgraph.config import ExperimentConfig

log = logging.getLogger("docgraph")

POOLINGS = ("mean", "first")
CACHE_ENV_VAR = "DOCGRAPH_CACHE_DIR"
_FORMAT_VERSION = 1
_HASH_CHUNK = 1 << 20


class LanguageModelError(ValueError):
    """A language-model directory is missing, unreadable or not the one a model needs."""


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
            less ``2 * context`` target subwords (see the module docstring); ``False``: one
            window per sentence, as FLERT does and as the +LM runs in ``benchmarks/results``
            were trained (all but the ``-lm-pack-`` ones).
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

        ``pack`` appears only when set, so caches and model records written before it existed
        keep their keys.
        """
        out = asdict(self)
        out.pop("batch_size")
        if not self.pack:
            out.pop("pack")
        return out


# ---------------------------------------------------------------------------- hashing
def model_dir_hash(path: str | Path) -> str:
    """SHA-256 over the relative names and contents of every file of a model directory.

    Raises:
        LanguageModelError: If ``path`` is not a directory.
    """
    root = Path(path)
    if not root.is_dir():
        raise LanguageModelError(f"{root}: language-model directory not found")
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def corpus_hash(documents: Sequence[Document]) -> str:
    """SHA-256 of the words and the sentence and document boundaries (tags and ids ignored)."""
    digest = hashlib.sha256()
    for doc in documents:
        for sent in doc.sentences:
            digest.update("\x1f".join(sent.tokens).encode("utf-8") + b"\x1e")
        digest.update(b"\x1d")
    return digest.hexdigest()


# ---------------------------------------------------------------------------- windows
@dataclass(frozen=True)
class Window:
    """One transformer input: ``[left context | target | right context]`` of one document.

    ``start``/``end`` delimit the whole window and ``target_start``/``target_end`` the subwords
    that take their features from it, all as positions in the document's subword sequence.
    """

    doc: int
    start: int
    end: int
    target_start: int
    target_end: int


def split_targets(sentence_spans: Sequence[tuple[int, int]], word_spans: Sequence[tuple[int, int]],
                  budget: int, pack: int = 0) -> list[tuple[int, int]]:
    """Subword ranges to encode: one per sentence, long sentences split at word boundaries.

    Args:
        sentence_spans: ``(first_word, end_word)`` of every sentence.
        word_spans: ``(first_subword, end_subword)`` of every word of the document.
        budget: Most subwords of one window without special tokens.
        pack: When positive, consecutive ranges are merged while the merged range has at most
            ``pack`` subwords (sentences sharing a window).

    Returns:
        ``(start, end)`` subword ranges covering every subword exactly once, except the subwords
        past ``budget`` of a single word longer than ``budget`` (the caller warns about those).
    """
    targets: list[tuple[int, int]] = []
    for first, end in sentence_spans:
        start: int | None = None
        stop = 0
        for w in range(first, end):
            w_start, w_end = word_spans[w]
            w_end = min(w_end, w_start + budget)
            if start is not None and w_end - start > budget:  # close the window before word w
                targets.append((start, stop))
                start = None
            if start is None:
                start = w_start
            stop = w_end
        if start is not None:
            targets.append((start, stop))
    return _merge_targets(targets, min(pack, budget)) if pack > 0 else targets


def _merge_targets(targets: list[tuple[int, int]], pack: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in targets:
        if merged and merged[-1][1] == a and b - merged[-1][0] <= pack:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def context_window(target: tuple[int, int], num_subwords: int, budget: int, context: int
                   ) -> tuple[int, int]:
    """The window ``(start, end)`` around ``target``: up to ``context`` subwords each side.

    When both sides do not fit ``budget``, each gets half of the room and a side that needs less
    leaves the rest to the other.
    """
    a, b = target
    room = budget - (b - a)
    want_left, want_right = min(context, a), min(context, num_subwords - b)
    if want_left + want_right > room:
        left = min(want_left, max(room // 2, room - want_right))
        right = min(want_right, room - left)
    else:
        left, right = want_left, want_right
    return a - left, b + right


def pool_words(states: np.ndarray, word_spans: Sequence[tuple[int, int]], pooling: str
               ) -> np.ndarray:
    """Word vectors ``[W, H]`` from subword states ``[n, H]`` (mean or first subword).

    Args:
        states: Subword states of one document.
        word_spans: ``(first_subword, end_subword)`` per word, contiguous and non-empty.
        pooling: ``"mean"`` or ``"first"``.
    """
    if not word_spans:
        return np.zeros((0, states.shape[1]), dtype=states.dtype)
    starts = np.fromiter((s for s, _ in word_spans), dtype=np.int64, count=len(word_spans))
    if pooling == "first":
        return states[starts]
    ends = np.fromiter((e for _, e in word_spans), dtype=np.int64, count=len(word_spans))
    sums = np.add.reduceat(states, starts, axis=0)
    # reduceat sums up to the next start; words truncated to a window end earlier
    cut = np.flatnonzero(ends[:-1] < starts[1:])
    for w in cut:
        sums[w] = states[starts[w]:ends[w]].sum(axis=0)
    if len(word_spans) and ends[-1] < states.shape[0]:
        sums[-1] = states[starts[-1]:ends[-1]].sum(axis=0)
    return sums / (ends - starts)[:, None].astype(states.dtype)


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

    Shapes:
        - :meth:`encode` of documents with :math:`T` tokens in all: :math:`(T, H)` float32,
          rows in the order of the documents' tokens, :math:`H` = :attr:`dim`.

    Raises:
        ImportError: Without ``transformers``.
        LanguageModelError: If the directory is missing or not a loadable model.
    """

    def __init__(self, model_dir: str | Path, settings: ContextualSettings | None = None,
                 device: str = "cpu") -> None:
        transformers = _require_transformers()
        self.model_dir = Path(model_dir)
        self.settings = settings or ContextualSettings()
        self.device = device
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
    def from_config(cls, config: ExperimentConfig, device: str = "cpu") -> ContextualEncoder:
        """The encoder of an :class:`~docgraph.config.ExperimentConfig` (``lm``, ``lm_context``,
        ``lm_pooling``, ``lm_layers``, ``lm_pack``)."""
        if config.lm is None:
            raise ValueError("the configuration names no language model (lm is None)")
        settings = ContextualSettings(context=config.lm_context, pooling=config.lm_pooling,
                                      layers=config.lm_layers, pack=config.lm_pack)
        return cls(config.lm, settings, device)

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
        """Hash of model files, settings, tokenizer version, effective length and corpus."""
        transformers = _require_transformers()
        parts = {
            "format": _FORMAT_VERSION,
            "model": self.model_hash,
            "settings": self.settings.cache_dict(),
            "max_length": self.max_length,
            "transformers": transformers.__version__,
            "corpus": corpus_hash(documents),
        }
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
        """The windows of one document (see the module docstring)."""
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
        with torch.inference_mode():
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


# ---------------------------------------------------------------------------- cache
def default_cache_dir() -> Path:
    """``$DOCGRAPH_CACHE_DIR/lm`` when set, else ``~/.cache/docgraph/lm``."""
    root = os.environ.get(CACHE_ENV_VAR)
    return (Path(root) if root else Path.home() / ".cache" / "docgraph") / "lm"


def cache_path(cache_dir: str | Path, name: str, key: str) -> Path:
    """The ``.npy`` file of split ``name`` under ``key``."""
    return Path(cache_dir) / f"{name}-{key[:24]}.npy"


def cached_features(documents: Sequence[Document], encoder: ContextualEncoder,
                    cache_dir: str | Path | None = None, name: str = "split",
                    progress: bool = False) -> np.ndarray:
    """Features of a corpus split, computed once and read back memory-mapped.

    The file ``<cache_dir>/<name>-<key>.npy`` (float16 ``[T, H]``) and a JSON sidecar describing
    it are written atomically; ``key`` is :meth:`ContextualEncoder.cache_key`, so a change of
    the model files, the settings or the words of the corpus makes a new file.

    Args:
        documents: The split (whole documents, before any chunking).
        encoder: The encoder.
        cache_dir: Cache directory (:func:`default_cache_dir` when ``None``).
        name: Prefix of the file, e.g. ``"conll03-train"``.
        progress: Show a progress bar while computing.

    Returns:
        A copy-on-write memory map ``[T, H]`` float16.
    """
    from numpy.lib.format import open_memmap

    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = encoder.cache_key(documents)
    path = cache_path(cache_dir, name, key)
    total = sum(d.num_tokens for d in documents)
    expected = (total, encoder.dim)
    if path.is_file():
        try:
            features = np.load(path, mmap_mode="c")
            if features.shape == expected and features.dtype == np.float16:
                log.info("lm features: reusing the cached %s (%d words of %s)", path, total,
                         name)
                return features
            log.warning("%s: shape %s, expected %s; recomputing", path, features.shape, expected)
        except (OSError, ValueError) as err:
            log.warning("%s: unreadable cache file (%s); recomputing", path, err)

    def write(tmp: str) -> None:
        array = open_memmap(tmp, mode="w+", dtype=np.float16, shape=expected)
        encoder.encode(documents, out=array, progress=progress)
        array.flush()
        del array

    atomic_write(path, write)
    atomic_write_json(path.with_suffix(".json"), {
        "name": name, "key": key, "shape": list(expected), "dtype": "float16",
        "model_dir": str(encoder.model_dir.resolve()), "model_hash": encoder.model_hash,
        "settings": encoder.settings.cache_dict(), "max_length": encoder.max_length,
        "documents": len(documents),
    })
    size = path.stat().st_size
    log.info("lm features: wrote %s (%d tokens x %d, %.1f MiB)", path, total, encoder.dim,
             size / 2**20)
    return np.load(path, mmap_mode="c")


# ---------------------------------------------------------------------------- model records
def lm_record(encoder: ContextualEncoder) -> dict[str, Any]:
    """What a trained model directory records about its language model (``lm.json``)."""
    return {"path": str(encoder.model_dir.resolve()), "hash": encoder.model_hash,
            "dim": encoder.dim, "settings": encoder.settings.cache_dict(),
            "max_length": encoder.max_length}


def check_lm_record(record: dict[str, Any], path: str | Path | None = None,
                    where: str | Path = "model directory") -> Path:
    """Check that the language model a model directory was trained with is available.

    Args:
        record: The content of ``lm.json`` (:func:`lm_record`).
        path: Use this language-model directory instead of the recorded one (moved files).
        where: The model directory, for the messages.

    Returns:
        The language-model directory to load.

    Raises:
        LanguageModelError: If the directory is missing or its files differ from the recorded
            hash.
    """
    lm_dir = Path(path) if path is not None else Path(record["path"])
    if not lm_dir.is_dir():
        raise LanguageModelError(
            f"{where}: needs the language model {lm_dir} (sha256 {record['hash'][:12]}), which "
            "is missing; pass its new location (--lm PATH, or Tagger.load(..., lm=PATH))")
    actual = model_dir_hash(lm_dir)
    if actual != record["hash"]:
        raise LanguageModelError(
            f"{where}: was trained with the language model {record['path']} (sha256 "
            f"{record['hash'][:12]}), but the files in {lm_dir} differ (sha256 {actual[:12]})")
    return lm_dir
