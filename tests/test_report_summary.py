"""Tests of :mod:`docgraph_dev.report.summary`: the README's summary and reproduce blocks and
the markers around them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_runs import ablation_run, edit_metrics, model_section

from docgraph.persistence.shipped import MANIFEST, SHIPPED_DIR, shipped_models
from docgraph_dev.report.runs import Run, find_runs
from docgraph_dev.report.selection import SummaryChoice
from docgraph_dev.report.stats import welch_t_test
from docgraph_dev.report.summary import (
    REPRODUCE_END,
    REPRODUCE_START,
    SUMMARY_END,
    SUMMARY_START,
    read_block,
    replace_block,
    reproduce_command,
    reproduce_markdown,
    shipped_lines,
    standing_lines,
    summary_markdown,
)

BASELINE = {"graph": False, "cross_sentence": False}


def _choice(*commands: str, seeds=(1, 2), group="conll03-gcdoc") -> SummaryChoice:
    members = [Run(Path(f"{group}-s{s}"), group, s, {}, c, "–") for s, c in zip(seeds, commands)]
    return SummaryChoice("conll03", "full", False, group, members)


# ------------------------------------------------------------------------------- blocks
def test_replace_block_and_read_block_round_trip():
    text = f"# x\n\n{SUMMARY_START}\nold\n{SUMMARY_END}\n\nrest\n"
    new = replace_block(text, "| a |\n")
    assert new == f"# x\n\n{SUMMARY_START}\n| a |\n{SUMMARY_END}\n\nrest\n"
    assert read_block(new) == "| a |\n"
    assert replace_block(new, "| a |\n") == new  # regenerating changes nothing


def test_blocks_with_other_markers():
    text = (f"{SUMMARY_START}\ns\n{SUMMARY_END}\n{REPRODUCE_START}\nr\n{REPRODUCE_END}\n")
    new = replace_block(text, "cmd\n", REPRODUCE_START, REPRODUCE_END)
    assert read_block(new, REPRODUCE_START, REPRODUCE_END) == "cmd\n"
    assert read_block(new) == "s\n"  # the other block is untouched


@pytest.mark.parametrize("text", ["no markers", f"{SUMMARY_END}\n{SUMMARY_START}\n",
                                  f"{SUMMARY_START} only"])
def test_missing_or_swapped_markers(text):
    for call in (lambda: replace_block(text, "x"), lambda: read_block(text)):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == (f"markers {SUMMARY_START} ... {SUMMARY_END} not found (in "
                                   "this order)")


# ------------------------------------------------------------------------- reproduce
def test_reproduce_command_keeps_what_the_run_trained_and_drops_the_machine():
    command = ("scripts/train.py --dataset conll03 --threads 2 --device cuda --seed 1 "
               "--output-dir runs/x --quiet --max-minutes 60 --eval-batch-tokens 9000 "
               "--embeddings /data/glove.6B.50d.txt --lr 0.002 --seeds 1 2 3 --no-graph "
               "--data-dir /data/conll2003 --lm /models/minilm --window-encoding per_sentence")
    assert reproduce_command(_choice(command, "")) == (
        "python scripts/train.py --dataset conll03 --lr 0.002 --no-graph --lm $LM "
        "--window-encoding per_sentence --seeds 1 2 --output-dir runs/conll03-gcdoc")


def test_reproduce_command_keeps_other_embeddings_and_quotes_words():
    command = "train.py --embeddings 'my vectors.txt' --resume runs/a"
    assert reproduce_command(_choice(command)) == (
        "python scripts/train.py --embeddings 'my vectors.txt' --seeds 1 --output-dir "
        "runs/conll03-gcdoc")


def test_reproduce_command_is_not_taken_from_a_resumed_run():
    choice = _choice("train.py --resume runs/x-s1 --epochs 9", "train.py --epochs 30",
                     seeds=(1, 2))
    assert reproduce_command(choice).startswith("python scripts/train.py --epochs 30 --seeds")
    only_resumed = _choice("train.py --resume r --hidden 5", seeds=(3,))
    assert reproduce_command(only_resumed) == ("python scripts/train.py --hidden 5 --seeds 3 "
                                               "--output-dir runs/conll03-gcdoc")
    no_seed = SummaryChoice("conll03", "full", False, "g", [Run(Path("g"), "g", None, {}, "",
                                                                "–")])
    assert reproduce_command(no_seed) == "python scripts/train.py --seeds --output-dir runs/g"


def test_reproduce_markdown_names_each_row_and_what_a_run_cost(tmp_path: Path):
    for seed in (1, 2):
        run = ablation_run(tmp_path, "conll03-gcdoc", seed, 92.0, model=model_section(),
                           epochs=20 + 2 * seed)
        edit_metrics(run, command="scripts/train.py --dataset conll03 --threads 1")
    ablation_run(tmp_path, "conll03-base", 1, 90.0, model=model_section(**BASELINE),
                 hardware="NVIDIA H200")
    text = reproduce_markdown(find_runs([tmp_path]))
    assert text.splitlines() == [
        "```bash",
        "# conll03 BiLSTM-CRF: 20 epochs, 1 min a run, H200",
        "python scripts/train.py --seeds 1 --output-dir runs/conll03-base",
        "# conll03 GCDoc: 23 epochs, 1 min a run, CPU",
        "python scripts/train.py --dataset conll03 --seeds 1 2 --output-dir runs/conll03-gcdoc",
        "```"]
    assert text.endswith("```\n")
    assert reproduce_markdown([]) == "```bash\n```\n"


# --------------------------------------------------------------------------- summary
def _standing_runs(root: Path, lm: bool = False) -> None:
    suffix = "-lm" if lm else ""
    extra = {"lm_dim": 8} if lm else {}
    for seed, f1 in ((1, 92.0), (2, 92.5), (3, 91.5)):
        ablation_run(root, f"conll03-gcdoc{suffix}", seed, f1, model=model_section(**extra))
    for seed, f1 in ((1, 91.0), (2, 90.0)):
        ablation_run(root, f"conll03-base{suffix}", seed, f1,
                     model=model_section(**BASELINE, **extra))


def test_standing_lines_compare_the_best_gcdoc_with_the_best_baseline(tmp_path: Path):
    _standing_runs(tmp_path)
    p = welch_t_test([92.0, 92.5, 91.5], [91.0, 90.0])[2]
    assert standing_lines(find_runs([tmp_path])) == [
        f"conll03: best GCDoc +1.50 test F1 against the best BiLSTM-CRF (Welch p = {p:.3f}; "
        "n = 3 and 2)"]
    _standing_runs(tmp_path, lm=True)
    lines = standing_lines(find_runs([tmp_path]))
    assert len(lines) == 2 and lines[1].startswith("conll03 with LM features: best GCDoc +1.50")


def test_standing_lines_need_two_seeds_of_each(tmp_path: Path):
    ablation_run(tmp_path, "conll03-gcdoc", 1, 92.0, model=model_section())
    ablation_run(tmp_path, "conll03-gcdoc", 2, 92.0, model=model_section())
    ablation_run(tmp_path, "conll03-base", 1, 91.0, model=model_section(**BASELINE))
    assert standing_lines(find_runs([tmp_path])) == []


@pytest.mark.skipif(not shipped_models(), reason="no shipped model installed")
def test_shipped_lines_name_the_run_of_each_shipped_model(tmp_path: Path):
    name = shipped_models()[0]
    run = json.loads((SHIPPED_DIR / name / MANIFEST).read_text())["run"]
    group, seed = run.rsplit("-s", 1)
    ablation_run(tmp_path, group, int(seed), 91.25, model=model_section(threshold=0.5))
    ablation_run(tmp_path, "other", 1, 80.0, model=model_section())
    tagging = json.loads((SHIPPED_DIR / name / "config.json").read_text())["model"]["threshold"]
    trained = 0.5
    threshold = ("" if tagging == trained
                 else f" at threshold {trained:g} (tags at {tagging:g})")
    assert shipped_lines(find_runs([tmp_path])) == [
        f"shipped [`{name}`](docs/models.md#{name}): run {run}, test F1 91.25"
        f"{threshold}, converged, CPU (1 thread)"]
    assert shipped_lines([]) == []


def test_summary_markdown_table_standing_and_legend(tmp_path: Path):
    _standing_runs(tmp_path)
    runs = find_runs([tmp_path])
    text = summary_markdown(runs)
    lines = text.splitlines()
    assert lines[0] == ("| Corpus | Model | Best configuration (by dev F1) | Seeds | Test F1 | "
                        "Stopped | Hardware | Paper F1 |")
    assert lines[2].startswith("| conll03 | BiLSTM-CRF | conll03-base | n=2 (1, 2) | 90.50 ± "
                               "0.71 |")
    assert lines[5] == f"- {standing_lines(runs)[0]}"
    assert lines[-1].startswith("Best configuration: highest mean dev F1")
    assert lines[-1].endswith("Document consistency of these models: `RESULTS.md`.")
    assert text.endswith("\n") and "Document consistency on test" not in text


def test_summary_markdown_for_results_md_adds_the_consistency(tmp_path: Path):
    record = {"recurrent": {"f1": 91.0}, "singleton": {"f1": 89.0},
              "pred": {"consistency": 90.0, "disagreement": 2.0},
              "gold": {"consistency": 93.1, "disagreement": 1.0}}
    ablation_run(tmp_path, "conll03-gcdoc", 1, 92.0, model=model_section(),
                 consistency={"test": record})
    text = summary_markdown(find_runs([tmp_path]), consistency=True)
    assert ("Document consistency on test of the same best configurations (definitions "
            "below):") in text
    assert "| conll03 | conll03-gcdoc | 1 | 92.00 | 91.00 | 89.00 | 10.00% (6.9%) |" in text
    assert not text.splitlines()[-1].endswith("`RESULTS.md`.")
