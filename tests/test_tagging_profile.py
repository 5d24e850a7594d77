"""The tagging profile (docgraph/tools/tagging_profile.py): a stage's time is its own, by hand;
every stage of a real model's tagging is timed and the shares add up."""

from __future__ import annotations

import time

from docgraph.tools.tagging_profile import STAGES, StageClock, format_profile, profile_tagging


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
