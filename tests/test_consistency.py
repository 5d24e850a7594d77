"""Label consistency in decoding (docgraph/tagging/consistency.py), on hand-made documents."""

import pytest

from docgraph.tagging.consistency import consistent_tagging
from docgraph.tagging.result import Tagging

TOKENS = [["Quenby", "met", "Halvorsen", "Optics", "."],
          ["Later", "Quenby", "left", "Halvorsen", "Optics", "."],
          ["quenby", "and", "QUENBY", "Quenby", "Array"]]


def test_each_name_takes_the_type_with_the_highest_summed_score():
    tagging = Tagging([["B-PER", "O", "B-PER", "I-PER", "O"],
                       ["O", "O", "O", "B-ORG", "I-ORG", "O"],
                       ["O", "O", "O", "B-MISC", "I-MISC"]], [[0.9, 0.6], [0.95], [0.8]])
    out = consistent_tagging(TOKENS, tagging, min_votes=float("inf"))
    assert out.tags[0] == ["B-PER", "O", "B-ORG", "I-ORG", "O"]  # 0.95 ORG beats 0.6 PER
    assert out.tags[1:] == tagging.tags[1:]
    assert out.scores == [[0.9, 0.95], [0.95], [0.8]]  # the relabelled one: its type's mean


def test_untagged_repeats_of_the_same_case_shape_are_tagged_once_the_votes_suffice():
    tagging = Tagging([["B-PER", "O", "O", "O", "O"], ["O"] * 6, ["O"] * 5],
                      [[0.7], [], []])
    assert consistent_tagging(TOKENS, tagging, min_votes=1.0).tags == tagging.tags
    out = consistent_tagging(TOKENS, tagging, min_votes=0.5)
    assert out.tags[1] == ["O", "B-PER", "O", "O", "O", "O"]
    # "quenby" and "QUENBY" have another case shape; "Quenby Array" starts a name too
    assert out.tags[2] == ["O", "O", "O", "B-PER", "O"]
    assert out.scores == [[0.7], [0.7], [0.7]]


def test_a_repeat_next_to_an_entity_is_left_alone():
    tokens = [["Quenby", "spoke", "."], ["Marisol", "Quenby", "left"]]
    tagging = Tagging([["B-PER", "O", "O"], ["B-LOC", "O", "O"]], [[0.9], [0.4]])
    out = consistent_tagging(tokens, tagging, min_votes=0.5)
    assert out.tags[1] == ["B-LOC", "O", "O"]


def test_scores_are_required():
    with pytest.raises(ValueError, match="scores"):
        consistent_tagging(TOKENS, Tagging([["O"] * 5, ["O"] * 6, ["O"] * 5]))


def test_a_confident_mention_keeps_its_own_type():
    tagging = Tagging([["B-PER", "O", "B-PER", "I-PER", "O"],
                       ["O", "O", "O", "B-ORG", "I-ORG", "O"],
                       ["O", "O", "O", "B-MISC", "I-MISC"]], [[0.9, 0.6], [0.95], [0.8]])
    assert consistent_tagging(TOKENS, tagging, float("inf"), relabel_below=0.6).tags == \
        tagging.tags
    assert consistent_tagging(TOKENS, tagging, float("inf"), relabel_below=0.61).tags[0] == \
        ["B-PER", "O", "B-ORG", "I-ORG", "O"]


def _scan(tokens, tagging, min_votes, relabel_below):
    """The rule as written in the module's docstring, by brute force: every name against every
    position of every sentence."""
    from collections import defaultdict

    from docgraph.data.tags import spans
    from docgraph.data.tokenize import case_shape

    def key_of(e):
        return tuple(w.lower() for w in tokens[e.sentence][e.start:e.end])

    found = list(tagging.entities())
    votes = defaultdict(lambda: defaultdict(float))
    for e in found:
        votes[key_of(e)][e.type] += e.score
    winner = {k: max(v.items(), key=lambda item: (item[1], item[0])) for k, v in votes.items()}

    def mean(key, type_):
        scores = [e.score for e in found if key_of(e) == key and e.type == type_]
        return sum(scores) / len(scores)

    def mark(sentence, start, end, type_):
        sentence[start:end] = [f"B-{type_}"] + [f"I-{type_}"] * (end - start - 1)

    tags = [list(t) for t in tagging.tags]
    given = {}
    for e in found:
        type_ = winner[key_of(e)][0]
        keep = type_ == e.type or e.score >= relabel_below
        if not keep:
            mark(tags[e.sentence], e.start, e.end, type_)
        given[(e.sentence, e.start, e.end)] = e.score if keep else mean(key_of(e), type_)
    for key, (type_, weight) in sorted(winner.items(), key=lambda item: -len(item[0])):
        if weight < min_votes:
            continue
        shapes = {case_shape(tokens[e.sentence][e.start]) for e in found if key_of(e) == key}
        for s, words in enumerate(tokens):
            for start in range(len(words) - len(key) + 1):
                end = start + len(key)
                if (tuple(w.lower() for w in words[start:end]) == key
                        and case_shape(words[start]) in shapes
                        and all(t == "O" for t in tags[s][max(start - 1, 0):end + 1])):
                    mark(tags[s], start, end, type_)
                    given[(s, start, end)] = mean(key, type_)
    return tags, [[given[(s, a, b)] for _, a, b in spans(t)] for s, t in enumerate(tags)]


@pytest.mark.parametrize("seed", range(40))
def test_equals_a_brute_force_scan_on_random_documents(seed):
    import random

    rng = random.Random(seed)
    words = ["New", "new", "NEW", "York", "york", "Quenby", "QUENBY", "Optics", "and", "."]
    tokens = [[rng.choice(words) for _ in range(rng.randint(1, 9))] for _ in range(6)]
    tags, scores = [], []
    for sentence in tokens:
        sentence_tags, sentence_scores, i = ["O"] * len(sentence), [], 0
        while i < len(sentence):
            n = rng.randint(1, 3)
            if rng.random() < 0.4 and i + n <= len(sentence):
                type_ = rng.choice(["PER", "ORG", "LOC"])
                sentence_tags[i:i + n] = [f"B-{type_}"] + [f"I-{type_}"] * (n - 1)
                sentence_scores.append(round(rng.random(), 2))
                i += n + rng.randint(0, 1)
            else:
                i += 1
        tags.append(sentence_tags)
        scores.append(sentence_scores)
    tagging = Tagging(tags, scores)
    for min_votes, relabel_below in ((0.5, 1.0), (1.0, 0.7), (0.0, 0.0), (float("inf"), 2.0)):
        out = consistent_tagging(tokens, tagging, min_votes, relabel_below)
        assert (out.tags, out.scores) == _scan(tokens, tagging, min_votes, relabel_below)


def test_a_model_directory_declares_its_default_and_a_door_overrides_it(tmp_path):
    import shutil

    from docgraph.config.tagging import LABEL_CONSISTENCY
    from docgraph.persistence.manifest import save_label_consistency, verify_manifest
    from docgraph.persistence.shipped import shipped_model_dir
    from docgraph.tagging.tagger import Tagger

    model = tmp_path / "model"
    shutil.copytree(shipped_model_dir("ontonotes"), model)
    assert Tagger.load(model).consistency is None  # the paper's decoding unless declared
    assert save_label_consistency(model, True) is False
    verify_manifest(model)  # the new config.json is sealed and in the manifest
    assert Tagger.load(model).consistency == LABEL_CONSISTENCY
    assert Tagger.load(model, consistency=False).consistency is None
    assert Tagger.load("conll03").consistency == LABEL_CONSISTENCY  # chosen on its dev
