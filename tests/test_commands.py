"""Tests of :mod:`docgraph.cli.commands`, the work behind the scripts, end to end through
``scripts/train.py``, ``scripts/evaluate.py`` and ``scripts/predict.py``."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import (
    ROOT,
    TINY_FLAGS,
    as_in_a_terminal,
    child_processes,
    needs_proc,
    run_script,
    script_env,
    still_running,
)

from docgraph.cli import evaluate_main, predict_main, train_main
from docgraph.data.conll import looks_like_conll, read_conll, write_conll
from docgraph.data.registry import load_dataset
from docgraph.data.tokenize import text_to_sentences
from docgraph.tagging.tagger import as_document


@pytest.mark.slow
def test_train_and_resume_through_the_cli(tmp_path):
    # one process (two processes and their resume: test_processes.py)
    out = tmp_path / "run"
    res = run_script("train", "--dataset", "sample", "--output-dir", out, *TINY_FLAGS,
                     "--epochs", "1", "--lr", "0.03", "--processes", "1")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "dev F1" in res.stdout and "test F1" in res.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == 1 and metrics["config"]["model"]["hidden"] == 16
    assert "train.py" in metrics["command"] and "--hidden 16" in metrics["command"]

    res = run_script("train", "--resume", out, "--epochs", "2", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "test F1" in res.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == 2  # continued from epoch 1, with the saved tiny model config
    assert metrics["config"]["model"]["hidden"] == 16
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2]


def test_evaluate_writes_metrics_and_predictions(model_dir, tmp_path):
    res = run_script("evaluate", "--model", model_dir, "--split", "test",
                     "--output-dir", tmp_path, "--device", "cpu")
    assert res.returncode == 0, res.stderr
    saved = json.loads((tmp_path / "test_metrics.json").read_text())
    run_metrics = json.loads((model_dir / "metrics.json").read_text())
    assert set(saved) == {"test", "consistency"}
    assert set(saved["test"]) == set(run_metrics["test"])
    assert saved["test"]["f1"] == pytest.approx(run_metrics["test"]["f1"])
    assert f"{saved['test']['f1']:.2f}" in res.stdout
    # the same document-consistency figures as training's final evaluation, and printed
    assert saved["consistency"] == run_metrics["consistency"]["test"]
    recurrent = saved["consistency"]["recurrent"]["f1"]
    assert f"recurring word {recurrent:.2f}" in res.stdout
    test_docs = load_dataset("sample", splits=("test",))["test"]
    lines = (tmp_path / "test_predictions.conll").read_text().splitlines()
    assert sum(line.startswith("-DOCSTART-") for line in lines) == len(test_docs)
    rows = [line.split() for line in lines if line and not line.startswith("-DOCSTART-")]
    assert len(rows) == sum(d.num_tokens for d in test_docs)
    assert all(len(r) == 3 for r in rows)  # word gold pred
    assert [r[0] for r in rows] == [t for d in test_docs for t in d.tokens]
    assert [r[1] for r in rows] == [t for d in test_docs for t in d.tags]


#: ``evaluate.py`` whose scoring sends this process ``signal.<argv[1]>`` and then waits.
_SIGNALLED_EVALUATE = """
import os, signal, sys, time
from docgraph.tagging.tagger import Tagger

def evaluate(self, *args, **kwargs):
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(60)

Tagger.evaluate = evaluate
from docgraph.cli import evaluate_main
sys.exit(evaluate_main(sys.argv[2:]))
"""


@pytest.mark.parametrize(("name", "status", "reason"),
                         [("SIGTERM", 143, "stopped by SIGTERM"), ("SIGINT", 130, "interrupted")])
def test_a_stopped_evaluate_says_so_in_one_line(model_dir, tmp_path, name, status, reason):
    # SIGTERM killed evaluate.py outright and Ctrl-C ended it with a traceback
    res = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_EVALUATE, name, "--model", str(model_dir),
         "--split", "test", "--output-dir", str(tmp_path / "out"), "--device", "cpu",
         "--quiet"],
        capture_output=True, text=True, timeout=240, env=script_env(), cwd=ROOT,
        preexec_fn=as_in_a_terminal)
    assert res.returncode == status, res.stderr
    out = tmp_path / "out"
    assert res.stderr.strip() == (f"{reason}: {out / 'test_metrics.json'} and "
                                  f"{out / 'test_predictions.conll'} were not written")
    assert not out.exists() or not list(out.iterdir())


def test_evaluate_on_a_conll_file(model_dir, tmp_path, capsys):
    docs = load_dataset("sample", splits=("dev",))["dev"][:2]
    write_conll(tmp_path / "mine.conll", docs)
    assert evaluate_main(["--model", str(model_dir), "--data", str(tmp_path / "mine.conll"),
                          "--output-dir", str(tmp_path), "--device", "cpu"]) == 0
    assert "mine" in json.loads((tmp_path / "mine_metrics.json").read_text())
    assert (tmp_path / "mine_predictions.conll").is_file()


def test_predict_empty_file_through_the_script(model_dir, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    res = run_script("predict", "--model", model_dir, tmp_path / "empty.txt", "--device", "cpu")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == (
        f"error: {tmp_path / 'empty.txt'}: no tokens to tag (empty, or only whitespace and "
        "control characters); expected text or CoNLL token lines (--allow-empty: write an "
        "empty output instead)")
    res = run_script("predict", "--model", model_dir, tmp_path / "empty.txt", "--device", "cpu",
                     "--allow-empty")
    assert res.returncode == 0 and res.stdout == ""
    assert res.stderr.strip() == f"{tmp_path / 'empty.txt'}: no tokens, nothing to tag"


def test_predict_raw_text_jsonl(model_dir, tmp_path):
    test_docs = load_dataset("sample", splits=("test",))["test"]
    text = "\n\n".join(" ".join(s.tokens) for s in test_docs[0].sentences)
    (tmp_path / "story.txt").write_text(text)
    res = run_script("predict", "--model", model_dir, tmp_path / "story.txt", "--device", "cpu")
    assert res.returncode == 0, res.stderr
    assert "F1" not in res.stdout and "F1" not in res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert records, "the trained model finds entities in a sample document"
    for r in records:
        assert set(r) == {"doc", "sentence", "start", "end", "type", "text", "start_char",
                          "end_char"}
        assert r["doc"] == "story" and 0 <= r["start"] < r["end"]
        assert text[r["start_char"]:r["end_char"]] == r["text"]
        assert r["type"] in {"PER", "LOC", "ORG", "MISC"}
        assert r["text"] in text


def test_predict_conll_keeps_documents(model_dir, tmp_path, capsys):
    docs = load_dataset("sample", splits=("dev",))["dev"][:3]
    write_conll(tmp_path / "in.conll", docs)
    out = tmp_path / "out.conll"
    assert predict_main(["--model", str(model_dir), str(tmp_path / "in.conll"),
                         "--format", "conll", "--output", str(out), "--device", "cpu"]) == 0
    tagged = read_conll(out)
    assert len(tagged) == 3
    for got, ref in zip(tagged, docs):
        assert [s.tokens for s in got.sentences] == [s.tokens for s in ref.sentences]
    assert capsys.readouterr().out == ""


def test_predict_tokenized_text_and_unknown_labels(model_dir, tmp_path, capsys):
    # gold tags in an input CoNLL file are ignored, even of types the model does not know
    (tmp_path / "odd.conll").write_text(
        "-DOCSTART- O\n\nKalvenia B-FOO\nbeat O\nSarenta B-ORG\n\n")
    (tmp_path / "tok.txt").write_text("Kalvenia beat Ostavia .\nVeldania won .\n")
    assert predict_main(["--model", str(model_dir), str(tmp_path / "odd.conll"),
                         str(tmp_path / "tok.txt"), "--tokenized", "--device", "cpu"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # Kalvenia, Ostavia, Sarenta and Veldania are frequent LOC names of the sample corpus
    assert [(r["doc"], r["sentence"], r["start"], r["end"], r["type"], r["text"])
            for r in records] == [
        ("odd-0", 0, 0, 1, "LOC", "Kalvenia"), ("odd-0", 0, 2, 3, "LOC", "Sarenta"),
        ("tok", 0, 0, 1, "LOC", "Kalvenia"), ("tok", 0, 2, 3, "LOC", "Ostavia"),
        ("tok", 1, 0, 1, "LOC", "Veldania")]


PROSE = ("Angela Merkel met Emmanuel Macron in Berlin on Monday. "
         "Merkel said the talks went well.")


def test_predict_reads_prose_as_text(model_dir, tmp_path, capsys):
    (tmp_path / "prose.txt").write_text(PROSE + "\n")
    out = tmp_path / "prose.conll"
    assert predict_main(["--model", str(model_dir), str(tmp_path / "prose.txt"),
                         "--format", "conll", "--output", str(out), "--device", "cpu"]) == 0
    assert capsys.readouterr().err == ""
    [doc] = read_conll(out)
    assert [list(s.tokens) for s in doc.sentences] == text_to_sentences(PROSE)
    assert len(doc.sentences) == 2 and doc.sentences[1].tokens[-2:] == ("well", ".")
    assert predict_main(["--model", str(model_dir), str(tmp_path / "prose.txt"),
                         "--device", "cpu"]) == 0
    for line in capsys.readouterr().out.splitlines():
        record = json.loads(line)
        assert record["doc"] == "prose" and record["sentence"] in (0, 1)
        assert record["text"] in PROSE


@pytest.mark.parametrize(("text", "expected"), [
    ("", False),
    ("\n \n\t\n", False),
    (PROSE + "\n", False),
    ("Tavistre beat Brennock .\nVeldania won .\n", False),  # pre-tokenised text
    ("Name\tAge\nAnn\t42\n", False),
    ("-DOCSTART- O\n\nBerlin B-LOC\n", True),
    ("EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP S-PER\n", True),
    ("Kalvenia\tB-LOC\nwon\tO\n.\tO\n", True),
    ("New\tB-LOC\nYork\tE-LOC\nis O\n" * 10 + "Oops\n", True),  # one bad line in 31
    ("the talks went O\nwell, said Merkel.\n", False),
])
def test_looks_like_conll(text, expected):
    assert looks_like_conll(text) is expected


@pytest.mark.parametrize("content", ["", "\n\n   \n\t\n", "\x00\n\x01 \x7f\x9f\n"])
def test_predict_empty_input_gives_empty_output(model_dir, tmp_path, capsys, caplog, content):
    (tmp_path / "empty.txt").write_bytes(b"\n" * 9000 + content.encode())  # NULs past the head
    argv = ["--model", str(model_dir), str(tmp_path / "empty.txt"), "--device", "cpu"]
    _expect_usage_error(predict_main, argv, capsys, f"{tmp_path / 'empty.txt'}: no tokens to "
                                                    "tag (empty, or only whitespace and control")
    argv.append("--allow-empty")
    assert predict_main(argv) == 0
    assert capsys.readouterr().out == ""
    assert caplog.messages == [f"{tmp_path / 'empty.txt'}: no tokens, nothing to tag"]
    assert predict_main([*argv, "--format", "conll"]) == 0
    assert capsys.readouterr().out == "-DOCSTART- O\n\n"
    # an empty file next to a real one
    (tmp_path / "real.txt").write_text("Kalvenia won .")
    assert predict_main([*argv[:3], str(tmp_path / "real.txt"), *argv[3:]]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["doc"], r["text"]) for r in records] == [("real", "Kalvenia")]


def test_a_nul_byte_never_becomes_a_token_or_an_entity(model_dir, tmp_path, capsys):
    # past the first bytes, which predict.py checks for NULs: the tokenizer reads them as spaces
    text = "Kalvenia won .\n" * 700 + "\x00\n\x00 Kalvenia\x00won\x00.\x00\n"
    (tmp_path / "nul.txt").write_text(text)
    for flags in ([], ["--tokenized"], ["--documents", "lines"]):
        assert predict_main(["--model", str(model_dir), str(tmp_path / "nul.txt"), "--format",
                             "jsonl-tokens", "--device", "cpu", *flags]) == 0
        tokens = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert len(tokens) == 3 * 701, flags
        assert not [t for t in tokens if not t["text"].isprintable()], flags
        assert [text[t["start_char"]:t["end_char"]] for t in tokens[-3:]] == [
            "Kalvenia", "won", "."]
    assert list(as_document("Kalvenia\x00won\n\x00\n", "doc", tokenized=True).tokens) == [
        "Kalvenia", "won"]
    assert list(as_document("Kalvenia\x00won.\x00", "doc").tokens) == ["Kalvenia", "won", "."]


def test_predict_non_utf8_input_names_file_and_line(model_dir, tmp_path, capsys):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Kalvenia won .\nAnd then caf\u00e9 .\n".encode("latin-1"))
    _expect_usage_error(predict_main, ["--model", str(model_dir), str(bad), "--device", "cpu"],
                        capsys, f"{bad}:2: expected UTF-8 text, got byte 0xe9 at column 13")
    conll = tmp_path / "latin1.conll"
    conll.write_bytes("-DOCSTART- O\n\ncaf\u00e9 O\n".encode("latin-1"))
    for fmt in ("auto", "conll", "text"):
        _expect_usage_error(predict_main, ["--model", str(model_dir), str(conll),
                                           "--input-format", fmt, "--device", "cpu"],
                            capsys, f"{conll}:3: expected UTF-8 text")


def test_predict_utf8_bom_and_crlf(model_dir, tmp_path, capsys):
    (tmp_path / "bom.conll").write_bytes(
        "\ufeff-DOCSTART- O\r\n\r\nKalvenia O\r\nwon O\r\n\r\n".encode())
    (tmp_path / "bom.txt").write_bytes("\ufeffKalvenia won .\r\n".encode())
    assert predict_main(["--model", str(model_dir), str(tmp_path / "bom.conll"),
                         str(tmp_path / "bom.txt"), "--format", "conll", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.count("-DOCSTART-") == 2 and "\ufeff" not in out
    assert [line.split()[0] for line in out.splitlines() if line and "DOCSTART" not in line] \
        == ["Kalvenia", "won", "Kalvenia", "won", "."]


def test_evaluate_rejects_bad_data_files_in_one_line(model_dir, tmp_path, capsys):
    base = ["--model", str(model_dir), "--output-dir", str(tmp_path), "--device", "cpu"]
    bad = tmp_path / "latin1.conll"
    bad.write_bytes("-DOCSTART- O\n\nBerlin B-LOC\ncaf\u00e9 O\n".encode("latin-1"))
    _expect_usage_error(evaluate_main, [*base, "--data", str(bad)], capsys,
                        f"{bad}:4: expected UTF-8 text")
    (tmp_path / "empty.conll").write_text("")
    _expect_usage_error(evaluate_main, [*base, "--data", str(tmp_path / "empty.conll")],
                        capsys, f"{tmp_path / 'empty.conll'}:1: expected token lines")
    (tmp_path / "prose.txt").write_text(PROSE + "\n")
    _expect_usage_error(evaluate_main, [*base, "--data", str(tmp_path / "prose.txt")],
                        capsys, f"{tmp_path / 'prose.txt'}:1: invalid tag 'well.'")
    (tmp_path / "unknowntag.conll").write_text("-DOCSTART- O\n\nBerlin B-LOC\nis O\n\n"
                                               "Acme B-XYZ\nrose O\n")
    _expect_usage_error(evaluate_main, [*base, "--data", str(tmp_path / "unknowntag.conll")],
                        capsys, f"{tmp_path / 'unknowntag.conll'}:6: entity type 'XYZ' is not "
                        "one of the model's types (")
    _expect_usage_error(evaluate_main, [*base, "--data", str(tmp_path / "missing.conll")],
                        capsys, "missing.conll: file not found")
    _expect_usage_error(evaluate_main, [*base, "--data", str(tmp_path)], capsys,
                        f"{tmp_path}: expected a text file, got a directory")
    assert not list(tmp_path.glob("*_metrics.json"))


def test_evaluate_long_tokens_and_documents(model_dir, tmp_path, capsys):
    long_token = "K" * 1200
    sentence = [("Officials", "O"), ("in", "O"), ("Kalvenia", "B-LOC"), (long_token, "O"),
                ("met", "O"), (".", "O")]
    lines = ["-DOCSTART- O", "", ". O", "! O", ""]  # a document of punctuation only
    lines += ["-DOCSTART- O", ""] + ["\t".join(pair) for pair in sentence] * 3400 + [""]
    (tmp_path / "big.conll").write_text("\n".join(lines) + "\n")
    assert evaluate_main(["--model", str(model_dir), "--data", str(tmp_path / "big.conll"),
                          "--output-dir", str(tmp_path), "--device", "cpu"]) == 0
    assert "big (2 documents)" in capsys.readouterr().out
    scores = json.loads((tmp_path / "big_metrics.json").read_text())["big"]
    assert scores["f1"] > 50
    rows = [line.split() for line in (tmp_path / "big_predictions.conll").read_text().splitlines()
            if line and not line.startswith("-DOCSTART-")]
    assert len(rows) == 2 + 6 * 3400 and max(len(r[0]) for r in rows) == 1200


def _expect_usage_error(main, argv, capsys, match):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert match in err[0]


def test_bad_arguments_exit_2_with_one_line(model_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DOCGRAPH_DATA_DIR", raising=False)
    _expect_usage_error(train_main, ["--dataset", "conll03", "--output-dir", str(tmp_path),
                                     "--quiet"], capsys, "DOCGRAPH_DATA_DIR")
    _expect_usage_error(train_main, ["--dataset", "conll03", "--data-dir",
                                     str(tmp_path / "nope"), "--quiet"], capsys, "nope")
    _expect_usage_error(train_main, ["--config", str(tmp_path / "missing.toml"), "--quiet"],
                        capsys, "missing.toml")
    _expect_usage_error(train_main, ["--resume", str(tmp_path), "--quiet"], capsys, "last.pt")
    _expect_usage_error(evaluate_main, ["--model", str(tmp_path / "nomodel")], capsys,
                        "nomodel")
    _expect_usage_error(predict_main, ["--model", str(tmp_path / "nomodel"), "x.txt"], capsys,
                        "nomodel")
    _expect_usage_error(predict_main, ["--model", str(model_dir), str(tmp_path / "no.txt"),
                                       "--device", "cpu"], capsys, "no.txt")
    (tmp_path / "foreign.conll").write_text("-DOCSTART- O\n\nAcme B-FOO\nwins O\n\n")
    _expect_usage_error(evaluate_main, ["--model", str(model_dir), "--data",
                                        str(tmp_path / "foreign.conll"), "--device", "cpu"],
                        capsys, "FOO")
    (tmp_path / "bad.toml").write_text("[train\nepochs = 1\n")
    _expect_usage_error(train_main, ["--config", str(tmp_path / "bad.toml"), "--quiet"],
                        capsys, "invalid TOML")
    (tmp_path / "unknown.toml").write_text("[train]\nepoch = 1\n")
    _expect_usage_error(train_main, ["--config", str(tmp_path / "unknown.toml"), "--quiet"],
                        capsys, "epoch")


def test_unknown_dataset_through_subprocess(tmp_path):
    res = run_script("train", "--dataset", "imdb", "--output-dir", tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "invalid choice" in res.stderr


def test_error_inside_training_processes_is_one_line_exit_2(tmp_path, capfd):
    # The data directory exists, so the parent starts two training processes; the corpus is
    # malformed, so rank 0 fails reading it and the command ends with its one-line error
    # (written by the child process, hence capfd). --small-corpus-tokens 0: the parent reads
    # no corpus to size it (it would fail there, before the processes start).
    for split in ("train", "dev", "test"):
        (tmp_path / f"{split}.txt").write_text("-DOCSTART- O\n\nAcme B-ORG extra-column\n\n")
    (tmp_path / "train.txt").write_text("-DOCSTART- O\n\nAcme X-ORG\n\n")
    _expect_usage_error(train_main, ["--dataset", "column", "--data-dir", str(tmp_path),
                                     "--processes", "2", "--device", "cpu", "--quiet",
                                     "--small-corpus-tokens", "0",
                                     "--output-dir", str(tmp_path / "run")],
                        capfd, "train.txt:3: invalid tag 'X-ORG'")


@pytest.mark.slow
def test_seeds_in_two_processes_write_one_summary(tmp_path):
    out = tmp_path / "seeds"
    res = run_script("train", "--output-dir", out, *TINY_FLAGS, "--epochs", "1",
                     "--batch-tokens", "600", "--processes", "2", "--seeds", "1", "2")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.count("test F1 over seeds [1, 2]") == 1  # printed by rank 0 only
    summary = json.loads((out / "summary.json").read_text())
    runs = [json.loads((out / f"seed-{s}" / "metrics.json").read_text()) for s in (1, 2)]
    assert [r["processes"] for r in runs] == [2, 2]
    # the summary is rank 0's, over both seeds' test scores (rank 1 holds none to write)
    mean = (runs[0]["test"]["f1"] + runs[1]["test"]["f1"]) / 2
    assert summary["test_f1_mean"] == pytest.approx(mean)
    assert summary["seeds"] == [1, 2]


def test_evaluate_threshold_override(model_dir, tmp_path, capsys):
    from docgraph.graph.splits import prepare_run_split
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
    from docgraph.tagging.inference import evaluate

    assert evaluate_main(["--model", str(model_dir), "--split", "dev", "--threshold", "100",
                          "--output-dir", str(tmp_path), "--device", "cpu"]) == 0
    payload = json.loads((tmp_path / "dev_metrics.json").read_text())
    assert payload["threshold"] == 100.0  # the override is recorded beside the scores
    written = payload["dev"]
    # reference: the same model with nothing pruned (no token's entropy exceeds 100)
    model, vocabs, config = load_model_dir(model_dir, overrides=ModelOverrides(threshold=100.0))
    assert model.config.threshold == config.model.threshold == 100.0  # one copy
    assert model.document_graph.uncertainty.threshold == 100.0
    prepared = prepare_run_split(config, vocabs, "dev")
    scores, _ = evaluate(model, prepared, vocabs, config.train.eval_batch_tokens)
    assert written["f1"] == pytest.approx(scores.f1)


def test_evaluate_threshold_needs_pruning(tmp_path, capsys):
    from conftest import tiny_config

    from docgraph.training.experiment import run_experiment

    run = tmp_path / "nopruning"
    run_experiment(tiny_config(run, model={"pruning": False}, epochs=1))
    with pytest.raises(SystemExit) as exc:
        evaluate_main(["--model", str(run), "--threshold", "1.0", "--device", "cpu"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--threshold 1.0" in err and "does not prune" in err


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_stopped_predict_leaves_no_process_and_no_temporary_file(model_dir, tmp_path, how):
    # Tagging a long input in two processes: SIGTERM ended predict.py at once, leaving its
    # tagging processes running on their own and a .out.jsonl.*.tmp beside the output; Ctrl-C
    # (the whole terminal's process group) printed a traceback per process.
    test_docs = load_dataset("sample", splits=("test",))["test"]
    paragraph = " ".join(token for doc in test_docs for token in doc.tokens)
    (tmp_path / "long.txt").write_text("\n\n".join([paragraph] * 300))  # ~550,000 tokens
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", str(model_dir),
         str(tmp_path / "long.txt"), "--output", str(out), "--processes", "2", "--device",
         "cpu", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(), cwd=ROOT,
        start_new_session=True, preexec_fn=as_in_a_terminal)
    deadline = time.monotonic() + 120
    while len(workers := child_processes(proc.pid)) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no tagging processes"
        time.sleep(0.05)
    # signal once tagging is under way (the first records written), not while the processes
    # still start up: on a loaded machine they take seconds to import torch
    while not any(p.name.endswith(".tmp") and p.stat().st_size for p in tmp_path.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "nothing tagged"
        time.sleep(0.05)
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert not still_running(workers, 5)
    assert proc.returncode == (143 if how == "SIGTERM" else 130), stderr
    reason = "stopped by SIGTERM" if how == "SIGTERM" else "interrupted"
    assert stderr.strip() == f"{reason}: {out} was left as it was"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.txt"]
