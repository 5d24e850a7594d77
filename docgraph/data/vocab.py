"""String <-> id vocabularies for words, characters and labels.

Word vocabulary policy
----------------------
:meth:`Vocabularies.build` keys the word vocabulary by the *exact* word form. It holds every word
of the training documents and, optionally, ``extra_words``: the standard practice is to pass the
dev/test words that have a pretrained vector (see
:func:`docgraph.data.embeddings.words_with_vectors`) so that the pretrained vectors of words
unseen in training stay usable; dev/test words without a vector are never added, so no
information about them leaks into the model. The pretrained vector of a vocabulary entry is
looked up with :func:`lookup_keys`: exact form, then lowercase, then lowercase with every digit
replaced by ``"0"``.

Labels are BIOES strings (the IOB2 tags of the documents converted per sentence), ``"O"`` at
index 0, no padding or unknown entries.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.data.document import Document
from docgraph.data.tags import entity_type, iob2_to_bioes
from docgraph.runtime.integrity import DamagedFileError, read_json_file, write_sealed_json

PAD = "<pad>"
UNK = "<unk>"
VOCAB_FILE = "vocab.json"

_FORMAT_VOCAB = "docgraph-vocab"
_FORMAT_BUNDLE = "docgraph-vocabularies"
_VERSION = 1
_DIGIT = re.compile(r"\d")
_BIOES_ORDER = {"B": 0, "I": 1, "E": 2, "S": 3}


class VocabFileError(DocgraphError, ValueError):
    """A vocabulary file is missing required fields or is not valid JSON."""


def normalise_digits(word: str) -> str:
    """Replace every digit of ``word`` with ``"0"`` (``"1996-08-22"`` -> ``"0000-00-00"``)."""
    return _DIGIT.sub("0", word)


def lookup_keys(word: str) -> tuple[str, str, str]:
    """Keys under which the pretrained vector of ``word`` is searched, in order.

    Args:
        word: The exact word form.

    Returns:
        ``(exact, lowercase, lowercase with digits normalised)``.
    """
    lower = word.lower()
    return word, lower, normalise_digits(lower)


class Vocab:
    """A bijection between strings and consecutive integer ids.

    Args:
        tokens: The entries in id order (no duplicates).
        pad_token: The padding entry, if any (must be one of ``tokens``).
        unk_token: The entry unknown strings map to, if any (must be one of ``tokens``).
    """

    def __init__(
        self,
        tokens: Iterable[str],
        pad_token: str | None = None,
        unk_token: str | None = None,
    ) -> None:
        self._itos: list[str] = list(tokens)
        self._stoi: dict[str, int] = {t: i for i, t in enumerate(self._itos)}
        if len(self._stoi) != len(self._itos):
            dup = [t for t, c in Counter(self._itos).items() if c > 1]
            raise ValueError(f"duplicate vocabulary entries: {dup[:5]}")
        for name, tok in (("pad_token", pad_token), ("unk_token", unk_token)):
            if tok is not None and tok not in self._stoi:
                raise ValueError(f"{name} {tok!r} is not a vocabulary entry")
        self.pad_token = pad_token
        self.unk_token = unk_token

    @classmethod
    def build(
        cls,
        counter_or_iterable: Mapping[str, int] | Iterable[str],
        specials: Sequence[str] = (PAD, UNK),
        min_freq: int = 1,
    ) -> Vocab:
        """Build a vocabulary from counts or from a stream of tokens.

        Specials come first, in the given order; the other entries follow by decreasing
        frequency, ties broken by the string, so the result is deterministic. ``"<pad>"`` and
        ``"<unk>"`` among ``specials`` become the padding and unknown entries.

        Args:
            counter_or_iterable: A ``{token: count}`` mapping (e.g. a ``Counter``) or tokens.
            specials: Entries placed first.
            min_freq: Entries seen fewer times are dropped.

        Returns:
            The vocabulary.
        """
        if isinstance(counter_or_iterable, Mapping):
            counts = Counter(dict(counter_or_iterable))
        else:
            counts = Counter(counter_or_iterable)
        special_set = set(specials)
        rest = sorted(
            (t for t, c in counts.items() if c >= min_freq and t not in special_set),
            key=lambda t: (-counts[t], t),
        )
        return cls(
            [*specials, *rest],
            pad_token=PAD if PAD in special_set else None,
            unk_token=UNK if UNK in special_set else None,
        )

    def __len__(self) -> int:
        return len(self._itos)

    def __contains__(self, token: object) -> bool:
        return token in self._stoi

    def __iter__(self):
        return iter(self._itos)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return (self._itos, self.pad_token, self.unk_token) == (
            other._itos,
            other.pad_token,
            other.unk_token,
        )

    def __hash__(self) -> int:
        return hash((tuple(self._itos), self.pad_token, self.unk_token))

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, pad={self.pad_token!r}, unk={self.unk_token!r})"

    @property
    def tokens(self) -> list[str]:
        """The entries in id order (a copy)."""
        return list(self._itos)

    @property
    def pad_index(self) -> int | None:
        """Id of the padding entry, ``None`` without one."""
        return None if self.pad_token is None else self._stoi[self.pad_token]

    @property
    def unk_index(self) -> int | None:
        """Id of the unknown entry, ``None`` without one."""
        return None if self.unk_token is None else self._stoi[self.unk_token]

    def index(self, token: str) -> int:
        """Return the id of ``token``, the unknown id for an unseen token.

        Raises:
            KeyError: If the token is unseen and the vocabulary has no unknown entry.
        """
        i = self._stoi.get(token)
        if i is not None:
            return i
        if self.unk_token is None:
            raise KeyError(f"{token!r} is not in the vocabulary (which has no unknown entry)")
        return self._stoi[self.unk_token]

    def indices(self, tokens: Iterable[str]) -> list[int]:
        """Vectorised :meth:`index` over ``tokens``."""
        if self.unk_token is None:
            return [self.index(t) for t in tokens]
        get, unk = self._stoi.get, self._stoi[self.unk_token]
        return [get(t, unk) for t in tokens]

    def lookup(self, ids: Iterable[int]) -> list[str]:
        """Return the strings of ``ids`` (raises ``IndexError`` for an id out of range)."""
        itos = self._itos
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(itos):
                raise IndexError(f"id {i} out of range for a vocabulary of {len(itos)} entries")
            out.append(itos[i])
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form, inverse of :meth:`from_dict`."""
        return {
            "format": _FORMAT_VOCAB,
            "version": _VERSION,
            "tokens": list(self._itos),
            "pad": self.pad_token,
            "unk": self.unk_token,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vocab:
        """Rebuild a vocabulary from :meth:`to_dict` output.

        Raises:
            VocabFileError: If fields are missing or have the wrong type.
        """
        if not isinstance(data, Mapping):
            raise VocabFileError(f"expected a JSON object, got {type(data).__name__}")
        if data.get("format") != _FORMAT_VOCAB:
            raise VocabFileError(f"format field is {data.get('format')!r}, not {_FORMAT_VOCAB!r}")
        tokens = data.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise VocabFileError("'tokens' must be a list of strings")
        pad, unk = data.get("pad"), data.get("unk")
        for name, value in (("pad", pad), ("unk", unk)):
            if value is not None and not isinstance(value, str):
                raise VocabFileError(f"'{name}' must be a string or null")
        try:
            return cls(tokens, pad_token=pad, unk_token=unk)
        except ValueError as err:
            raise VocabFileError(str(err)) from err

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as sealed JSON (:mod:`docgraph.runtime.integrity`),
        atomically."""
        write_sealed_json(path, self.to_dict(), indent=None, ensure_ascii=False)

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        """Read a vocabulary written by :meth:`save`.

        Raises:
            FileNotFoundError: If the file does not exist.
            VocabFileError: If the file is not a valid vocabulary file.
        """
        path = Path(path)
        try:
            return cls.from_dict(_read_json(path))
        except VocabFileError as err:
            raise VocabFileError(f"{path}: corrupt vocabulary file: {err}") from err


def _read_json(path: Path) -> Any:
    """Parse a (sealed) JSON file, turning damage into :class:`VocabFileError`."""
    try:
        return read_json_file(path)
    except DamagedFileError as err:
        raise VocabFileError(str(err).removeprefix(f"{path}: ")) from err


def label_sort_key(label: str) -> tuple[int, str, int]:
    """Deterministic order of BIOES labels: ``"O"`` first, then by type, then B, I, E, S."""
    if label == "O":
        return (0, "", 0)
    return (1, entity_type(label), _BIOES_ORDER.get(label[0], 4))


def label_types(labels: Vocab) -> tuple[list[str], list[int]]:
    """Entity types of a label vocabulary.

    Args:
        labels: BIOES label vocabulary (``"O"`` included).

    Returns:
        ``(type_names, label_to_type)``: the type names with ``"O"`` at index 0 and the others
        sorted, and for every label id the index of its type. Two tokens are of the "same type"
        when their label types are equal.
    """
    types = sorted({entity_type(lab) for lab in labels} - {"O"})
    type_names = ["O", *types]
    index = {t: i for i, t in enumerate(type_names)}
    return type_names, [index[entity_type(lab)] for lab in labels]


@dataclass
class Vocabularies:
    """The three vocabularies of a model.

    Args:
        words: Exact word forms, with ``<pad>`` (0) and ``<unk>`` (1).
        chars: Characters of the training words, with ``<pad>`` (0) and ``<unk>`` (1).
        labels: BIOES labels, ``"O"`` at index 0, no specials.
    """

    words: Vocab
    chars: Vocab
    labels: Vocab

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        extra_words: Iterable[str] = (),
        min_freq: int = 1,
    ) -> Vocabularies:
        """Build the vocabularies from the training documents.

        Args:
            documents: Training documents (IOB2 tags).
            extra_words: Words added to the word vocabulary only (not to the characters), e.g.
                the dev/test words that have a pretrained vector; see the module docstring.
            min_freq: Minimum training frequency of a word (extra words are always kept).

        Returns:
            The vocabularies.
        """
        word_counts: Counter[str] = Counter()
        label_set: set[str] = set()
        for doc in documents:
            for sent in doc.sentences:
                word_counts.update(sent.tokens)
                label_set.update(iob2_to_bioes(sent.tags))
        char_counts: Counter[str] = Counter()
        for word, count in word_counts.items():
            for ch in word:
                char_counts[ch] += count
        words = Vocab.build(word_counts, min_freq=min_freq)
        known = set(words)
        extra = sorted({w for w in extra_words if w not in known})
        if extra:
            words = Vocab([*words.tokens, *extra], pad_token=PAD, unk_token=UNK)
        label_set.add("O")
        labels = Vocab(sorted(label_set, key=label_sort_key))
        return cls(words=words, chars=Vocab.build(char_counts), labels=labels)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form, inverse of :meth:`from_dict`."""
        return {
            "format": _FORMAT_BUNDLE,
            "version": _VERSION,
            "words": self.words.to_dict(),
            "chars": self.chars.to_dict(),
            "labels": self.labels.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vocabularies:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            VocabFileError: If fields are missing or malformed.
        """
        if not isinstance(data, Mapping) or data.get("format") != _FORMAT_BUNDLE:
            raise VocabFileError(f"not a {_FORMAT_BUNDLE!r} object")
        parts = {}
        for name in ("words", "chars", "labels"):
            if name not in data:
                raise VocabFileError(f"missing field {name!r}")
            try:
                parts[name] = Vocab.from_dict(data[name])
            except VocabFileError as err:
                raise VocabFileError(f"field {name!r}: {err}") from err
        if len(parts["labels"]) == 0 or parts["labels"].tokens[0] != "O":
            raise VocabFileError("the label vocabulary must start with 'O'")
        return cls(**parts)

    def save(self, directory: str | Path) -> Path:
        """Write ``directory/vocab.json`` atomically and return its path."""
        path = Path(directory) / VOCAB_FILE
        write_sealed_json(path, self.to_dict(), indent=None, ensure_ascii=False)
        return path

    @classmethod
    def load(cls, directory: str | Path) -> Vocabularies:
        """Read ``directory/vocab.json`` written by :meth:`save`.

        Raises:
            FileNotFoundError: If the file does not exist.
            VocabFileError: If it is not a valid vocabulary file.
        """
        path = Path(directory) / VOCAB_FILE
        try:
            return cls.from_dict(_read_json(path))
        except VocabFileError as err:
            raise VocabFileError(f"{path}: corrupt vocabulary file: {err}") from err
