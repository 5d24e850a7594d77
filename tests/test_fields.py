"""Declared configuration fields (``docgraph/config/fields.py``): marks and the lists read from
them, checked against what the fields actually do."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import pytest
import torch

from docgraph.config import GCDocConfig, TrainConfig
from docgraph.config.fields import (
    CAP,
    MACHINE,
    PLAN,
    SHARDING,
    SIZE,
    VARIANT,
    fields_marked,
    integer,
    setting_of,
    switch,
)


@dataclass(frozen=True)
class _Toy:
    width: int = integer(3, low=1, help="a width", marks=(SIZE,))
    depth: int = integer(2, low=1, help="a depth", marks=(SIZE, PLAN))
    fast: bool = switch(False, help="go fast", marks=(MACHINE,))
    seed: int = integer(0, low=0, help="a seed")


def test_fields_marked_reads_the_declarations_in_order():
    assert fields_marked(_Toy, SIZE) == ("width", "depth")
    assert fields_marked(_Toy, PLAN) == ("depth",)
    assert fields_marked(_Toy, MACHINE) == ("fast",)
    assert fields_marked(_Toy, CAP) == ()
    assert setting_of(fields(_Toy)[3]).marks == frozenset()


def _changed(config: GCDocConfig, name: str) -> GCDocConfig:
    value = getattr(config, name)
    if isinstance(value, bool):
        return replace(config, **{name: not value})
    return replace(config, **{name: value + 2})


def _shapes(model: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


def test_size_marks_the_integer_fields_that_change_parameter_shapes(sample_vocabs):
    """Each integer field of the model is marked SIZE exactly when changing it changes the
    shape of a parameter or buffer (the model's size in memory)."""
    from docgraph.persistence.model_dir import build_model

    base = GCDocConfig(word_dim=6, char_dim=4, char_hidden=4, hidden=6, sent_dim=8,
                       uncertainty_hidden=4, num_samples=2)
    torch.manual_seed(0)
    reference = _shapes(build_model(base, sample_vocabs))
    sized = set()
    for f in fields(GCDocConfig):
        value = getattr(base, f.name)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if _shapes(build_model(_changed(base, f.name), sample_vocabs)) != reference:
            sized.add(f.name)
    assert sized == set(fields_marked(GCDocConfig, SIZE))


def test_plan_marks_the_model_fields_a_plan_is_made_for():
    from docgraph.batching.plan import plan_key

    base = GCDocConfig()
    for f in fields(GCDocConfig):
        value = getattr(base, f.name)
        if not isinstance(value, (bool, int)) or f.name == "lm_dim":
            continue
        changed = _changed(base, f.name) if f.name != "threshold" else base
        assert (plan_key(changed) != plan_key(base)) == (
            f.name in fields_marked(GCDocConfig, PLAN)), f.name


def test_variants_are_the_ablation_switches():
    assert set(fields_marked(GCDocConfig, VARIANT)) == {
        "graph", "pruning", "edge_weights", "cross_sentence", "use_previous", "use_next",
        "window"}


@pytest.mark.parametrize("name", ["epochs", "max_minutes", "threads", "processes",
                                  "eval_batch_tokens"])
def test_the_training_fields_a_table_lets_differ(name):
    from docgraph_dev.report.runs import _FREE_TRAIN_FIELDS

    assert name in _FREE_TRAIN_FIELDS
    marks = setting_of(next(f for f in fields(TrainConfig) if f.name == name)).marks
    assert marks & {CAP, MACHINE, SHARDING}


def test_a_reproduce_command_drops_the_machine_flags_only():
    from docgraph_dev.report.summary import _MACHINE_FLAGS

    assert {"--threads", "--device", "--max-minutes", "--eval-batch-tokens"} <= set(
        _MACHINE_FLAGS)
    assert not {"--processes", "--epochs", "--hidden", "--threshold"} & set(_MACHINE_FLAGS)


def test_a_usage_error_carries_its_flag_value_and_reason_as_data(tmp_path):
    import pickle

    from docgraph.config.fields import UsageError
    from docgraph.data.conll import check_input_file

    err = UsageError("file not found", "--data", "x.txt")
    assert (err.flag, err.value, err.reason) == ("--data", "x.txt", "file not found")
    assert str(err) == "--data x.txt: file not found"
    assert str(UsageError("--out needs --doc N")) == "--out needs --doc N"
    assert str(UsageError("must be >= 0, got -1", "--doc")) == "--doc must be >= 0, got -1"
    again = pickle.loads(pickle.dumps(err))
    assert (again.flag, again.value, again.reason, str(again)) == \
        (err.flag, err.value, err.reason, str(err))
    with pytest.raises(UsageError) as found:
        check_input_file(tmp_path / "missing.txt", "--data")
    assert (found.value.flag, found.value.value) == ("--data", tmp_path / "missing.txt")
    with pytest.raises(UsageError) as found:
        check_input_file(tmp_path)
    assert found.value.flag is None and found.value.reason == \
        "expected an input file, got a directory"
