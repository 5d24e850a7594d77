"""Tests for the rule-based tokenizer and sentence splitter."""

from __future__ import annotations

import pytest

from docgraph.tokenize import (
    ABBREVIATIONS,
    NUMBER_ABBREVIATIONS,
    split_sentences,
    text_to_sentences,
    tokenize,
)

# --- tokenize -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   \n\t ", []),
        ("Hello world", ["Hello", "world"]),
        ("Hello, world.", ["Hello", ",", "world", "."]),
        ("a;b:c!d?", ["a", ";", "b", ":", "c", "!", "d", "?"]),
        ("(Reuters) [x] {y}", ["(", "Reuters", ")", "[", "x", "]", "{", "y", "}"]),
        ('He said "Stop."', ["He", "said", '"', "Stop", ".", '"']),
        ("'yes'", ["'", "yes", "'"]),
        ("“Yes,” she said.", ["“", "Yes", ",", "”", "she", "said", "."]),
        ("``Hi,'' he said", ["``", "Hi", ",", "''", "he", "said"]),
    ],
)
def test_punctuation_and_quotes(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the U.S. Army", ["the", "U.S.", "Army"]),
        ("U.S.A. and U.K.", ["U.S.A.", "and", "U.K."]),
        ("e.g. apples, i.e. fruit", ["e.g.", "apples", ",", "i.e.", "fruit"]),
        ("at 10 a.m. today", ["at", "10", "a.m.", "today"]),
        ("Mr. and Mrs. Smith", ["Mr.", "and", "Mrs.", "Smith"]),
        ("Dr. Who met Prof. X", ["Dr.", "Who", "met", "Prof.", "X"]),
        ("Apple Inc. said", ["Apple", "Inc.", "said"]),
        ("on Jan. 5", ["on", "Jan.", "5"]),
        ("cats, dogs, etc.", ["cats", ",", "dogs", ",", "etc."]),
        ("Smith et al. found", ["Smith", "et", "al.", "found"]),
        ("a Ph.D. student", ["a", "Ph.D.", "student"]),
        ("Apple Inc.", ["Apple", "Inc."]),
    ],
)
def test_abbreviations_keep_period(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_number_abbreviations_need_a_number() -> None:
    assert tokenize("No. 5 is here") == ["No.", "5", "is", "here"]
    assert tokenize("He said No.") == ["He", "said", "No", "."]
    assert tokenize("see Fig. 3") == ["see", "Fig.", "3"]


def test_abbreviation_must_be_whole_word() -> None:
    # "Dr" inside "Andr." is not the abbreviation.
    assert tokenize("Andr. x") == ["Andr", ".", "x"]
    assert tokenize("the Mr") == ["the", "Mr"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("J. Smith", ["J.", "Smith"]),
        ("J. R. R. Tolkien", ["J.", "R.", "R.", "Tolkien"]),
        ("J.R.R. Tolkien", ["J.R.R.", "Tolkien"]),
        ("World War I.", ["World", "War", "I", "."]),
        ("plan b. Then", ["plan", "b", ".", "Then"]),
    ],
)
def test_initials(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.5 percent", ["3.5", "percent"]),
        ("rose 3.5.", ["rose", "3.5", "."]),
        ("1,000 people", ["1,000", "people"]),
        ("$1,000.50!", ["$", "1,000.50", "!"]),
        ("1, 2, 3", ["1", ",", "2", ",", "3"]),
        ("at 10:30, then", ["at", "10:30", ",", "then"]),
        ("1/2 cup", ["1/2", "cup"]),
        ("in 1999.", ["in", "1999", "."]),
        ("the 1990s", ["the", "1990s"]),
        ("-3.5", ["-", "3.5"]),
        ("50%", ["50", "%"]),
    ],
)
def test_numbers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Anglo-Dutch group", ["Anglo-Dutch", "group"]),
        ("a 19-year-old", ["a", "19-year-old"]),
        ("COVID-19 cases", ["COVID-19", "cases"]),
        ("AT&T", ["AT&T"]),
        ("well -- maybe", ["well", "--", "maybe"]),
        ("wait...", ["wait", "..."]),
        ("end- of", ["end", "-", "of"]),
    ],
)
def test_hyphens_and_dashes(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Smith's car", ["Smith", "'s", "car"]),
        ("O'Neill's team", ["O'Neill", "'s", "team"]),
        ("O'Neill", ["O'Neill"]),
        ("the kids' toys", ["the", "kids", "'", "toys"]),
        ("don't", ["do", "n't"]),
        ("can't", ["ca", "n't"]),
        ("won't", ["wo", "n't"]),
        ("DON'T", ["DO", "N'T"]),
        ("I'm, you're, we've, she'd, they'll", [
            "I", "'m", ",", "you", "'re", ",", "we", "'ve", ",", "she", "'d", ",", "they", "'ll",
        ]),
        ("it’s", ["it", "’s"]),
        ("isn’t", ["is", "n’t"]),
    ],
)  # fmt: skip
def test_clitics(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see http://example.com/a.b?x=1.", ["see", "http://example.com/a.b?x=1", "."]),
        ("(https://x.org/p)", ["(", "https://x.org/p", ")"]),
        ("www.reuters.com, then", ["www.reuters.com", ",", "then"]),
        ("mail john.doe@ex.co.uk.", ["mail", "john.doe@ex.co.uk", "."]),
        ("<a+b@c.com>", ["<", "a+b@c.com", ">"]),
    ],
)
def test_urls_and_emails(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_tokens_never_contain_whitespace() -> None:
    text = "Mr.  Smith\n's  \t car , U.S.\nArmy http://a.b/c\n"
    tokens = tokenize(text)
    assert all(token and not any(c.isspace() for c in token) for token in tokens)


def test_abbreviation_sets_are_frozen() -> None:
    assert isinstance(ABBREVIATIONS, frozenset)
    assert isinstance(NUMBER_ABBREVIATIONS, frozenset)
    assert {"Mr", "Dr", "Inc", "Jan"} <= ABBREVIATIONS


# --- split_sentences ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        (" \n\n \n", []),
        ("One. Two.", ["One.", "Two."]),
        ("Really? Yes! Good.", ["Really?", "Yes!", "Good."]),
        ("No final period", ["No final period"]),
        ("First one. and lowercase", ["First one. and lowercase"]),
        ("It rose 5%. 2020 was bad.", ["It rose 5%.", "2020 was bad."]),
        ("Wait... What?! Ok.", ["Wait...", "What?!", "Ok."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('He said "Stop". Then he left.', ['He said "Stop".', "Then he left."]),
        ("It ended (finally.) Next one.", ["It ended (finally.)", "Next one."]),
        ('One. "Two," he said.', ["One.", '"Two," he said.']),
        ("Version 3.5 is out. Get it.", ["Version 3.5 is out.", "Get it."]),
        ("Trailing text. Without period", ["Trailing text.", "Without period"]),
    ],
)
def test_split_basic(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mr. Smith came. He left.", ["Mr. Smith came.", "He left."]),
        ("Dr. Who and Prof. X met.", ["Dr. Who and Prof. X met."]),
        ("The U.S. Army won. It was over.", ["The U.S. Army won.", "It was over."]),
        ("Fruit, e.g. Apples, is good.", ["Fruit, e.g. Apples, is good."]),
        ("J. Smith spoke. A. B. Jones agreed.", ["J. Smith spoke.", "A. B. Jones agreed."]),
        ("Born Jan. 5 in (St. Louis.)", ["Born Jan. 5 in (St. Louis.)"]),
        ("See No. 5 here. No. It is not.", ["See No. 5 here.", "No.", "It is not."]),
        ("(Mr. Smith) left.", ["(Mr. Smith) left."]),
        # documented limitation: an abbreviation at the end of a sentence does not split
        ("He joined Apple Inc. He stayed.", ["He joined Apple Inc. He stayed."]),
    ],
)
def test_split_abbreviations_and_initials(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_paragraphs_always_split() -> None:
    text = "First paragraph without period\n\nSecond one. Two\n  \n\n\nThird and mr\n\nFourth"
    assert split_sentences(text) == [
        "First paragraph without period",
        "Second one.",
        "Two",
        "Third and mr",
        "Fourth",
    ]


def test_newlines_inside_paragraph_are_whitespace() -> None:
    text = "This sentence\nspans two lines. And\nthis\tone   too.\r\n"
    assert split_sentences(text) == ["This sentence spans two lines.", "And this one too."]


def test_crlf_paragraph_break() -> None:
    assert split_sentences("One\r\n\r\nTwo") == ["One", "Two"]


# --- text_to_sentences --------------------------------------------------------------------


def test_text_to_sentences() -> None:
    text = (
        "Mr. J. Smith's firm, Anglo-Dutch Inc., paid $1,000.50 at 10:30 a.m.\n"
        "It didn't help. Prices rose 3.5%!\n\n"
        '"Why?" asked Dr. Jones'
    )
    assert text_to_sentences(text) == [
        ["Mr.", "J.", "Smith", "'s", "firm", ",", "Anglo-Dutch", "Inc.", ",", "paid", "$",
         "1,000.50", "at", "10:30", "a.m.", "It", "did", "n't", "help", "."],
        ["Prices", "rose", "3.5", "%", "!"],
        ['"', "Why", "?", '"', "asked", "Dr.", "Jones"],
    ]  # fmt: skip


def test_text_to_sentences_empty() -> None:
    assert text_to_sentences("") == []
    assert text_to_sentences("\n\n  \n") == []


def test_text_to_sentences_is_consistent_with_parts() -> None:
    text = "One two. Three four!\n\nFive"
    assert text_to_sentences(text) == [tokenize(s) for s in split_sentences(text)]


# ---------------------------------------------------------------- inputs that must not trip it
def test_tabs_crlf_and_other_whitespace() -> None:
    text = "Merkel\tmet  Macron\u00a0in\tBerlin.\r\n\r\nThey\ttalked.\r\nIt went well."
    assert split_sentences(text) == ["Merkel met Macron in Berlin.", "They talked.",
                                     "It went well."]
    assert text_to_sentences(text) == [["Merkel", "met", "Macron", "in", "Berlin", "."],
                                       ["They", "talked", "."], ["It", "went", "well", "."]]


@pytest.mark.parametrize("text", ["", " ", "\n\n\t\r\n", "\u00a0\u2003"])
def test_blank_text_has_no_sentences(text: str) -> None:
    assert tokenize(text) == [] and split_sentences(text) == [] and text_to_sentences(text) == []


def test_punctuation_only_text() -> None:
    assert text_to_sentences("...") == [["..."]]
    assert text_to_sentences("!!! ???") == [["!", "!", "!", "?", "?", "?"]]


def test_very_long_token_and_text() -> None:
    word = "a" * 5000
    assert tokenize(f"{word}.") == [word, "."]
    text = "Merkel met Macron. " * 4000  # 16,000 tokens
    sentences = text_to_sentences(text)
    assert len(sentences) == 4000 and sum(map(len, sentences)) == 16_000
