"""Tests of ``train.py --train FILE --dev FILE [--test FILE]``: files of one's own in any
labelled format (CoNLL columns in IOB1/IOB2/BIOES, span JSON lines, spaCy DocBin) instead of a
data set, each bad file or combination a one-line error (naming the file, the line and the
span) before any training, and a run that records the files it trained on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TINY_FLAGS

from docgraph.cli import evaluate_main, train_main
from docgraph.config import ExperimentConfig
from docgraph.config.fields import ConfigError
from docgraph.data.registry import corpus_files, load_corpus, load_dataset, sample_data_dir
from docgraph.data.span_jsonl import write_span_jsonl

SAMPLE = sample_data_dir()


def _error(capsys, *argv: str) -> str:
    """The one line ``train.py ARGV`` fails with (exit status 2)."""
    with pytest.raises(SystemExit) as info:
        train_main([*argv, "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err.removeprefix("error: ").rstrip("\n")


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


GOOD = {"text": "Acme hired Ana Ruiz.", "label": [[0, 4, "ORG"], [11, 19, "PER"]]}


@pytest.mark.parametrize(("record", "message"), [
    ({"text": "Big Canadian firms", "label": [[4, 9, "MISC"]]},
     ":2: span [4, 9, 'MISC'] ('Canad') does not end on a token boundary (token 'Canadian' "
     "ends at 12)"),
    ({"text": "Big Canadian firms", "label": [[0, 12, "ORG"], [4, 12, "MISC"]]},
     ":2: span [4, 12, 'MISC'] ('Canadian') overlaps span [0, 12, 'ORG'] ('Big Canadian')"),
    ('{"text": "Big Canadian firms", "label": [', ":2: expected a JSON object with a \"text\" "
                                                   "field, got invalid JSON"),
])
def test_a_bad_span_or_line_names_the_file_the_line_and_the_span(tmp_path, capsys, record,
                                                                  message):
    bad = _jsonl(tmp_path / "train.jsonl", GOOD, record)
    assert _error(capsys, "--train", str(bad), "--dev", str(SAMPLE / "dev.txt"),
                  "--output-dir", str(tmp_path / "run")).startswith(f"{bad}{message}")
    # the dev and test files are read before training too
    assert _error(capsys, "--train", str(SAMPLE / "train.txt"), "--dev", str(SAMPLE / "dev.txt"),
                  "--test", str(bad), "--output-dir", str(tmp_path / "run")
                  ).startswith(f"{bad}{message}")
    assert not (tmp_path / "run").exists()


def test_a_bad_column_file_names_its_line(tmp_path, capsys):
    bad = tmp_path / "train.bioes"
    bad.write_text("Acme S-ORG\nhired O\nAna B-PER\nRuiz E-PER\nsaid PER\n")
    assert _error(capsys, "--train", str(bad), "--dev-fraction", "0.2") == (
        f"{bad}:5: invalid tag 'PER' in the last column: expected 'O' or B-/I-/E-/S- followed "
        "by an entity type")


def test_a_missing_file_or_one_of_an_unknown_format(tmp_path, capsys):
    message = _error(capsys, "--train", str(tmp_path / "nope.jsonl"), "--dev-fraction", "0.2")
    assert message.startswith(f"--train {tmp_path / 'nope.jsonl'}: file not found; expected a "
                              "labelled file: CoNLL columns (.bio, ")
    assert "span JSON lines (.jsonl) or a spaCy DocBin (.spacy)" in message
    table = tmp_path / "train.csv"
    table.write_text("word,tag\nAcme,B-ORG\n")
    assert _error(capsys, "--train", str(table), "--dev-fraction", "0.2").startswith(
        f"{table}:1: unknown format (suffix '.csv', and the file is neither span JSON lines nor "
        "CoNLL columns): expected CoNLL columns")
    # under another suffix, a file whose head is one of the formats is read as that format
    spans = _jsonl(tmp_path / "spans.json", GOOD, GOOD)
    config = ExperimentConfig(train_file=str(spans), dev_fraction=0.5)
    assert corpus_files(config) == {"train": spans}
    assert [d.tags for d in load_corpus(config)["train"]] == [["B-ORG", "O", "B-PER", "I-PER",
                                                               "O"]] * 2


def test_a_docbin_error_names_the_document(tmp_path, capsys):
    spacy = pytest.importorskip("spacy", reason="spaCy is not installed")
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    out = DocBin()
    for text in ("Acme hired Ana.", " \n "):
        out.add(nlp(text))
    out.to_disk(tmp_path / "train.spacy")
    assert _error(capsys, "--train", str(tmp_path / "train.spacy"), "--dev-fraction", "0.2") == (
        f"{tmp_path / 'train.spacy'}: document 1: 'train-1' has no tokens (text ' \\n ')")


def test_combinations_that_cannot_work(tmp_path, capsys):
    train, dev = str(SAMPLE / "train.txt"), str(SAMPLE / "dev.txt")
    assert _error(capsys, "--train", train) == (
        "--train needs a dev split: --dev FILE, or --dev-fraction X to hold out a seeded share "
        "X of the training documents as dev")
    assert _error(capsys, "--train", train, "--dev", dev, "--dev-fraction", "0.1").startswith(
        "--dev and --dev-fraction 0.1 cannot be combined")
    assert _error(capsys, "--dev", dev) == (
        "--dev (the dev_file setting) needs --train FILE: the files of one's own go together")
    assert _error(capsys, "--train", train, "--dev", dev, "--dataset", "conll03") == (
        "--dataset cannot be combined with --train: --train, --dev and --test name the "
        "corpus's files")
    assert _error(capsys, "--train", train, "--dev", dev, "--data-dir", str(tmp_path)
                  ).startswith("--data-dir cannot be combined with --train")
    one = _jsonl(tmp_path / "one.jsonl", GOOD)
    assert _error(capsys, "--train", str(one), "--dev-fraction", "0.2") == (
        f"{one}: 1 training document(s): a dev split needs at least two (one to train on, one "
        "to hold out)")
    with pytest.raises(ConfigError, match="--train needs a dev split"):
        load_corpus(ExperimentConfig(train_file=train))


def test_the_splits_of_files_of_ones_own(tmp_path):
    config = ExperimentConfig(train_file=str(SAMPLE / "train.txt"), dev_fraction=0.2)
    assert config.file_splits == ("train",)
    config = ExperimentConfig(train_file="a.txt", dev_file="b.jsonl", test_file="c.spacy")
    assert config.file_splits == ("train", "dev", "test")
    # the preset keys: the same settings
    assert ExperimentConfig.from_dict({"train_file": "a.txt", "dev_file": "b.txt"}).dev_file \
        == "b.txt"


@pytest.mark.slow
def test_a_run_on_files_records_them_and_evaluate_finds_its_test_file(tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = load_dataset("sample")
    write_span_jsonl(tmp_path / "dev.jsonl", data["dev"])
    (tmp_path / "test.iob").write_text((SAMPLE / "test.txt").read_text())
    status = train_main(["--train", str(SAMPLE / "train.txt"), "--dev", "dev.jsonl",
                         "--test", "test.iob", "--output-dir", "run", "--epochs", "1",
                         "--processes", "1", *TINY_FLAGS])
    assert status == 0
    assert "test F1" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {k: metrics["config"][k] for k in ("train_file", "dev_file", "test_file")} == {
        "train_file": str(SAMPLE / "train.txt"), "dev_file": str(tmp_path / "dev.jsonl"),
        "test_file": str(tmp_path / "test.iob")}
    assert {"dev", "test"} <= set(metrics)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["test_file"] == str(tmp_path / "test.iob")
    # evaluate.py without --data scores the run's own test file
    assert evaluate_main(["--model", "run", "--device", "cpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"test ({len(data['test'])} documents)" in out
    scored = json.loads((tmp_path / "run" / "test_metrics.json").read_text())
    assert scored["test"]["f1"] == pytest.approx(metrics["test"]["f1"])

    # no test file: dev held out of the training file, no test scores
    status = train_main(["--train", str(SAMPLE / "train.txt"), "--dev-fraction", "0.2",
                         "--output-dir", "run2", "--epochs", "1", "--processes", "1",
                         *TINY_FLAGS])
    assert status == 0
    assert "no test file" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "run2" / "metrics.json").read_text())
    assert "test" not in metrics and metrics["config"]["test_file"] is None
    with pytest.raises(SystemExit):
        evaluate_main(["--model", "run2", "--device", "cpu", "--quiet"])
    assert capsys.readouterr().err == (
        f"error: the model was trained on {SAMPLE / 'train.txt'} without a test file: give "
        "--data FILE\n")
