"""The adaptation curve (docgraph_dev/adaptation.py): nested seeded training sets of one
genre, types mapped (some kept), the train.py commands of each kind, the curve and its
targets."""

from __future__ import annotations

import json

import pytest

from docgraph.data.conll import read_conll
from docgraph.data.document import make_document
from docgraph_dev.adaptation import (
    _add_start_types_dev,
    curve,
    markdown_table,
    parse_run,
    run_order,
    select_documents,
    train_command,
    type_map,
    write_corpus,
)


def _doc(doc_id: str, tag: str = "B-DATE"):
    return make_document(doc_id, [(["In", "May", "Obama", "spoke"],
                                   ["O", tag, "B-PERSON", "O"])])


@pytest.fixture
def splits():
    return {"train": [_doc(f"{g}/x/00/x_{i:04d}") for g in ("bc", "nw") for i in range(12)],
            "dev": [_doc("bc/x/00/d_0000"), _doc("nw/x/00/d_0001")],
            "test": [_doc("bc/x/00/t_0000"), _doc("wb/x/00/t_0001")]}


def test_sizes_are_nested_seeded_and_of_the_genre(splits):
    small = select_documents(splits, "bc", 3, seed=1, mapping=type_map())
    large = select_documents(splits, "bc", 8, seed=1, mapping=type_map())
    ids = [d.doc_id for d in large["train"]]
    assert [d.doc_id for d in small["train"]] == ids[:3]
    assert all(i.startswith("bc/") for i in ids) and len(set(ids)) == 8
    assert ids != sorted(ids)  # a seeded order, not the file's
    assert [d.doc_id for d in select_documents(splits, "bc", 8, seed=2,
                                               mapping=type_map())["train"]] != ids
    assert [d.doc_id for d in large["dev"]] == ["bc/x/00/d_0000"]
    assert [d.doc_id for d in large["test"]] == ["bc/x/00/t_0000"]
    with pytest.raises(ValueError, match="has 12 training documents"):
        select_documents(splits, "bc", 13, seed=1, mapping=type_map())
    assert run_order(list(range(10)), 3) == run_order(list(range(10)), 3)


def test_types_are_mapped_and_some_kept(splits, tmp_path):
    plain = select_documents(splits, "bc", 1, 1, type_map())["train"][0]
    assert plain.sentences[0].tags == ("O", "O", "B-PER", "O")
    kept = select_documents(splits, "bc", 1, 1, type_map(["DATE"]))["train"][0]
    assert kept.sentences[0].tags == ("O", "B-DATE", "B-PER", "O")
    with pytest.raises(ValueError, match="--keep DAY: not an OntoNotes type"):
        type_map(["DAY"])
    corpus = write_corpus(tmp_path / "c", select_documents(splits, "bc", 2, 1,
                                                           type_map(["DATE"])))
    back = read_conll(corpus / "train.txt")
    assert [s.tags for d in back for s in d.sentences] == [("O", "B-DATE", "B-PER", "O")] * 2


def test_runs_and_their_commands(tmp_path):
    assert parse_run("zero-shot") == ("zero-shot", None)
    assert parse_run("finetune-80") == ("finetune", 80)
    for bad in ("finetune", "scratch-0", "tune-5"):
        with pytest.raises(ValueError, match="expected zero-shot, scratch-N or finetune-N"):
            parse_run(bad)
    scratch = train_command("scratch", tmp_path / "c", tmp_path / "r", "conll03", "p.toml",
                            30, 5, 12.0, 1)
    finetune = train_command("finetune", tmp_path / "c", tmp_path / "r", "conll03", "p.toml",
                             30, 5, 12.0, 1)
    assert finetune[:len(scratch)] == scratch and finetune[len(scratch):] == [
        "--init-from", "conll03"]
    assert "--init-from" not in scratch
    for flag, value in (("--epochs", "30"), ("--patience", "5"), ("--max-minutes", "12.0"),
                        ("--dataset", "column"), ("--config", "p.toml")):
        assert scratch[scratch.index(flag) + 1] == value
    rehearsed = train_command("finetune", tmp_path / "c", tmp_path / "r", "conll03", "p.toml",
                              30, 5, 12.0, 1, ["--rehearse", "news.txt"])
    assert rehearsed == [*finetune, "--rehearse", "news.txt"]  # last: they win over the caps


def test_more_train_arguments_need_a_variant(tmp_path, capsys):
    from docgraph_dev.adaptation import main

    with pytest.raises(SystemExit):
        main(["--data-dir", str(tmp_path), "--out", str(tmp_path), "--runs", "finetune-5",
              "--", "--rehearse", "news.txt"])
    assert "need --variant" in capsys.readouterr().err


def _record(f1: float, stop: str = "early_stopping") -> dict:
    return {"test": {"f1": f1}, "stop_reason": stop}


def test_the_curve_and_its_targets():
    records = {"zero-shot": {"test": {"f1": 50.0}},
               "scratch-5": _record(20.0), "finetune-5": _record(52.0),
               "scratch-80": _record(60.0, "budget"), "finetune-80": _record(58.0)}
    summary = curve(records)
    assert [r["size"] for r in summary["rows"]] == [5, 80]
    assert summary["rows"][1]["scratch_stop"] == "budget"
    assert summary["targets"] == {"finetune_at_least_both": False,
                                  "finetune_gain_at_largest": 8.0}
    records["finetune-80"] = _record(61.0)
    assert curve(records)["targets"]["finetune_at_least_both"] is True
    table = markdown_table(curve(records))
    assert "| 80 | 50.00 | 60.00 (budget) | **61.00 (early_stopping)** |" in table
    del records["scratch-5"]
    partial = curve(records)
    assert partial["rows"][0]["scratch"] is None and "| 5 | 50.00 | – |" in \
        markdown_table(partial)


def test_a_record_gains_the_start_types_dev_scores_once(tmp_path, model_dir, sample_splits,
                                                        capsys):
    record = tmp_path / "bc~x-finetune-5.json"
    record.write_text(json.dumps({"run": "finetune-5", "start_types_test": {"f1": 1.0}}))
    conll = {"dev": sample_splits["dev"][:2]}
    _add_start_types_dev(record, model_dir, conll, ["PER", "LOC"])
    added = json.loads(record.read_text())
    assert added["run"] == "finetune-5" and added["start_types_test"] == {"f1": 1.0}
    dev = added["start_types_dev"]
    assert dev["types"] == ["PER", "LOC"] and dev["support"] > 0
    # the model's other types count as O: nothing predicted of them
    assert all(v["predicted"] == 0 for t, v in dev["per_type"].items() if t not in dev["types"])
    _add_start_types_dev(record, model_dir, conll, ["PER", "LOC"])  # recorded: unchanged
    assert json.loads(record.read_text()) == added and "nothing to add" in capsys.readouterr().out
