"""Invented names: documents whose entity words no corpus, vocabulary or pretrained table has seen.

A tagger that has memorised which names are entities scores well on its test split and fails on
the names users bring. :func:`novel_names` rewrites a labelled document so that every word of an
entity mention is replaced by an invented word, *consistently within the document* (every
occurrence of a word inside a mention, compared case-insensitively, gets the same invented word,
with the original's case shape), while the rest of the text is left as it is. The document graph
still links the repeats of a name, so a document-level tagger can carry a type from the mention
whose context shows it to the mentions whose context does not.

The generator (:class:`NameGenerator`) is seeded by the seed and the document id alone, so a
document's invented names are the same in every process and every run, and documented so that
reviewers can build a variant of their own: words are one to four syllables of an onset, a
vowel nucleus and an optional coda (``"Quenby"``-like), the number of syllables follows the
original word's length, and a word found in ``avoid`` (a vocabulary, the corpus's own words) is
drawn again.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Container, Iterable

from docgraph.data.document import Document, Sentence
from docgraph.data.tags import spans
from docgraph.data.tokenize import case_shape

__all__ = ["NOT_NAMES", "SELECTION_SEED", "NameGenerator", "cue_words", "novel_name_seed",
           "novel_names"]

#: Entity types whose words are not names (OntoNotes' numeric and temporal types: "Monday",
#: "million", "percent"): their mentions are kept as they are.
NOT_NAMES = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})

_ONSETS = ("b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kl", "l", "m", "n",
           "p", "pr", "qu", "r", "s", "sh", "st", "t", "th", "tr", "v", "w", "z")
_NUCLEI = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "y")
_CODAS = ("", "", "", "n", "r", "l", "s", "m", "nd", "rt", "st", "x", "k")


def _shaped(word: str, shape: str) -> str:
    if shape == "upper":
        return word.upper()
    if shape == "title":
        return word[:1].upper() + word[1:]
    return word


class NameGenerator:
    """Invented words, each new one different from every earlier one and from ``avoid``.

    Args:
        seed: Seed of the generator (with ``key``, the only source of its draws).
        key: A second part of the seed, e.g. the document id.
        avoid: Words (lowercased) never produced, e.g. a pretrained vocabulary.
    """

    def __init__(self, seed: int, key: str = "", avoid: Container[str] = frozenset()) -> None:
        self._rng = random.Random(f"novel-names:{seed}:{key}")
        self._avoid = avoid
        self._given: set[str] = set()

    def word(self, like: str = "") -> str:
        """A new lowercase invented word, about as long as ``like`` (one to four syllables)."""
        syllables = min(4, max(1, round(len(like) / 3))) if like else self._rng.randint(1, 3)
        for attempt in range(1000):
            parts = [self._rng.choice(_ONSETS) + self._rng.choice(_NUCLEI)
                     + self._rng.choice(_CODAS) for _ in range(syllables + attempt // 100)]
            word = "".join(parts)
            if word not in self._given and word not in self._avoid:
                self._given.add(word)
                return word
        raise RuntimeError("no new invented word after 1,000 draws")  # pragma: no cover


#: The seed of the invented names of the dev split that ``[train] selection = "robust_dev"``
#: selects on (the seed of the novel-names rows of ``benchmarks/out_of_domain.py``).
SELECTION_SEED = 0


def novel_name_seed(seed: int, version: int) -> int:
    """The generator seed of invented-name version ``version`` of a run seeded ``seed`` (the
    benchmark's rows use seeds below 1,000, training versions never do)."""
    return 1_000 * (seed + 1) + version


def cue_words(documents: Iterable[Document], min_mentions: int,
              kept_types: Container[str] = NOT_NAMES, common: bool = False) -> frozenset[str]:
    """The words (lowercased) found in at least ``min_mentions`` different entity mentions of
    ``documents`` (``"corp"``, ``"bank"``, ``"university"``, ``"john"``): words that tell a
    mention's type rather than name it, which a name users bring shares with names the corpus
    holds (``"Halvorsen Optics"``, ``"Quenby Crater"``). With ``common``, also every word of a
    mention that the documents use in lowercase outside mentions (``"airport"``, ``"cement"``):
    a common word inside a name describes what the name names.

    Args:
        documents: Labelled documents (a training split).
        min_mentions: The number of different mentions (compared lowercased) a word must be in.
        kept_types: Types whose mentions are not names and are not counted.
        common: Add the mention words used as common words.
    """
    mentions: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    lowercase: set[str] = set()
    for document in documents:
        for sentence in document.sentences:
            lowercase.update(token for token, tag in zip(sentence.tokens, sentence.tags)
                             if tag == "O" and token.islower())
            for type_, start, end in spans(sentence.tags):
                if type_ in kept_types:
                    continue
                words = tuple(w.lower() for w in sentence.tokens[start:end])
                for word in words:
                    mentions[word].add(words)
    return frozenset(w for w, found in mentions.items()
                     if len(found) >= min_mentions or (common and w in lowercase))


def novel_names(document: Document, seed: int, avoid: Container[str] = frozenset(),
                kept_types: Container[str] = NOT_NAMES,
                kept_words: Container[str] = frozenset()) -> Document:
    """``document`` with every word of its entity mentions replaced by an invented word.

    A token is replaced when its tag is not ``"O"``, its type is not in ``kept_types``, it
    holds a letter and its lowercased form is not in ``kept_words``; every occurrence of
    a word inside a mention (compared lowercased) gets the same invented word in this document,
    in the original token's case shape (:func:`~docgraph.data.tokenize.case_shape`;
    ``"other"`` is written as title case). Tokens outside mentions, tags, ids and sentences are
    kept.

    Args:
        document: A labelled document.
        seed: Seed; with the document id it decides every invented word.
        avoid: Lowercased words an invented word must not be.
        kept_types: Types whose mentions are left as they are (words that are not names).
        kept_words: Lowercased words kept where they are part of a mention (:func:`cue_words`).
    """
    generator = NameGenerator(seed, document.doc_id, avoid)
    invented: dict[str, str] = {}
    sentences = []
    for sentence in document.sentences:
        tokens = list(sentence.tokens)
        for i, (token, tag) in enumerate(zip(sentence.tokens, sentence.tags)):
            key = token.lower()
            if (tag == "O" or tag[2:] in kept_types or key in kept_words
                    or not any(c.isalpha() for c in token)):
                continue
            if key not in invented:
                invented[key] = generator.word(token)
            shape = case_shape(token)
            tokens[i] = _shaped(invented[key], "title" if shape == "other" else shape)
        sentences.append(Sentence(tuple(tokens), sentence.tags, sentence.doc_id, sentence.index))
    return Document(document.doc_id, tuple(sentences), document.source_scheme)
