"""Rule-based sentence splitting and tokenization of raw text, with character offsets.

No external dependencies; every function is pure. English text is tokenized PTB-style; text
in other scripts follows the rules of common standard tokenizers (below). Every token and
sentence is a span ``(start, end)`` of the original text (:func:`token_spans`,
:func:`sentence_spans`, :func:`paragraph_spans`): ``text[start:end]`` is the token, whatever
the line breaks (``\\r\\n`` included), tabs or other whitespace around it. Offsets are Python
string indices, i.e. Unicode code points.

Tokenization (:func:`token_spans`, :func:`tokenize`), tried left to right at each position,
first match wins:

1. Whitespace and control characters (Unicode category Cc: NUL, the other C0 and C1 controls
   and DEL, :data:`CONTROL_CHARACTERS`) separate tokens and are never part of one: a NUL byte
   in a text is a space, and a text of only such characters has no token (:func:`is_blank`).
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
6. Chinese and Japanese: every CJK ideograph (the ranges of BERT's ``BasicTokenizer``,
   ``_is_chinese_char``, plus ``々 〆 〇``) is a token of its own, as BERT's basic tokenizer and
   spaCy's Chinese tokenizer (its default ``char`` segmentation) split them. A run of hiragana
   and a run of katakana (with ``ー``) are one token each: unlike BERT, which keeps
   ``テレビを`` whole, the run ends where the script changes (``テレビ``, ``を``), as MeCab groups
   unknown words by character class. ``東京は日本の首都です。`` ->
   ``東 京 は 日 本 の 首 都 です 。``. Hangul, Thai and other scripts follow rule 7 (words are
   runs of letters between spaces and punctuation, as in BERT's basic tokenizer).
7. Words: runs of letters, digits and underscores (other than those of rule 6), joined by
   ``-``, ``&`` or an apostrophe (``Anglo-Dutch``, ``AT&T``, ``19-year-old``, ``O'Neill``), and,
   between two digits, by ``. , : /`` (``3.5``, ``1,000``, ``10:30``, ``1/2``). The clitics
   ``n't`` and ``'s 'm 'd 'll 're 've`` (any case, straight or curly apostrophe) at the end of
   a word are split off: ``Smith's`` -> ``Smith``, ``'s``; ``don't`` -> ``do``, ``n't``;
   ``can't`` -> ``ca``, ``n't``.
8. ``...`` (two or more periods), ``--`` (two or more hyphens), and the quote pairs ``````
   and ``''`` are one token each.
9. Every other character (punctuation such as ``, . ; : ! ? ( ) [ ] { } " '``, curly quotes,
   ``。``, symbols, emoji) is a token of its own -- one *grapheme cluster*, not one code
   point: two regional indicators are one flag (``🇩🇪``); an emoji with its skin-tone modifier
   or variation selector, and emoji joined by zero-width joiners (``👨‍👩‍👧``), are one token.

Grapheme clusters stay whole in every rule (a simplification of Unicode's extended grapheme
clusters, UAX #29): a combining mark (categories Mn, Mc, Me), a zero-width (non-)joiner, an
emoji modifier (U+1F3FB..U+1F3FF) or a tag character (U+E0020..U+E007F, in subdivision flags
such as ``🏴󠁧󠁢󠁳󠁣󠁴󠁿``) belongs to the character before it, so ``café`` written with a combining
accent and Devanagari words such as ``हिन्दी`` are one token.

A sentence-final abbreviation keeps its period and no separate ``.`` token is produced
(``Apple Inc.`` -> ``Apple``, ``Inc.``).

Sentence splitting (:func:`sentence_spans`, :func:`split_sentences`):

1. Blank lines (a line break, optional whitespace or control characters, another line break)
   separate paragraphs; a paragraph always ends a sentence.
2. Inside a paragraph, a line break is ordinary whitespace (text wrapped at a width), unless
   it ends a line shorter than :data:`SHORT_LINE` characters (a heading, a list item, a line
   of chat), a headline (:func:`is_headline`: a line of at most :data:`HEADLINE_LINE`
   characters in capitals or in title case) or the next line starts with a list marker
   (``-``, ``*``, ``•``, ``–``, ``—``, ``·``): then it ends a sentence. Text in capitals
   wrapped at a width is therefore split at its line breaks, a known limitation of this
   rule set. :func:`split_sentences` returns
   sentences with whitespace runs (control characters included) collapsed to one space,
   stripped; :func:`sentence_spans` returns their spans in the original text.
3. A sentence ends after a whitespace-separated chunk that ends in ``.``, ``!`` or ``?``
   (possibly repeated, e.g. ``?!`` or ``...``), optionally followed by closing quotes or
   brackets (``" ' ” ’ ) ] }``), when the next chunk starts with an uppercase letter, a digit,
   an opening quote (``" ' “ ‘ `````) or a letter of a script without case (e.g. ``東``).
4. Exception, only when the terminator is a single ``.``: no split if the word before it is a
   known abbreviation (:data:`ABBREVIATIONS`), a dotted acronym (``U.S.``, ``e.g.``), a single
   capital letter (an initial, ``J. Smith``), or a :data:`NUMBER_ABBREVIATIONS` entry followed
   by a digit (``No. 5``). Consequently a sentence ending in such a word is not split from
   the next one (``... Apple Inc. The ...``), a known limitation of this rule set.
5. The Chinese and Japanese terminators ``。 ｡ ！ ？``, with the closing brackets and quotes
   after them (``」 』 ） 〕 】 》 〉 ” ’``), end a sentence wherever they are: these scripts
   put no space between sentences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

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

Span = tuple[int, int]
"""``(start, end)``: the characters ``text[start:end]`` of a text."""

_CLOSING = "\"'”’)]}"
_OPENING_QUOTES = "\"'“‘`"
_TERMINATORS = ".!?"
_CJK_TERMINATORS = "。｡！？"
_CJK_CLOSING = "」』）〕】》〉”’\"')]}"


def _ranges(codepoints: list[int]) -> str:
    """A regex character-class body matching exactly ``codepoints`` (sorted)."""
    parts = []
    start = prev = codepoints[0]
    for cp in [*codepoints[1:], -1]:
        if cp != prev + 1:
            parts.append(re.escape(chr(start)) if start == prev
                         else f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
            start = cp
        prev = cp
    return "".join(parts)


def _extend_class() -> str:
    """Characters that never start a grapheme cluster: combining marks (Mn, Mc, Me, from
    the planes that have any), ZWNJ, ZWJ, emoji modifiers and tag characters."""
    planes = [*range(0x20000), *range(0xE0000, 0xE01F0)]
    marks = [cp for cp in planes if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")]
    extra = [0x200C, 0x200D, *range(0x1F3FB, 0x1F400), *range(0xE0020, 0xE0080)]
    return _ranges(sorted(set(marks) | set(extra)))


_EXT = f"[{_extend_class()}]"
# CJK ideographs: BERT's _is_chinese_char ranges (extensions A-H), compatibility ideographs,
# and 々 〆 〇.
_IDEOGRAPHS = ("\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
               "\U00020000-\U0002fa1f\U00030000-\U000323af")
_HIRAGANA = "\u3041-\u3096\u309d-\u309f"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
# Extended_Pictographic, approximately: the symbols emoji are drawn from.
_PICTOGRAPHS = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2"
                "\u25aa-\u27bf\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299"
                "\U0001f000-\U0001f1e5\U0001f200-\U0001f3fa\U0001f400-\U0001faff")
_REGIONAL = "\U0001f1e6-\U0001f1ff"

CONTROL_CHARACTERS = r"\x00-\x1f\x7f-\x9f"
"""Unicode category Cc as the body of a regex character class: separators, like whitespace."""
_SEP = rf"[\s{CONTROL_CHARACTERS}]"
_NONSEP = rf"[^\s{CONTROL_CHARACTERS}]"

# Word characters that are not CJK, with the marks that belong to them.
_W = rf"[^\W{_IDEOGRAPHS}{_HIRAGANA}{_KATAKANA}]+{_EXT}*"


def _alternation(words: frozenset[str]) -> str:
    """Build a regex alternation of ``words``, longest first so prefixes do not win."""
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


_TOKEN_RE = re.compile(
    "|".join(
        [
            # 2. URLs (closing punctuation at the end split off) and e-mail addresses
            rf"(?:https?://|ftp://|www\.){_NONSEP}+?(?=[.,;:!?)\]}}\"']*(?:{_SEP}|$))",
            r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
            # 3. known abbreviations
            rf"(?<![\w.])(?:{_alternation(ABBREVIATIONS)})\.",
            rf"(?<![\w.])(?:{_alternation(NUMBER_ABBREVIATIONS)})\.(?=\s+\d)",
            # 4. dotted acronyms
            r"(?<![\w.])[A-Za-z](?:\.[A-Za-z])+\.?(?!\w)",
            # 5. initials
            r"(?<![\w.])[A-Z]\.(?=\s+[A-Z])",
            # 7. words and numbers (no CJK: tried first, as the most frequent)
            rf"(?:{_W})+(?:(?:[-&'’]|(?<=\d)[.,:/](?=\d))(?:{_W})+)*",
            # 6. CJK ideographs one by one, kana runs by script
            rf"[{_IDEOGRAPHS}]{_EXT}*",
            rf"(?:[{_HIRAGANA}]{_EXT}*)+",
            rf"(?:[{_KATAKANA}]{_EXT}*)+",
            # 8. multi-character punctuation
            r"\.{2,}|-{2,}|``|''",
            # 9. any other grapheme cluster: a flag, an emoji ZWJ sequence, a character
            rf"[{_REGIONAL}]{{2}}{_EXT}*",
            rf"[{_PICTOGRAPHS}](?:{_EXT}|(?<=\u200d)[{_PICTOGRAPHS}])*",
            rf"{_NONSEP}{_EXT}*",
        ]
    )
)

# no "^": match() anchors at its start position, where "^" would not match
_CLITIC_RE = re.compile(r"(?i)(.+?)(n['’]t|['’](?:s|m|d|ll|re|ve))$")
_PARAGRAPH_RE = re.compile(rf"\n(?:(?:(?!\n){_SEP})*\n)+")

#: A line break after a line of fewer characters ends a sentence (rule 2 of the module
#: docstring): text wrapped at a width has longer lines, headings and list items shorter ones.
SHORT_LINE = 40
#: The longest line that :func:`is_headline` takes for a headline.
HEADLINE_LINE = 120
#: Words a title-case headline may write in lowercase (``Bank of England Holds Rates``,
#: ``Von der Leyen``).
TITLE_SMALL_WORDS: frozenset[str] = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "nor", "of",
     "off", "on", "onto", "or", "over", "per", "the", "to", "up", "upon", "via", "vs", "with",
     # particles of names
     "al", "bin", "da", "de", "del", "della", "den", "der", "di", "du", "la", "le", "van",
     "von"})
_LETTERS_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_LIST_MARKERS = frozenset("-*•–—·")
_CHUNK_RE = re.compile(rf"{_NONSEP}+")
_SENTENCE_END_RE = re.compile(rf"^(.*?)([{_TERMINATORS}]+)[{re.escape(_CLOSING)}]*$")
_CJK_END_RE = re.compile(f"[{_CJK_TERMINATORS}]+[{re.escape(_CJK_CLOSING)}]*")
_CJK_FINAL_RE = re.compile(f"[{_CJK_TERMINATORS}]+[{re.escape(_CJK_CLOSING)}]*$")
_DOTTED_ACRONYM_RE = re.compile(r"[A-Za-z](?:\.[A-Za-z])+")


def _clitic_split(text: str, start: int, end: int) -> list[Span]:
    """The spans of a word token, a trailing ``n't`` or ``'s``-type clitic split off.

    Args:
        text: The text.
        start: Start of the word token.
        end: Its end.

    Returns:
        ``[(start, end)]`` or ``[stem, clitic]``.
    """
    match = _CLITIC_RE.match(text, start, end)
    if match is None:
        return [(start, end)]
    return [match.span(1), match.span(2)]


def token_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """The tokens of ``text[start:end]`` as spans of ``text``, by the rules of the module
    docstring.

    Args:
        text: Raw text (any amount of whitespace, including line breaks).
        start: Where to start (the characters before it are not tokenized).
        end: Where to stop (default: the end of ``text``).

    Returns:
        ``(start, end)`` of each token, in order; ``text[s:e]`` is the token and never
        contains whitespace.

    Example:
        >>> text = "Don't\\r\\n🇩🇪 東京"
        >>> [text[s:e] for s, e in token_spans(text)]
        ['Do', "n't", '🇩🇪', '東', '京']
    """
    end = len(text) if end is None else end
    return [span for match in _TOKEN_RE.finditer(text, start, end)
            for span in _clitic_split(text, *match.span())]


def tokenize(text: str) -> list[str]:
    """Split text into tokens following the rules in the module docstring.

    Args:
        text: Raw text (any amount of whitespace, including line breaks).

    Returns:
        The tokens in order; ``[]`` for empty or blank text.

    Example:
        >>> tokenize("Mr. Smith's car cost $3.5 million, didn't it?")
        ['Mr.', 'Smith', "'s", 'car', 'cost', '$', '3.5', 'million', ',', 'did', "n't", 'it', '?']
    """
    return [text[s:e] for s, e in token_spans(text)]


def is_blank(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` has no token: only whitespace and control characters."""
    end = len(text) if end is None else end
    return _CHUNK_RE.search(text, start, end) is None


def case_shape(word: str) -> str:
    """``"upper"`` (``"NASA"``), ``"title"`` (``"Paris"``, ``"McDonald"``), ``"lower"`` or
    ``"other"`` (no letter, or a lowercase first letter with capitals later)."""
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return "other"
    if all(c.isupper() for c in letters) and len(letters) > 1:
        return "upper"
    if letters[0].isupper():
        return "title"
    if all(c.islower() for c in letters):
        return "lower"
    return "other"


def word_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """The spans of ``text[start:end]``'s runs of characters other than whitespace and control
    characters: the tokens of pre-tokenised text.

    Example:
        >>> text = "New\x00York  is"
        >>> [text[s:e] for s, e in word_spans(text)]
        ['New', 'York', 'is']
    """
    end = len(text) if end is None else end
    return [chunk.span() for chunk in _CHUNK_RE.finditer(text, start, end)]


def _strip_opening(chunk: str) -> str:
    """Remove leading opening quotes and brackets from a whitespace-separated chunk."""
    return chunk.lstrip(_OPENING_QUOTES + "([{")


_UNCASED_ABBREVIATIONS = frozenset(w.lower() for w in ABBREVIATIONS)


def _is_abbreviation(word: str, next_chunk: str, uncased: bool = False) -> bool:
    """Tell whether ``word`` followed by a period does not end a sentence.

    Args:
        word: The text before the final period, opening quotes/brackets removed.
        next_chunk: The following whitespace-separated chunk.
        uncased: The paragraph has no uppercase letter: abbreviations are known in any case,
            and a single letter is an initial.

    Returns:
        True for known abbreviations, dotted acronyms, single capital initials, and number
        abbreviations followed by a digit.
    """
    if word in ABBREVIATIONS or _DOTTED_ACRONYM_RE.fullmatch(word):
        return True
    if uncased and (word in _UNCASED_ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
        return True
    if len(word) == 1 and word.isupper():
        return True
    return word in NUMBER_ABBREVIATIONS and next_chunk[:1].isdigit()


def _starts_sentence(chunk: str) -> bool:
    """Whether ``chunk`` may start a sentence after a terminator: an uppercase letter, a
    digit, an opening quote or a letter of a script without case."""
    first = chunk[:1]
    return (first.isupper() or first.isdigit() or first in _OPENING_QUOTES
            or unicodedata.category(first) == "Lo")


def _ends_sentence(chunk: str, next_chunk: str, uncased: bool = False) -> bool:
    """Tell whether a sentence boundary lies between two whitespace-separated chunks.

    Args:
        chunk: The chunk that may end a sentence.
        next_chunk: The chunk after it.
        uncased: The paragraph has no uppercase letter (chat, transcripts, lowercased
            text): a lowercase letter may start a sentence too.

    Returns:
        True if ``chunk`` ends in a CJK terminator (plus optional closers), or if it ends in
        a terminator (plus optional closers), ``next_chunk`` may start a sentence
        (:func:`_starts_sentence`), and the period is not an abbreviation's.
    """
    if chunk[-1] in _CJK_TERMINATORS + _CJK_CLOSING and _CJK_FINAL_RE.search(chunk):
        return True
    match = _SENTENCE_END_RE.match(chunk)
    if match is None or not (_starts_sentence(next_chunk)
                             or (uncased and _strip_opening(next_chunk)[:1].isalpha())):
        return False
    word, terminator = match.groups()
    if terminator != ".":
        return True
    return not _is_abbreviation(_strip_opening(word), next_chunk, uncased)


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The paragraphs of ``text[start:end]`` (separated by blank lines), as spans of ``text``.

    Args:
        text: Raw text.
        start: Where to start.
        end: Where to stop (default: the end of ``text``).

    Yields:
        ``(start, end)`` of every paragraph with a non-whitespace character, from its first
        to its last non-whitespace character.
    """
    end = len(text) if end is None else end
    position = start
    for gap in [*_PARAGRAPH_RE.finditer(text, start, end), None]:
        stop = end if gap is None else gap.start()
        first = _CHUNK_RE.search(text, position, stop)
        if first is not None:
            last = first.end()
            for chunk in _CHUNK_RE.finditer(text, first.end(), stop):
                last = chunk.end()
            yield first.start(), last
        if gap is not None:
            position = gap.end()


def _paragraph_sentences(text: str, start: int, end: int) -> Iterator[Span]:
    """The sentences of one paragraph ``text[start:end]`` (no blank line in it), as spans."""
    cjk = _CJK_END_RE.search(text, start, end) is not None
    uncased = not any(c.isupper() for c in text[start:end])
    sentence_start: int | None = None
    previous: re.Match[str] | None = None
    line_start = start
    for chunk in _CHUNK_RE.finditer(text, start, end):
        new_line = previous is not None and "\n" in text[previous.end():chunk.start()]
        if previous is not None and (
                _ends_sentence(previous.group(), chunk.group(), uncased)
                or (new_line and _ends_line(text[line_start:previous.end()], chunk.group()))):
            yield sentence_start, previous.end()  # type: ignore[misc]
            sentence_start = None
        if new_line:
            line_start = chunk.start()
        if sentence_start is None:
            sentence_start = chunk.start()
        if cjk:
            for stop in _CJK_END_RE.finditer(text, chunk.start(), chunk.end()):
                if stop.end() < chunk.end():
                    yield sentence_start, stop.end()
                    sentence_start = stop.end()
        previous = chunk
    if previous is not None and sentence_start is not None:
        yield sentence_start, previous.end()


def _ends_line(line: str, next_chunk: str) -> bool:
    """Whether the line break after ``line`` (from its first to its last non-whitespace
    character), before ``next_chunk``, ends a sentence: the line is shorter than
    :data:`SHORT_LINE` or a headline (:func:`is_headline`), or the next one starts with a
    list marker."""
    return len(line) < SHORT_LINE or next_chunk in _LIST_MARKERS or is_headline(line)


def is_headline(line: str) -> bool:
    """Whether a line of text is a headline: at most :data:`HEADLINE_LINE` characters, two
    words or more, written in capitals (no lowercase letter) or in title case (every word
    with a capital, ``iPhone`` too, but the small words of :data:`TITLE_SMALL_WORDS` after
    the first), and not
    ending as a line of wrapped text may (in a small word, a comma or a hyphen).

    Example:
        >>> is_headline("ZELENSKY AND SUNAK MEET IN LONDON AHEAD OF THE NATO SUMMIT")
        True
        >>> is_headline("Bank of England Holds Rates as Inflation Eases")
        True
        >>> is_headline("The bank held its rates on Thursday as inflation eased")
        False
    """
    words = _LETTERS_RE.findall(line)
    if (len(line) > HEADLINE_LINE or len(words) < 2 or line[-1] in ",-&"
            or (line.endswith(words[-1]) and words[-1].lower() in TITLE_SMALL_WORDS)):
        return False
    if not any(c.islower() for c in line):
        return any(c.isupper() for c in line)
    return not words[0].islower() and all(
        not word.islower() or word in TITLE_SMALL_WORDS for word in words[1:])


_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def same_line_runs(text: str, spans: Sequence[Span]) -> list[tuple[int, int]]:
    """The runs of consecutive tokens of ``text`` (``spans``, in order) that no line break
    separates, as ``(first, stop)`` indices into ``spans``: where an entity found over tokens
    of several lines is cut, so that no entity spans a line break (the line breaks of
    :meth:`str.splitlines`).

    Example:
        >>> text = "LONDON\nBANK OF ENGLAND"
        >>> same_line_runs(text, token_spans(text))
        [(0, 1), (1, 4)]
    """
    runs, first = [], 0
    for k in range(1, len(spans)):
        if not _LINE_BREAKS.isdisjoint(text[spans[k - 1][1]:spans[k][0]]):
            runs.append((first, k))
            first = k
    if spans:
        runs.append((first, len(spans)))
    return runs


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The sentences of ``text[start:end]`` as spans of ``text``, following the rules in the
    module docstring.

    Lazy: a text of any size is split without copying it (one sentence at a time).

    Args:
        text: Raw text; blank lines separate paragraphs.
        start: Where to start.
        end: Where to stop (default: the end of ``text``).

    Yields:
        ``(start, end)`` of every sentence, from its first to its last non-whitespace
        character.
    """
    for paragraph in paragraph_spans(text, start, end):
        yield from _paragraph_sentences(text, *paragraph)


def split_sentences(text: str) -> list[str]:
    """Split raw text into sentences following the rules in the module docstring.

    Args:
        text: Raw text; blank lines separate paragraphs.

    Returns:
        The sentences with whitespace and control characters collapsed to single spaces;
        ``[]`` for blank text.

    Example:
        >>> split_sentences("Mr. J. Smith arrived. He left!\\n\\nNew paragraph")
        ['Mr. J. Smith arrived.', 'He left!', 'New paragraph']
    """
    return [" ".join(text[a:b] for a, b in word_spans(text, s, e))
            for s, e in sentence_spans(text)]


def text_to_sentences(text: str) -> list[list[str]]:
    """Split raw text into tokenized sentences.

    Args:
        text: Raw text; blank lines separate paragraphs.

    Returns:
        One token list per sentence, empty sentences dropped.
    """
    return [[text[s:e] for s, e in spans] for spans in text_to_sentence_spans(text)]


def text_to_sentence_spans(text: str, start: int = 0, end: int | None = None
                           ) -> Iterator[list[Span]]:
    """The token spans of every sentence of ``text[start:end]`` (:func:`sentence_spans`,
    :func:`token_spans`), lazily; sentences without tokens are left out.

    Example:
        >>> text = "Kestrel won.\\r\\nCarrow lost."
        >>> [[text[s:e] for s, e in sent] for sent in text_to_sentence_spans(text)]
        [['Kestrel', 'won', '.'], ['Carrow', 'lost', '.']]
    """
    for sentence in sentence_spans(text, start, end):
        if spans := token_spans(text, *sentence):
            yield spans
