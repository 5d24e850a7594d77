"""A document's random draws at tagging time are its own: the same tags in any batch.

The Monte-Carlo dropout masks of the uncertainty tagger are drawn per document from a generator
keyed by the document and the tagging seed, and the neighbours of the document graph are
sampled per document; a document is therefore tagged the same alone, in any batch, in any
order and in any number of processes.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from conftest import annotated_graphs, half_pruning_model, reference_tags, run_script
from torch_geometric.data import Batch

from docgraph.data.document import make_document
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.graph.splits import prepare_split
from docgraph.nn import MonteCarloKeys, UncertaintyTagger
from docgraph.nn.uncertainty import mix_seed
from docgraph.runtime.integrity import write_sealed_json
from docgraph.tagging.inference import predict_graphs
from docgraph.tagging.tagger import Tagger
from docgraph.viz import format_edge_table, noisy_edges


def _tokens(sent_len: list[int], channels: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(sum(sent_len), channels), torch.tensor(sent_len)


def _brute_force_probs(tagger: UncertaintyTagger, x: torch.Tensor, sent_len: torch.Tensor,
                       sizes: list[int], seeds: list[int]) -> torch.Tensor:
    """The averaged distribution with the masks drawn as documented, one pass at a time."""
    T, p, hidden = tagger.num_samples, tagger.dropout, 2 * tagger.hidden_channels
    noise_in, noise_out = [], []
    for size, seed in zip(sizes, seeds):
        gen = torch.Generator().manual_seed(seed)
        shape = (size, x.size(1)) if tagger.mc_dropout == "output" else (T, size, x.size(1))
        noise_in.append(torch.rand(shape, generator=gen))
        noise_out.append(torch.rand((T, size, hidden), generator=gen))
    keep_in = (torch.cat(noise_in, dim=-2) >= p).float() / (1 - p)
    keep_out = (torch.cat(noise_out, dim=1) >= p).float() / (1 - p)
    passes = []
    for t in range(T):
        mask = keep_in if tagger.mc_dropout == "output" else keep_in[t]
        h = tagger.encoder(x * mask, sent_len)
        passes.append(tagger.lin(h * keep_out[t]).softmax(-1))
    return torch.stack(passes).mean(0)


@pytest.mark.parametrize("mode", ["full", "output"])
def test_segment_masks_against_brute_force(mode):
    x, sent_len = _tokens([4, 3, 6])
    tagger = UncertaintyTagger(6, 5, num_labels=4, num_samples=5, mc_dropout=mode).eval()
    sizes, seeds = [7, 6], [11, 12]
    u, probs = tagger.uncertainty(x, sent_len, segment_sizes=sizes, segment_seeds=seeds)
    torch.testing.assert_close(probs, _brute_force_probs(tagger, x, sent_len, sizes, seeds))
    torch.testing.assert_close(u, UncertaintyTagger.entropy(probs))
    assert (u > 0).all()


@pytest.mark.parametrize("mode", ["full", "output"])
def test_a_segment_is_the_same_alone_in_any_batch(mode):
    x, sent_len = _tokens([4, 3, 6, 2])
    tagger = UncertaintyTagger(6, 5, num_labels=4, num_samples=4, mc_dropout=mode).eval()
    u, _ = tagger.uncertainty(x, sent_len, segment_sizes=[7, 8], segment_seeds=[3, 4])
    first, _ = tagger.uncertainty(x[:7], sent_len[:2], segment_sizes=[7], segment_seeds=[3])
    second, _ = tagger.uncertainty(x[7:], sent_len[2:], segment_sizes=[8], segment_seeds=[4])
    swapped, _ = tagger.uncertainty(torch.cat([x[7:], x[:7]]), sent_len[[2, 3, 0, 1]],
                                    segment_sizes=[8, 7], segment_seeds=[4, 3])
    torch.testing.assert_close(u, torch.cat([first, second]), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(swapped, torch.cat([second, first]), rtol=1e-6, atol=1e-6)
    other, _ = tagger.uncertainty(x[:7], sent_len[:2], segment_sizes=[7], segment_seeds=[5])
    assert not torch.allclose(first, other)  # another seed, other masks


def test_segment_masks_leave_the_global_stream_alone_and_check_sizes():
    x, sent_len = _tokens([4, 3])
    tagger = UncertaintyTagger(6, 5, num_labels=4).eval()
    state = torch.get_rng_state()
    tagger.uncertainty(x, sent_len, segment_sizes=[7], segment_seeds=[1])
    assert torch.equal(torch.get_rng_state(), state)
    with pytest.raises(ValueError, match="sum to 6 but x has 7"):
        tagger.uncertainty(x, sent_len, segment_sizes=[6], segment_seeds=[1])
    with pytest.raises(ValueError, match="one size per seed"):
        tagger.uncertainty(x, sent_len, segment_sizes=[3, 4], segment_seeds=[1])


def test_zero_and_full_dropout():
    x, sent_len = _tokens([4, 3])
    tagger = UncertaintyTagger(6, 5, num_labels=4, dropout=0.0).eval()
    _, probs = tagger.uncertainty(x, sent_len, segment_sizes=[7], segment_seeds=[1])
    torch.testing.assert_close(probs, tagger(x, sent_len).softmax(-1))
    tagger.dropout = 1.0  # every unit dropped: the prediction of the dense layer's bias
    _, probs = tagger.uncertainty(x, sent_len, segment_sizes=[7], segment_seeds=[1])
    torch.testing.assert_close(probs, tagger.lin.bias.softmax(-1).expand(7, 4))


def test_segment_seeds_mix_the_key_and_the_tagging_seed():
    keys = MonteCarloKeys(sizes=(1,), keys=(5,))
    assert keys.seeds(0) == [mix_seed(5, 0)] != keys.seeds(1)
    assert 0 <= mix_seed(-(2 ** 63), -1) < 2 ** 63


def test_sampled_neighbours_follow_the_document(sample_vocabs):
    words = ["the", "cat", "saw", "the", "dog", "and", "the", "bird", "and", "the", "cow",
             ";", "the", "end", "of", "the", "the", "day"]
    doc = make_document("d", [(words, ["O"] * len(words))])
    other = make_document("o", [(["the"] * 5 + ["x"], ["O"] * 6)])  # draws samples too
    config = GraphConfig(seed=4, max_neighbours=2)
    alone = documents_to_graphs([doc], sample_vocabs, config)[0].edge_index
    after = documents_to_graphs([other, other, doc], sample_vocabs, config)[2].edge_index
    assert torch.equal(alone, after)
    assert alone.size(1) < 7 * 6  # "the" x 7: sampled, not all 42 edges
    reseeded = documents_to_graphs([doc], sample_vocabs, GraphConfig(seed=5, max_neighbours=2))
    assert not torch.equal(alone, reseeded[0].edge_index)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_tags_do_not_depend_on_the_batch(precision, sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["dev"], sample_vocabs, GraphConfig(seed=1))
    model = half_pruning_model(sample_vocabs, graphs, precision)
    drop = model.inspect(Batch.from_data_list(graphs)).drop
    assert drop.any() and not drop.all()
    together = predict_graphs(model, graphs, sample_vocabs, batch_tokens=10 ** 6)
    one_by_one = predict_graphs(model, graphs, sample_vocabs, batch_tokens=1)
    backwards = predict_graphs(model, graphs[::-1], sample_vocabs, batch_tokens=300)
    assert together == one_by_one == backwards[::-1]
    assert predict_graphs(model, graphs, sample_vocabs, 10 ** 6, seed=1) == predict_graphs(
        model, graphs, sample_vocabs, 1, seed=1)
    uncertainty = [model.inspect(Batch.from_data_list(graphs), mc_seed=s).uncertainty
                   for s in (0, 1)]
    assert not torch.equal(*uncertainty)
    # the global stream (the old tagging) gives batch-dependent tags on these graphs
    torch.manual_seed(0)
    global_together = predict_graphs(model, graphs, sample_vocabs, 10 ** 6, seed=None)
    torch.manual_seed(0)
    assert predict_graphs(model, graphs, sample_vocabs, 1, seed=None) != global_together


@pytest.fixture(scope="module")
def random_draws_model(model_dir, sample_splits, tmp_path_factory):
    """The trained tiny model with neighbours sampled (p = 2) and a threshold that prunes
    about half of the tokens: its tags depend on the Monte-Carlo masks and the sampling."""
    path = tmp_path_factory.mktemp("random-draws") / "model"
    shutil.copytree(model_dir, path)
    config = json.loads((path / "config.json").read_text())
    config["graph"]["max_neighbours"] = 2
    write_sealed_json(path / "config.json", config)
    tagger = Tagger.load(path)
    graphs = documents_to_graphs(sample_splits["test"], tagger.vocabs, tagger.config.graph)
    u = tagger.model.inspect(Batch.from_data_list(graphs)).uncertainty
    config["model"]["threshold"] = float(u.median())
    write_sealed_json(path / "config.json", config)
    return path


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_tagger_in_two_processes_equals_one_with_random_draws(precision, random_draws_model,
                                                               sample_splits):
    tagger = Tagger.load(random_draws_model, precision=precision)
    docs = sample_splits["test"] + sample_splits["dev"]
    _, one = tagger.tag(docs)
    _, two = tagger.tag(docs, processes=2)
    assert two == one
    _, reversed_one = tagger.tag(docs[::-1])
    assert reversed_one[::-1] == one
    assert any(t != "O" for doc in one for sent in doc for t in sent)


def _seed_that_changes_tags(docs, model_dir) -> int:
    """A tagging seed whose masks change some tags of the model (so that an ignored seed
    fails the tests that use it)."""
    seed0 = reference_tags(docs, model_dir)
    seed = next((s for s in range(1, 20)
                 if reference_tags(docs, model_dir, seed=s) != seed0), None)
    assert seed is not None, "no tagging seed in 1-19 changes a tag: the test would be vacuous"
    return seed


def _flat(tags: list[list[list[str]]]) -> list[str]:
    return [t for doc in tags for sent in doc for t in sent]


def _conll_tags(text: str) -> list[str]:
    return [line.split()[-1] for line in text.splitlines()
            if line.strip() and not line.startswith("-DOCSTART-")]


def test_evaluate_mc_seed_in_any_number_of_processes(random_draws_model, sample_splits,
                                                     tmp_path):
    docs = sample_splits["test"]
    seed = _seed_that_changes_tags(docs, random_draws_model)
    expected = reference_tags(docs, random_draws_model, seed=seed)
    # two processes tag as the one-process reference does
    res = run_script("evaluate", "--model", random_draws_model, "--dataset", "sample",
                     "--split", "test", "--output-dir", tmp_path, "--processes", "2",
                     "--mc-seed", str(seed))
    assert res.returncode == 0, res.stderr[-2000:]
    metrics = json.loads((tmp_path / "test_metrics.json").read_text())
    assert metrics["mc_seed"] == seed
    assert _conll_tags((tmp_path / "test_predictions.conll").read_text()) == _flat(expected)


def test_tagger_predict_and_visualize_take_the_tagging_seed(random_draws_model, sample_splits):
    docs = sample_splits["test"]
    seed = _seed_that_changes_tags(docs, random_draws_model)
    expected = _flat(reference_tags(docs, random_draws_model, seed=seed))
    tagger = Tagger.load(random_draws_model)
    for processes in (1, 2):
        assert _flat(tagger.tag(docs, processes=processes, mc_seed=seed)[1]) == expected
    # predict.py carries the seed into its tagging processes (one process: Tagger.tag above,
    # the same pipeline)
    res = run_script("predict", "--model", random_draws_model, "--format", "conll",
                     "--processes", "2", "--mc-seed", str(seed), "docgraph/data/sample/test.txt")
    assert res.returncode == 0, res.stderr[-2000:]
    assert _conll_tags(res.stdout) == expected
    # the annotated graphs (HTML page, figures, edge tables) show the tags of the same seed
    prepared = prepare_split(docs, tagger.vocabs, tagger.config)
    graphs = annotated_graphs(tagger.model, prepared.graphs, prepared.documents, tagger.vocabs,
                              batch_tokens=300, mc_seed=seed)
    assert [a["pred_tag"] for G in graphs for _, a in G.nodes(data=True)] == expected
    res = run_script("visualize", "--model", random_draws_model, "--dataset", "sample",
                     "--split", "test", "--noisy", "100000", "--mc-seed", str(seed))
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.rstrip("\n") == format_edge_table(noisy_edges(graphs, 100000))
    at_zero = annotated_graphs(tagger.model, prepared.graphs, prepared.documents,
                               tagger.vocabs, batch_tokens=300, mc_seed=0)
    # the pruned column moves with the seed
    assert format_edge_table(noisy_edges(at_zero, 100000)) != res.stdout.rstrip("\n")
