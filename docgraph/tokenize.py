"""Rule-based sentence splitting and PTB-like tokenization of raw English text.

No external dependencies; every function is pure. The rules are:

Tokenization (:func:`tokenize`), tried left to right at each position, first match wins:

1. Whitespace separates tokens and is never part of one.
2. URLs (``http://``, ``https://``, ``ftp://`` or ``www.`` up to the next whitespace) and
   e-mail addresses are one token. Closing punctuation (``. , ; : ! ? ) ] } " '``) at the end
   of a URL is split off.
3. Known abbreviations (:data:`ABBREVIATIONS`, case-sensitive, e.g. ``Mr.``, ``Dr.``, ``Inc.``,
   ``Jan.``, ``etc.``) keep their period. Abbreviations in :data:`NUMBER_ABBREVIATIONS`
   (``No.``, ``Vol.``, ``Fig.``, ...) do so only when followed by whitespace and a digit.
4. Dotted acronyms -- single letters joined by periods, e.g. ``U.S.``, ``U.S.A.``, ``e.g.``,
   ``a.m.`` -- are one token, including a final period.
5. A single capital letter with a period followed by whitespace and a capital letter is an
   initial and keeps its period (``J. Smith`` -> ``J.``, ``Smith``).
6. Words: runs of letters, digits and underscores, joined by ``-``, ``&`` or an apostrophe
   (``Anglo-Dutch``, ``AT&T``, ``19-year-old``, ``O'Neill``), and, between two digits, by
   ``. , : /`` (``3.5``, ``1,000``, ``10:30``, ``1/2``). The clitics ``n't`` and
   ``'s 'm 'd 'll 're 've`` (any case, straight or curly apostrophe) at the end of a word are
   split off: ``Smith's`` -> ``Smith``, ``'s``; ``don't`` -> ``do``, ``n't``;
   ``can't`` -> ``ca``, ``n't``.
7. ``...`` (two or more periods), ``--`` (two or more hyphens), and the quote pairs ``````
   and ``''`` are one token each.
8. Every other character (punctuation such as ``, . ; : ! ? ( ) [ ] { } " '`` and curly
   quotes) is a token of its own.

A sentence-final abbreviation keeps its period and no separate ``.`` token is produced
(``Apple Inc.`` -> ``Apple``, ``Inc.``).

Sentence splitting (:func:`split_sentences`):

1. Blank lines (a line break, optional whitespace, another line break) separate paragraphs;
   a paragraph always ends a sentence.
2. Inside a paragraph, line breaks are ordinary whitespace; whitespace runs in the returned
   sentences are collapsed to one space and the sentences are stripped.
3. A sentence ends after a whitespace-separated chunk that ends in ``.``, ``!`` or ``?``
   (possibly repeated, e.g. ``?!`` or ``...``), optionally followed by closing quotes or
   brackets (``" ' ” ’ ) ] }``), when the next chunk starts with an uppercase letter, a digit
   or an opening quote (``" ' “ ‘ `````).
4. Exception, only when the terminator is a single ``.``: no split if the word before it is a
   known abbreviation (:data:`ABBREVIATIONS`), a dotted acronym (``U.S.``, ``e.g.``), a single
   capital letter (an initial, ``J. Smith``), or a :data:`NUMBER_ABBREVIATIONS` entry followed
   by a digit (``No. 5``). Consequently a sentence ending in such a word is not split from
   the next one (``... Apple Inc. The ...``), a known limitation of this rule set.
"""

from __future__ import annotations

import re

ABBREVIATIONS: frozenset[str] = frozenset(
    {
        # titles
        "Mr", "Mrs", "Ms", "Messrs", "Mme", "Mlle", "Dr", "Prof", "Rev", "Hon", "St", "Sr",
        "Jr", "Gen", "Col", "Lt", "Maj", "Capt", "Cmdr", "Sgt", "Cpl", "Adm", "Gov", "Sen",
        "Rep", "Pres", "Supt", "Ph.D",
        # companies and places
        "Inc", "Corp", "Co", "Ltd", "Bros", "Dept", "Univ", "Assn", "Ave", "Blvd", "Rd",
        "Mt", "Ft", "Calif", "Conn", "Fla", "Ariz", "Colo",
        # months
        "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
        # lowercase
        "etc", "vs", "approx", "cf", "al", "ca", "esp", "incl",
    }
)  # fmt: skip
"""Words that keep a following period and after which a sentence is never split."""

NUMBER_ABBREVIATIONS: frozenset[str] = frozenset(
    {"No", "Nos", "no", "Vol", "Vols", "vol", "Fig", "Figs", "fig", "pp", "Art", "Sec", "Ch"}
)
"""Words that act as abbreviations only when followed by whitespace and a number."""

_CLOSING = "\"'”’)]}"
_OPENING_QUOTES = "\"'“‘`"
_TERMINATORS = ".!?"


def _alternation(words: frozenset[str]) -> str:
    """Build a regex alternation of ``words``, longest first so prefixes do not win."""
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


_TOKEN_RE = re.compile(
    "|".join(
        [
            # 2. URLs (closing punctuation at the end split off) and e-mail addresses
            r"(?:https?://|ftp://|www\.)\S+?(?=[.,;:!?)\]}\"']*(?:\s|$))",
            r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
            # 3. known abbreviations
            rf"(?<![\w.])(?:{_alternation(ABBREVIATIONS)})\.",
            rf"(?<![\w.])(?:{_alternation(NUMBER_ABBREVIATIONS)})\.(?=\s+\d)",
            # 4. dotted acronyms
            r"(?<![\w.])[A-Za-z](?:\.[A-Za-z])+\.?(?!\w)",
            # 5. initials
            r"(?<![\w.])[A-Z]\.(?=\s+[A-Z])",
            # 6. words and numbers
            r"\w+(?:(?:[-&'’]|(?<=\d)[.,:/](?=\d))\w+)*",
            # 7. multi-character punctuation
            r"\.{2,}|-{2,}|``|''",
            # 8. any other character
            r"\S",
        ]
    )
)

_CLITIC_RE = re.compile(r"(?i)^(.+?)(n['’]t|['’](?:s|m|d|ll|re|ve))$")
_PARAGRAPH_RE = re.compile(r"\n(?:[^\S\n]*\n)+")
_SENTENCE_END_RE = re.compile(rf"^(.*?)([{_TERMINATORS}]+)[{re.escape(_CLOSING)}]*$")
_DOTTED_ACRONYM_RE = re.compile(r"[A-Za-z](?:\.[A-Za-z])+")


def _split_clitic(word: str) -> list[str]:
    """Split a trailing ``n't`` or ``'s``-type clitic off a word.

    Args:
        word: A word token.

    Returns:
        ``[word]`` or ``[stem, clitic]``.
    """
    match = _CLITIC_RE.match(word)
    if match is None:
        return [word]
    return [match.group(1), match.group(2)]


def tokenize(text: str) -> list[str]:
    """Split text into PTB-like tokens following the rules in the module docstring.

    Args:
        text: Raw text (any amount of whitespace, including line breaks).

    Returns:
        The tokens in order; ``[]`` for empty or blank text.

    Example:
        >>> tokenize("Mr. Smith's car cost $3.5 million, didn't it?")
        ['Mr.', 'Smith', "'s", 'car', 'cost', '$', '3.5', 'million', ',', 'did', "n't", 'it', '?']
    """
    return [part for match in _TOKEN_RE.finditer(text) for part in _split_clitic(match.group())]


def _strip_opening(chunk: str) -> str:
    """Remove leading opening quotes and brackets from a whitespace-separated chunk."""
    return chunk.lstrip(_OPENING_QUOTES + "([{")


def _is_abbreviation(word: str, next_chunk: str) -> bool:
    """Tell whether ``word`` followed by a period does not end a sentence.

    Args:
        word: The text before the final period, opening quotes/brackets removed.
        next_chunk: The following whitespace-separated chunk.

    Returns:
        True for known abbreviations, dotted acronyms, single capital initials, and number
        abbreviations followed by a digit.
    """
    if word in ABBREVIATIONS or _DOTTED_ACRONYM_RE.fullmatch(word):
        return True
    if len(word) == 1 and word.isupper():
        return True
    return word in NUMBER_ABBREVIATIONS and next_chunk[:1].isdigit()


def _ends_sentence(chunk: str, next_chunk: str) -> bool:
    """Tell whether a sentence boundary lies between two whitespace-separated chunks.

    Args:
        chunk: The chunk that may end a sentence.
        next_chunk: The chunk after it.

    Returns:
        True if ``chunk`` ends in a terminator (plus optional closers), ``next_chunk`` starts
        with an uppercase letter, digit or opening quote, and the period is not an
        abbreviation's.
    """
    match = _SENTENCE_END_RE.match(chunk)
    if match is None:
        return False
    first = next_chunk[:1]
    if not (first.isupper() or first.isdigit() or first in _OPENING_QUOTES):
        return False
    word, terminator = match.groups()
    if terminator != ".":
        return True
    return not _is_abbreviation(_strip_opening(word), next_chunk)


def _split_paragraph(paragraph: str) -> list[str]:
    """Split one paragraph into sentences.

    Args:
        paragraph: Text without blank lines.

    Returns:
        Whitespace-normalised sentences; ``[]`` for blank text.
    """
    chunks = paragraph.split()
    sentences: list[str] = []
    start = 0
    for i in range(len(chunks) - 1):
        if _ends_sentence(chunks[i], chunks[i + 1]):
            sentences.append(" ".join(chunks[start : i + 1]))
            start = i + 1
    if start < len(chunks):
        sentences.append(" ".join(chunks[start:]))
    return sentences


def split_sentences(text: str) -> list[str]:
    """Split raw text into sentences following the rules in the module docstring.

    Args:
        text: Raw text; blank lines separate paragraphs.

    Returns:
        The sentences with whitespace collapsed to single spaces; ``[]`` for blank text.

    Example:
        >>> split_sentences("Mr. J. Smith arrived. He left!\\n\\nNew paragraph")
        ['Mr. J. Smith arrived.', 'He left!', 'New paragraph']
    """
    return [
        sentence
        for paragraph in _PARAGRAPH_RE.split(text)
        for sentence in _split_paragraph(paragraph)
    ]


def text_to_sentences(text: str) -> list[list[str]]:
    """Split raw text into tokenized sentences.

    Args:
        text: Raw text; blank lines separate paragraphs.

    Returns:
        One token list per sentence, empty sentences dropped.
    """
    return [tokens for sentence in split_sentences(text) if (tokens := tokenize(sentence))]
