"""Post-hoc probes of forgetting (docgraph_dev/weight_probe.py): the interpolation formula entry
by entry, parts reset to the start, the starting weights put in a grown model's shapes with
the entries a fine-tune created taken from it, and a refusal before any work."""

from __future__ import annotations

import torch

from docgraph.training.init_from import (
    WORDS,
    grow_vocabularies,
    initial_model,
    label_map,
    load_init_model,
)
from docgraph_dev.weight_probe import interpolated, main, start_in_shape
from tests.conftest import with_type


def test_interpolation_moves_each_floating_entry_alpha_of_the_way():
    start = {"a.weight": torch.zeros(2, 3), "b.bias": torch.ones(3), "c.ids": torch.arange(3)}
    tuned = {"a.weight": torch.full((2, 3), 4.0), "b.bias": torch.full((3,), 3.0),
             "c.ids": torch.tensor([5, 6, 7])}
    half = interpolated(start, tuned, 0.25)
    assert torch.equal(half["a.weight"], torch.full((2, 3), 1.0))
    assert torch.equal(half["b.bias"], torch.full((3,), 1.5))
    assert torch.equal(half["c.ids"], tuned["c.ids"])  # not a weight: as trained
    assert all(torch.equal(interpolated(start, tuned, 1.0)[k], tuned[k]) for k in tuned)
    reset = interpolated(start, tuned, 1.0, reset=("a",))
    assert torch.equal(reset["a.weight"], start["a.weight"])
    assert torch.equal(reset["b.bias"], tuned["b.bias"])


def test_the_start_in_a_grown_shape_keeps_what_the_fine_tune_created(model_dir, sample_splits):
    init = load_init_model(model_dir)
    splits = {name: [with_type(d) for d in docs] for name, docs in sample_splits.items()}
    vocabs, rows, growth = grow_vocabularies(init, splits, "none")
    assert growth.added_types == ["DATE"]
    tuned = {k: v + 1.0 if v.is_floating_point() else v.clone() for k, v in
             initial_model(init, init.config.model, vocabs, rows).state_dict().items()}
    words = init.state[WORDS].size(0)
    start = start_in_shape(init.state, tuned, init.vocabs.labels, vocabs.labels, words)
    assert {k: v.shape for k, v in start.items()} == {k: v.shape for k, v in tuned.items()}
    assert torch.equal(start[WORDS][:words], init.state[WORDS])
    assert torch.equal(start[WORDS][words:], tuned[WORDS][words:])  # added words: trained
    new_ids, old_ids = label_map(init.vocabs.labels, vocabs.labels)
    assert torch.equal(start["emission.weight"][new_ids], init.state["emission.weight"][old_ids])
    added = [i for i in range(len(vocabs.labels)) if i not in set(new_ids.tolist())]
    assert added and torch.equal(start["emission.weight"][added], tuned["emission.weight"][added])
    key = "context_encoder.lstm.weight_hh_l0"
    assert torch.equal(start[key], init.state[key])


def test_a_run_without_weights_is_refused_before_any_work(tmp_path, capsys):
    code = main(["--runs", str(tmp_path), "--conll", str(tmp_path), "--out",
                 str(tmp_path / "out.json")])
    assert code == 2 and "no model.pt there" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
