"""Tests of :mod:`docgraph_dev.edge_weights` (relation scores of a trained run), the study
behind ``benchmarks/edge_weights.py``."""

import json
import math

import pytest
import torch

from docgraph_dev import edge_weights


def _brute_force_auc(pos: list[float], neg: list[float]) -> float:
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_auc_matches_brute_force_pair_count(seed):
    g = torch.Generator().manual_seed(seed)
    # Scores on a coarse grid, so that many pairs are tied.
    pos = (torch.rand(37, generator=g) * 10).round() / 10
    neg = (torch.rand(23, generator=g) * 10).round() / 10 - 0.1
    expected = _brute_force_auc(pos.tolist(), neg.tolist())
    assert edge_weights.rank_auc(pos, neg) == pytest.approx(expected, abs=1e-12)


def test_rank_auc_edge_cases():
    assert edge_weights.rank_auc(torch.tensor([0.9, 0.8]), torch.tensor([0.1])) == 1.0
    assert edge_weights.rank_auc(torch.tensor([0.1]), torch.tensor([0.9, 0.8])) == 0.0
    assert edge_weights.rank_auc(torch.tensor([0.5]), torch.tensor([0.5])) == 0.5
    assert math.isnan(edge_weights.rank_auc(torch.tensor([]), torch.tensor([0.5])))


def test_summarise_by_hand():
    # Types: 0 = O, 1 = PER, 2 = LOC. Edges: O-O, O-O, PER-O, PER-PER, LOC-LOC, PER-LOC.
    sample = edge_weights.EdgeSample(
        weight=torch.tensor([0.9, 0.7, 0.2, 0.8, 0.6, 0.4]),
        source_type=torch.tensor([0, 0, 1, 1, 2, 1]),
        target_type=torch.tensor([0, 0, 0, 1, 2, 2]),
        source_dropped=torch.tensor([True, False, False, False, True, False]),
        tokens=10, dropped_tokens=3, entity_tokens=4, dropped_entity_tokens=1,
    )
    report = edge_weights.summarise(sample)
    assert (report.edges, report.oo_edges, report.entity_o_edges) == (6, 2, 1)
    assert (report.same_type_edges, report.different_type_edges) == (2, 1)
    assert report.oo_share == pytest.approx(100 * 2 / 6)
    assert report.mean_r_oo == pytest.approx(0.8) and report.mean_r_entity_o == pytest.approx(0.2)
    assert report.mean_r_same == pytest.approx(0.7)
    assert report.mean_r_different == pytest.approx(0.4)
    assert report.auc == 1.0  # 0.8 and 0.6 both above 0.4
    assert report.pruned_token_share == pytest.approx(30.0)
    assert report.pruned_edge_share == pytest.approx(100 * 2 / 6)
    assert report.pruned_entity_token_share == pytest.approx(25.0)
    # entity-entity edges: PER-PER (kept), LOC-LOC (source dropped), PER-LOC (kept)
    assert report.pruned_entity_edge_share == pytest.approx(100 / 3)
    assert json.loads(json.dumps(report.to_dict()))["auc"] == 1.0


def test_script_on_a_tiny_trained_run(model_dir, tmp_path, capsys):
    out = tmp_path / "edges.json"
    edge_weights.main([str(model_dir), "--split", "dev", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["split"] == "dev" and result["edges"] > 0 and result["tokens"] > 0
    assert result["oo_edges"] + result["entity_o_edges"] + result["same_type_edges"] + \
        result["different_type_edges"] == result["edges"]
    assert 0.0 <= result["oo_share"] <= 100.0
    assert result["auc"] is None or 0.0 <= result["auc"] <= 1.0
    assert 0.0 <= result["pruned_edge_share"] <= 100.0
    assert result["pruned_entity_token_share"] is None or \
        0.0 <= result["pruned_entity_token_share"] <= 100.0
    assert "AUC same vs diff" in capsys.readouterr().out
    # Reproducible for the same Monte-Carlo seed.
    again = edge_weights.measure(model_dir, "dev")
    assert again.to_dict() == {k: v for k, v in result.items()
                               if k not in ("run_dir", "split", "seed", "threshold")}
    # A threshold above any entropy (ln of the label count) prunes nothing; 0 prunes every
    # token whose predictive distribution is not one-hot.
    assert edge_weights.measure(model_dir, "dev", threshold=100.0).pruned_token_share == 0.0
    everything = edge_weights.measure(model_dir, "dev", threshold=0.0)
    assert everything.pruned_token_share == 100.0 and everything.pruned_edge_share == 100.0


def test_script_refuses_a_model_without_edge_weights(tmp_path):
    from conftest import tiny_config

    from docgraph.training.experiment import run_experiment

    run_dir = tmp_path / "noweights"
    run_experiment(tiny_config(run_dir, model={"edge_weights": False, "cross_sentence": False},
                               epochs=1))
    with pytest.raises(SystemExit, match="no selective auxiliary classifier"):
        edge_weights.main([str(run_dir)])
