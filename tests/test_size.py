"""Tests of :mod:`docgraph.config.size`: the closed-form parameter count, the memory training
takes, the memory the host has and the one-line refusal of a model that cannot fit.

(The closed form against the built model, for many configurations, is
``tests/test_input_checks.py``'s.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.config import GCDocConfig
from docgraph.config import size as size_module
from docgraph.config.size import (
    SIZE_FIELDS,
    ModelSizeError,
    estimate_parameters,
    format_bytes,
    host_available_memory,
    largest_size,
    memory_problem,
    sizes_text,
    training_bytes,
)

SMALL = {"word_dim": 2, "char_dim": 3, "char_hidden": 4, "hidden": 5}


def _lstm(inputs, hidden):
    """Parameters of a bidirectional ``torch.nn.LSTM`` (4 gates, W_ih, W_hh, two biases)."""
    return 2 * (4 * hidden * inputs + 4 * hidden * hidden + 2 * 4 * hidden)


def test_the_count_of_a_baseline_by_hand():
    config = GCDocConfig.baseline(**SMALL)
    token = 2 + 2 * 4  # a word vector and both directions of the character LSTM
    expected = (2 * 2 + 2 * 3  # the two-entry word and character tables
                + _lstm(3, 4) + _lstm(token, 5)
                + 5 * (2 * 5 + 1)  # emissions
                + 5 * 7)  # CRF transitions, start and end
    assert expected == 1068
    assert estimate_parameters(config) == expected


def test_the_count_grows_with_the_vocabularies_by_the_embedding_sizes():
    config = GCDocConfig.baseline(**SMALL)
    base = estimate_parameters(config)
    assert estimate_parameters(config, words=12) == base + 10 * 2
    assert estimate_parameters(config, chars=12) == base + 10 * 3
    # a label more: one more emission row and a transition row and column
    assert estimate_parameters(config, labels=6) == base + (2 * 5 + 1) + (6 * 8 - 5 * 7)


def test_each_module_adds_its_parameters():
    full = GCDocConfig(**SMALL, sent_dim=6, uncertainty_hidden=3)
    count = estimate_parameters(full)
    no_weights = estimate_parameters(GCDocConfig(**SMALL, sent_dim=6, uncertainty_hidden=3,
                                                 edge_weights=False))
    assert count - no_weights == 2 * 2 * 5 + 1  # the relation scorer on [h_i; h_j]
    no_pruning = estimate_parameters(GCDocConfig(**SMALL, sent_dim=6, uncertainty_hidden=3,
                                                 pruning=False))
    assert count - no_pruning == _lstm(10, 3) + 5 * (2 * 3 + 1)  # the uncertainty tagger
    one_side = estimate_parameters(GCDocConfig(**SMALL, sent_dim=6, uncertainty_hidden=3,
                                               use_next=False))
    assert count - one_side == _lstm(10, 3)  # one window encoder of sent_dim / 2 per side


def test_a_huge_configuration_is_counted_without_tensors():
    # the widest layer a configuration accepts (2^20): tens of trillions of weights, counted
    assert estimate_parameters(GCDocConfig(hidden=2**20)) > 10**13


@pytest.mark.parametrize(("optimizer", "momentum", "processes", "copies"), [
    ("sgd", 0.0, 1, 2),   # weights and gradients
    ("sgd", 0.9, 1, 3),   # and the momentum
    ("adam", 0.0, 1, 4),  # and both moments
    ("adam", 0.0, 2, 5),  # and DDP's gradient buckets
    ("sgd", 0.0, 4, 3),
])
def test_training_bytes_counts_the_float32_copies(optimizer, momentum, processes, copies):
    assert training_bytes(1000, optimizer, momentum, processes) == 4 * 1000 * copies


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 bytes"), (999, "999 bytes"), (1000, "1.0 KB"), (1_500_000, "1.5 MB"),
    (3.2e9, "3.2 GB"), (1e15, "1.0 PB"), (1.44e18, "1,440.0 PB"),
])
def test_format_bytes_in_powers_of_1000(n, text):
    assert format_bytes(n) == text


def test_size_fields_name_their_flag_or_toml_key():
    assert SIZE_FIELDS["hidden"] == "--hidden"
    assert SIZE_FIELDS["sent_dim"] == "--sent-dim"
    assert SIZE_FIELDS["word_dim"] == "[model] word_dim"  # no flag: the TOML key
    assert "window" not in SIZE_FIELDS and "num_samples" not in SIZE_FIELDS


def test_sizes_text_lists_the_sizes_largest_first():
    assert sizes_text(GCDocConfig()) == ("--sent-dim 300, --hidden 200, --uncertainty-hidden "
                                         "100, [model] word_dim 50, --char-hidden 50, "
                                         "--char-dim 30")
    # a size with only a TOML key shows when it is set (lm_dim is 0 without features)
    assert sizes_text(GCDocConfig(lm_dim=768)).startswith("[model] lm_dim 768, --sent-dim 300")


def test_largest_size_names_the_field_whose_default_shrinks_the_model_most():
    assert largest_size(GCDocConfig(hidden=2000), 10**9) == "--hidden 2000"
    both = GCDocConfig(hidden=400, sent_dim=4000)
    assert largest_size(both, estimate_parameters(both)) == "--sent-dim 4000"
    assert largest_size(GCDocConfig(), estimate_parameters(GCDocConfig())) == \
        "the model's sizes"
    smaller = GCDocConfig(hidden=10)  # below its default: never the one to lower
    assert largest_size(smaller, estimate_parameters(smaller)) == "the model's sizes"


def test_memory_problem_is_none_when_training_fits():
    million = lambda config: 10**6  # noqa: E731
    assert memory_problem(GCDocConfig(), 8 * 10**6, count_parameters=million) is None
    assert memory_problem(GCDocConfig(), 16 * 10**6, "adam", count_parameters=million) is None
    assert memory_problem(GCDocConfig(), 4 * 10**6, weights_only=True,
                          count_parameters=million) is None


def test_memory_problem_names_the_size_and_the_memory_in_one_line():
    config = GCDocConfig(hidden=2000)

    def million(config):  # a million parameters, a thousand with the default hidden size
        return 10**6 if config.hidden == 2000 else 1000

    problem = memory_problem(config, 5 * 10**6, count_parameters=million)
    assert problem == (
        "--hidden 2000: the model would have 1,000,000 parameters (4.0 MB as float32) and "
        "training it needs at least 8.0 MB, more than the 5.0 MB of memory available; lower "
        f"it (model sizes: {sizes_text(config)})")
    shared = memory_problem(config, 5 * 10**6, processes=2, sharing=2, where=" on cuda",
                            count_parameters=million)
    assert " and training it in 2 processes needs at least 24.0 MB, " in shared
    assert shared.count("\n") == 0 and "of memory available on cuda; lower it" in shared
    built = memory_problem(config, 3 * 10**6, weights_only=True, count_parameters=million)
    assert " and building it needs at least 4.0 MB, more than the 3.0 MB " in built


def test_model_size_error_is_a_value_error():
    assert issubclass(ModelSizeError, ValueError)


@pytest.fixture
def host_files(tmp_path, monkeypatch):
    """Point /proc/meminfo and the cgroup files of :mod:`docgraph.config.size` at files in
    ``tmp_path``; returns ``write(name, text)`` (names: meminfo, v2max, v2cur, v1max,
    v1cur)."""
    names = {"meminfo": "/proc/meminfo", "v2max": "/sys/fs/cgroup/memory.max",
             "v2cur": "/sys/fs/cgroup/memory.current",
             "v1max": "/sys/fs/cgroup/memory/memory.limit_in_bytes",
             "v1cur": "/sys/fs/cgroup/memory/memory.usage_in_bytes"}
    where = {real: tmp_path / name for name, real in names.items()}
    monkeypatch.setattr(size_module, "Path", lambda p: where.get(str(p), tmp_path / "none"))

    def write(name: str, text: str) -> None:
        (tmp_path / name).write_text(text)

    return write


def test_host_memory_is_memavailable(host_files):
    host_files("meminfo", "MemTotal: 9000 kB\nMemAvailable:    1000 kB\nCached: 1 kB\n")
    assert host_available_memory() == 1000 * 1024


def test_host_memory_is_bounded_by_the_cgroup_limit(host_files):
    host_files("meminfo", "MemAvailable: 1000 kB\n")
    host_files("v2max", "500000\n")
    host_files("v2cur", "100000\n")
    assert host_available_memory() == 400000
    host_files("v2cur", "600000\n")  # over its limit: nothing left
    assert host_available_memory() == 0


def test_an_unlimited_cgroup_leaves_memavailable(host_files):
    host_files("meminfo", "MemAvailable: 1000 kB\n")
    host_files("v2max", "max\n")
    host_files("v2cur", "100\n")
    assert host_available_memory() == 1024000
    host_files("v2max", f"{1 << 62}\n")
    assert host_available_memory() == 1024000


def test_cgroup_v1_when_there_is_no_v2(host_files):
    host_files("v1max", "300000\n")
    host_files("v1cur", "100000\n")
    assert host_available_memory() == 200000  # no /proc/meminfo either


def test_host_memory_unknown_is_none(host_files):
    assert host_available_memory() is None
    host_files("meminfo", "MemTotal: 9000 kB\n")
    assert host_available_memory() is None


def test_host_memory_of_this_machine_is_a_positive_number_or_none():
    assert size_module.Path is Path  # the monkeypatched tests left it as it was
    found = host_available_memory()
    assert found is None or found > 0
