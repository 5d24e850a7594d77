"""Tagging on a shape grid (:class:`~docgraph.nn.layout.ShapeGrid`, the plans of tagging on the
CPU) gives what the plain layouts give, and the Monte-Carlo masks are the documented draws."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import half_pruning_model
from torch_geometric.data import Batch

from docgraph.batching.loader import collate
from docgraph.batching.plan import TAGGING_GRID, grid_for, plan_batch
from docgraph.config import ExperimentConfig
from docgraph.graph.splits import prepare_split
from docgraph.nn import UncertaintyTagger
from docgraph.nn.layout import DirectionLSTM, SequenceLayout, ShapeGrid, run_bilstm

GRIDS = [ShapeGrid(), ShapeGrid(step_quantum=4, coarse_steps=8, row_quantum=4, max_rows=8),
         ShapeGrid(step_quantum=1, coarse_steps=1, row_quantum=1, max_rows=1)]


def test_grid_steps_and_rows_by_hand():
    grid = ShapeGrid(step_quantum=4, coarse_steps=8, row_quantum=4, max_rows=8)
    lengths = np.array([1, 4, 5, 8, 9, 16, 17, 33])
    assert grid.steps(lengths).tolist() == [4, 4, 8, 8, 16, 16, 32, 48]
    assert [grid.rows(n) for n in (1, 4, 5, 8)] == [4, 4, 8, 8]
    layout = SequenceLayout.from_lengths([3, 2, 5, 1, 2], buckets=1, grid=grid)
    (bucket,) = layout.buckets
    assert bucket.steps == 8 and bucket.forward_index.shape == (8, 8)  # 5 sequences, 8 rows
    assert bucket.mean_weights[5:].abs().sum() == 0  # padding rows weigh nothing
    assert layout.member_rows.tolist() == [0, 1, 2, 3, 4]


def test_grid_rejects_bad_settings():
    with pytest.raises(ValueError, match="row_quantum must be >= 1"):
        ShapeGrid(row_quantum=0)
    with pytest.raises(ValueError, match="must be a multiple of row_quantum"):
        ShapeGrid(row_quantum=8, max_rows=12)


@pytest.mark.parametrize("grid", GRIDS)
def test_grid_layouts_give_the_outputs_of_the_plain_layout(grid):
    # Every position's outputs and the final states are bit for bit those of the plain
    # layout; the means and sums (reduced over padded steps) to rounding.
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    lstm = DirectionLSTM(6, 5).eval()
    lengths = rng.integers(1, 40, size=37)
    starts = rng.integers(0, 20, size=37)  # overlapping, out of order
    x = torch.randn(int((starts + lengths).max()), 6)
    plain = SequenceLayout.from_lengths(lengths, starts)
    on_grid = SequenceLayout.from_lengths(lengths, starts, grid=grid)
    for bucket in on_grid.buckets:
        rows, steps = bucket.forward_index.shape
        assert rows % grid.row_quantum == 0 and rows <= grid.max_rows
        assert steps in grid.steps(np.arange(1, 200)).tolist()
    with torch.no_grad():
        assert torch.equal(run_bilstm(lstm, x, on_grid), run_bilstm(lstm, x, plain))
        assert torch.equal(run_bilstm(lstm, x, on_grid, final_states=True),
                           run_bilstm(lstm, x, plain, final_states=True))
        for reduce in ("mean", "sum"):
            torch.testing.assert_close(run_bilstm(lstm, x, on_grid, reduce=reduce),
                                       run_bilstm(lstm, x, plain, reduce=reduce))
    tiled = SequenceLayout.tiled(lengths, 3, grid=grid)
    assert all(b.forward_index.size(0) <= grid.max_rows for b in tiled.buckets)


def _reference_masks(tagger: UncertaintyTagger, x: torch.Tensor, sizes, seeds):
    """The masks as documented: each segment's noise from its own generator (inputs, then
    outputs), concatenated, then ``noise >= p`` times ``1 / (1 - p)``."""
    T, p, hidden = tagger.num_samples, tagger.dropout, 2 * tagger.hidden_channels
    output = tagger.mc_dropout == "output"
    noise_in, noise_out = [], []
    for size, seed in zip(sizes, seeds):
        gen = torch.Generator().manual_seed(seed)
        noise_in.append(torch.rand((size, x.size(1)) if output else (T, size, x.size(1)),
                                   generator=gen))
        noise_out.append(torch.rand((T, size, hidden), generator=gen))

    def kept(noise):
        if p >= 1.0:
            return torch.zeros_like(noise)
        return (noise >= p).to(noise.dtype).mul_(1.0 / (1.0 - p))

    return (kept(torch.cat(noise_in, dim=-2)).reshape(-1, x.size(1)),
            kept(torch.cat(noise_out, dim=1)).view(-1, hidden))


@pytest.mark.parametrize("mode", ["full", "output"])
@pytest.mark.parametrize("p", [0.5, 0.3, 0.0, 1.0])
def test_segment_masks_and_uncertainty_are_bit_for_bit_the_documented_draws(mode, p):
    torch.manual_seed(0)
    sent_len = torch.randint(1, 12, (14,))
    x = torch.randn(int(sent_len.sum()), 7)
    tagger = UncertaintyTagger(7, 5, num_labels=6, num_samples=4, dropout=p,
                               mc_dropout=mode).eval()
    sizes = [int(sent_len[:5].sum()), int(sent_len[5:6].sum()), int(sent_len[6:].sum())]
    seeds = [11, 2 ** 62 + 3, 5]
    ref_in, ref_out = _reference_masks(tagger, x, sizes, seeds)
    keep_in, keep_out = tagger._segment_masks(x, sizes, seeds)
    assert torch.equal(keep_in, ref_in) and torch.equal(keep_out, ref_out)
    u, probs = tagger.uncertainty(x, sent_len, segment_sizes=sizes, segment_seeds=seeds)
    T = tagger.num_samples
    with torch.no_grad():
        if mode == "full":  # the T copies of the rows, masked, as one batch
            logits = tagger._logits(x.repeat(T, 1), sent_len.repeat(T), True,
                                    keep=(ref_in, ref_out))
        else:
            h = tagger.encoder(x * ref_in, sent_len)
            logits = tagger.lin(h.repeat(T, 1) * ref_out)
    expected = logits.softmax(-1).view(T, x.size(0), -1).mean(0)
    assert torch.equal(probs, expected)
    assert torch.equal(u, UncertaintyTagger.entropy(expected))


@pytest.fixture(scope="module")
def graphs(sample_splits, sample_vocabs):
    return prepare_split(sample_splits["test"][:6], sample_vocabs, ExperimentConfig()).graphs


def test_tagging_plans_are_on_the_grid_and_training_plans_are_not(graphs, sample_vocabs):
    model = half_pruning_model(sample_vocabs, graphs)
    cpu = torch.device("cpu")
    assert grid_for(cpu, tagging=True) is TAGGING_GRID
    assert grid_for(cpu, tagging=False) is None
    assert grid_for(torch.device("cuda"), tagging=True) is None
    with torch.no_grad():
        assert collate(graphs, [0, 1], cpu, model).plan.grid is TAGGING_GRID
    assert collate(graphs, [0, 1], cpu, model).plan.grid is None


def test_tags_on_the_grid_are_the_tags_without(graphs, sample_vocabs):
    # on the grid the emissions are those without, to float rounding, the Monte-Carlo
    # uncertainty and Drop bit for bit, and the tags the same
    model = half_pruning_model(sample_vocabs, graphs)
    batch = Batch.from_data_list(graphs)
    plain = plan_batch(batch, model.config, dtype=model.dtype)
    on_grid = plan_batch(batch, model.config, dtype=model.dtype, grid=TAGGING_GRID)
    assert any(b.forward_index.size(0) != b2.forward_index.size(0) or b.steps != b2.steps
               for b, b2 in zip(on_grid.sentences.buckets, plain.sentences.buckets))
    model.eval()
    with torch.no_grad():
        out_plain = model(batch, compute_loss=False, plan=plain, mc_seed=0)
        out_grid = model(batch, compute_loss=False, plan=on_grid, mc_seed=0)
    torch.testing.assert_close(out_grid.emissions, out_plain.emissions)
    assert torch.equal(out_grid.uncertainty, out_plain.uncertainty)
    assert torch.equal(out_grid.drop, out_plain.drop) and out_grid.drop.any()
    expected = model.crf.decode(out_plain.emissions, batch.sent_len, plain.sentences)
    assert torch.equal(model.crf.decode(out_grid.emissions, batch.sent_len, on_grid.sentences),
                       expected)
    assert torch.equal(model.predict(batch), expected)  # planned by predict, on the grid
    assert torch.equal(model.inspect(batch).emissions, out_grid.emissions)
    batch.plan = plain  # a batch's own plan is used as it is
    assert torch.equal(model.predict(batch), expected)
    assert torch.equal(model.inspect(batch).emissions, out_plain.emissions)
