"""The tagging profile (docgraph_dev/tagging_profile.py): a stage's time is its own, by hand;
every stage of a real model's tagging is timed and the shares add up."""

from __future__ import annotations

import time

import pytest

from docgraph_dev.tagging_profile import STAGES, StageClock, format_profile, profile_tagging


def test_inner_stages_are_taken_out_of_the_outer_one():
    clock = StageClock()
    with clock.stage("outer"):
        time.sleep(0.02)
        with clock.stage("inner"):
            time.sleep(0.05)
        with clock.stage("inner"):
            time.sleep(0.05)
    assert 0.09 <= clock.seconds["inner"] < 0.2
    assert 0.015 <= clock.seconds["outer"] < 0.08  # not the 0.12 s the block lasted

    def steps():
        yield from range(3)

    timed = clock.wrap_iterator(steps, "steps")
    assert list(timed()) == [0, 1, 2] and "steps" in clock.seconds
    assert clock.wrap(lambda x: x + 1, "add")(1) == 2 and "add" in clock.seconds


def test_a_model_is_profiled_stage_by_stage(model_dir, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice for "
                    "Kestrel.\n\nShares in Harwick Mining rose in Veldania on Monday.\n")
    record = profile_tagging(model_dir, path)
    assert record["tokens"] == 24 and record["documents"] == 2
    assert list(record["stages"]) == list(STAGES)
    shares = {name: v["share"] for name, v in record["stages"].items()}
    for name in ("reading and tokenising", "graph building", "batching", "character encoder",
                 "context Bi-LSTM", "Monte-Carlo passes", "CRF decoding", "writing"):
        assert record["stages"][name]["seconds"] > 0, name
    assert record["stages"]["language-model features"]["seconds"] == 0
    assert 95.0 <= sum(shares.values()) <= 100.5
    assert "Monte-Carlo passes" in format_profile(record)
    # the library is left as it was: the batching function is the module's own again
    from docgraph.tagging import inference

    assert inference._tagging_batches.__module__ == inference.__name__
    assert not hasattr(inference._tagging_batches, "__wrapped__")


def test_flops_of_linear_layers_and_lstm_layers_by_hand():
    import torch

    from docgraph.nn.layout import lstm_direction
    from docgraph_dev.tagging_profile import FlopTally

    clock = StageClock()
    tally = FlopTally(clock)
    linear = torch.nn.Linear(7, 5)
    lstm = torch.nn.LSTM(6, 4, batch_first=True, bidirectional=True)
    with torch.no_grad(), tally:
        with clock.stage("linear"):
            linear(torch.randn(3, 7))
        with clock.stage("lstm"):
            lstm_direction(lstm, torch.randn(2, 9, 6), "")  # 2 sequences of 9 steps
            lstm_direction(lstm, torch.randn(2, 9, 6), "_reverse")
        torch.randn(4, 4) @ torch.randn(4, 3)  # outside every stage
        torch.randn(8).exp()  # no product: not counted
    assert tally.flops["linear"] == 2 * 3 * 7 * 5
    # four gates of 4 units, each from 6 inputs and 4 recurrent units, 18 steps, 2 directions
    assert tally.flops["lstm"] == 2 * (2 * 18 * 4 * 4 * (6 + 4))
    assert tally.flops["other network work"] == 2 * 4 * 4 * 3
    assert set(tally.flops) == {"linear", "lstm", "other network work"}


def test_the_profile_counts_the_arithmetic_of_each_network_stage(model_dir, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice for "
                    "Kestrel.\n\nShares in Harwick Mining rose in Veldania on Monday.\n")
    record = profile_tagging(model_dir, path)
    stages = record["stages"]
    for name in ("context Bi-LSTM", "Monte-Carlo passes", "cross-sentence module"):
        assert stages[name]["flops_per_token"] > 0, name
        assert stages[name]["of_matmul_rate"] > 0, name
    for name in ("reading and tokenising", "graph building", "writing", "CRF decoding"):
        assert stages[name]["gflop"] == 0, name
    total = sum(v["gflop"] for v in stages.values())
    assert abs(record["network"]["gflop"] - total) < 1e-9
    assert record["network"]["flops_per_token"] * record["tokens"] / 1e9 == pytest.approx(total)
    assert record["matmul_gflops_per_second"] > 0
    assert "MFLOP/token" in format_profile(record)
    assert "network" not in profile_tagging(model_dir, path, count_flops=False)


def test_flops_of_whole_linear_layers_and_attention_under_inference_mode():
    import torch

    from docgraph_dev.tagging_profile import FlopTally

    clock = StageClock()
    tally = FlopTally(clock)
    linear = torch.nn.Linear(7, 5)
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 5)
    with torch.inference_mode(), tally:
        with clock.stage("linear"):
            linear(torch.randn(2, 3, 7))  # arrives as aten.linear
        with clock.stage("attention"):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert tally.flops["linear"] == 2 * 6 * 7 * 5
    # 2 x 3 heads: 4 queries against 6 keys of 8, then the weighted sum of 6 values of 5
    assert tally.flops["attention"] == 2 * 6 * 4 * 6 * (8 + 5)
