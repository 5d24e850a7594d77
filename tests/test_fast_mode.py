"""The approximations of tagging (``--speed fast`` and the settings under it): each changes the
computation as it says, the faithful computation stays bit for bit what it was, and the
setting reaches the model from every way of tagging."""

import pytest
import torch

from docgraph.config.tagging import (
    FAITHFUL,
    FAST,
    SPEEDS,
    Approximation,
    TaggingConfig,
    approximation_of,
)
from docgraph.nn.quantized import INT8_CELLS, Int8Linear, is_int8
from docgraph.tagging.tagger import Tagger

TEXT = "Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice. Kestrel lead the table."


def _rows_seen(module: torch.nn.Module, tagger: Tagger, text: str = TEXT) -> list[int]:
    """The rows of every input ``module`` read while ``tagger`` tagged ``text``."""
    seen: list[int] = []
    handle = module.register_forward_pre_hook(lambda m, args: seen.append(args[0].size(0)))
    try:
        tagger.predict([text])
    finally:
        handle.remove()
    return seen


def test_an_approximation_is_a_speed_with_single_settings_over_it():
    assert approximation_of() == approximation_of("faithful") == FAITHFUL
    assert FAITHFUL.faithful and not FAST.faithful
    assert approximation_of("fast") == FAST == SPEEDS["fast"]
    over = approximation_of("fast", mc_samples=4, int8=True)
    assert (over.mc_samples, over.int8) == (4, True)
    assert over.window_encoding == FAST.window_encoding
    assert approximation_of("fast", int8=False).int8 is False
    assert TaggingConfig(speed="fast", mc_dropout="output", int8="on").approximation() == \
        approximation_of("fast", mc_dropout="output", int8=True)
    assert Approximation(mc_samples=1, int8=True).describe() == "mc_samples=1, int8"
    # a named speed leaves int8 out on a GPU; asked for there, it stays (and is refused)
    assert not any(approximation_of(name, device="cuda").int8 for name in SPEEDS)
    assert approximation_of("fast", int8=True, device="cuda").int8
    assert approximation_of(Approximation(int8=True), device="cuda").int8
    for bad in ({"speed": "quick"}, {"mc_dropout": "half"}, {"mc_samples": 0},
                {"window_encoding": "paired"}):
        with pytest.raises(ValueError):
            approximation_of(**bad)


def test_the_faithful_computation_is_bit_for_bit_the_trained_one(model_dir):
    from docgraph.config import ExperimentConfig
    from docgraph.persistence.model_dir import ModelOverrides

    config = ExperimentConfig()
    assert ModelOverrides(approximation=FAITHFUL).apply(config) is config
    plain = Tagger.load(model_dir, precision="fp32")
    faithful = Tagger.load(model_dir, precision="fp32", speed="faithful")
    assert faithful.model.config == plain.model.config
    assert not is_int8(faithful.model)
    entities = [[(e.start_char, e.end_char, e.type, e.score) for e in doc]
                for doc in (plain.predict([TEXT])[0], faithful.predict([TEXT])[0])]
    assert entities[0] and entities[0] == entities[1]  # scores to the last bit


@pytest.mark.parametrize("samples", [1, 2])
def test_mc_samples_sets_how_many_passes_the_uncertainty_bilstm_reads(model_dir, samples):
    tagger = Tagger.load(model_dir, precision="fp32", speed=Approximation(mc_samples=samples))
    uncertainty = tagger.model.document_graph.uncertainty
    assert uncertainty.num_samples == samples == tagger.model.config.num_samples
    tokens = _rows_seen(tagger.model.context_encoder, tagger)
    # the tagger's Bi-LSTM reads T copies of every token (one per pass), in one call
    assert _rows_seen(uncertainty.encoder, tagger) == [samples * n for n in tokens]


def test_mc_dropout_output_runs_the_uncertainty_bilstm_once(model_dir):
    tagger = Tagger.load(model_dir, precision="fp32", speed=Approximation(mc_dropout="output"))
    uncertainty = tagger.model.document_graph.uncertainty
    assert uncertainty.mc_dropout == "output" and uncertainty.num_samples == 2
    tokens = _rows_seen(tagger.model.context_encoder, tagger)
    assert _rows_seen(uncertainty.encoder, tagger) == tokens  # once, not T times
    # the T output masks still differ: the dense layer reads T different inputs
    lin_rows = _rows_seen(uncertainty.lin, tagger)
    assert lin_rows == [2 * n for n in tokens]


def test_per_sentence_windows_change_the_cross_sentence_context(model_dir):
    outputs = {}
    for name, speed in (("concat", "faithful"),
                        ("per_sentence", Approximation(window_encoding="per_sentence"))):
        tagger = Tagger.load(model_dir, precision="fp32", speed=speed)
        module = tagger.model.cross_sentence
        assert module.window_encoding == name == tagger.model.config.window_encoding
        seen: list[torch.Tensor] = []
        handle = module.register_forward_hook(
            lambda m, a, out, seen=seen: seen.append(out.detach()))
        try:
            tagger.predict([TEXT])
        finally:
            handle.remove()
        outputs[name] = seen[0]
    # the same sentences' contexts (one row each), encoded otherwise
    assert outputs["concat"].shape == outputs["per_sentence"].shape
    assert not torch.allclose(outputs["concat"], outputs["per_sentence"])


def test_int8_quantises_every_lstm_and_linear_layer_of_the_model(model_dir):
    tagger = Tagger.load(model_dir, precision="fp32", speed=Approximation(int8=True))
    model = tagger.model
    assert is_int8(model)
    assert not any(type(m) is torch.nn.Linear for m in model.modules())
    assert any(isinstance(m, Int8Linear) for m in model.modules())
    lstms = [m for m in model.modules() if isinstance(m, torch.nn.LSTM)]
    assert lstms and all(len(getattr(m, INT8_CELLS)) == 2 for m in lstms)
    plain = Tagger.load(model_dir, precision="fp32")
    assert model.state_dict().keys() == plain.model.state_dict().keys()  # weights as saved
    assert tagger.predict([TEXT]) is not None


def test_int8_is_refused_on_a_gpu_before_the_weights_load(model_dir):
    from docgraph.persistence.model_dir import OverrideError

    with pytest.raises(OverrideError, match="CPU only"):
        Tagger.load(model_dir, device="cuda", speed=Approximation(int8=True))


def test_speed_fast_reaches_the_model_and_the_tagging_processes(model_dir, sample_splits):
    tagger = Tagger.load(model_dir, speed="fast")
    assert tagger.overrides.approximation == FAST  # what each tagging process loads with
    config = tagger.model.config
    assert config.window_encoding == (FAST.window_encoding or "concat")
    assert config.num_samples == (FAST.mc_samples or 2)
    assert config.mc_dropout == (FAST.mc_dropout or "full")
    assert is_int8(tagger.model) == FAST.int8
    docs = sample_splits["test"]
    assert tagger.tag(docs, processes=2)[1] == tagger.tag(docs, processes=1)[1]


@pytest.mark.parametrize("tool", ["predict", "evaluate", "visualize"])
def test_every_tagging_command_passes_its_speed_to_the_model(tool, model_dir, tmp_path,
                                                             monkeypatch):
    from docgraph import cli

    loaded = []
    load = Tagger.load.__func__

    def spy(cls, *args, **kwargs):
        loaded.append(kwargs["speed"])
        return load(cls, *args, **kwargs)

    monkeypatch.setattr(Tagger, "load", classmethod(spy))
    text = tmp_path / "in.txt"
    text.write_text(TEXT + "\n", encoding="utf-8")
    common = ["--model", str(model_dir), "--device", "cpu", "--speed", "fast",
              "--mc-samples", "1", "--int8", "on"]
    if tool == "predict":
        argv = [*common, str(text), "--output", str(tmp_path / "out.jsonl"), "--quiet"]
    elif tool == "evaluate":
        argv = [*common, "--dataset", "sample", "--split", "test", "--quiet"]
    else:
        argv = [*common, "--dataset", "sample", "--split", "test", "--doc", "0",
                "--html", str(tmp_path / "graph.html")]
    assert getattr(cli, f"{tool}_main")(argv) == 0
    assert loaded == [approximation_of("fast", mc_samples=1, int8=True)]


def test_the_spacy_component_tags_at_the_speed_it_is_given(model_dir):
    spacy = pytest.importorskip("spacy", reason="spaCy is not installed")
    from docgraph.integrations.spacy_component import DocgraphSpacyError

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu",
                                         "speed": "fast"})
    tagger = nlp.get_pipe("docgraph_ner").tagger
    assert tagger.overrides.approximation == FAST
    assert nlp(TEXT) is not None
    with pytest.raises(DocgraphSpacyError, match="speed must be one of"):
        nlp.add_pipe("docgraph_ner", name="other",
                     config={"model": str(model_dir), "device": "cpu", "speed": "quick"})


def test_a_gpu_batch_is_sized_by_the_free_memory_of_the_device(monkeypatch):
    from docgraph.config import ExperimentConfig
    from docgraph.tagging import pipeline

    config = ExperimentConfig()
    cpu = pipeline.batch_tokens(config)
    assert pipeline.batch_tokens(config, "cpu") == cpu == pipeline.BATCH_TOKENS
    for free, expected in ((80 << 30, pipeline.GPU_BATCH_TOKENS),
                           (2 << 30, (2 << 30) // pipeline.GPU_BYTES_PER_TOKEN),
                           (100 << 20, pipeline.BATCH_TOKENS)):
        monkeypatch.setattr(pipeline, "available_memory", lambda device, free=free: free)
        assert pipeline.batch_tokens(config, "cuda") == expected


@pytest.mark.parametrize("bf16", [True, False])
def test_auto_precision_takes_bf16_on_a_gpu_that_multiplies_it(bf16, monkeypatch):
    from docgraph.runtime import precision as module

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    assert module.tagging_precision("auto", "cuda") == ("auto" if bf16 else None)
    assert module.tagging_precision("fp32", "cuda") == "fp32"


def test_the_studys_variants_name_the_approximations():
    from docgraph_dev.fast_mode import DEFAULT_VARIANTS, variant

    assert variant("faithful") == "faithful" and variant("fast") == "fast"  # each model's own
    assert variant("window_encoding=per_sentence+mc_samples=1+int8") == Approximation(
        window_encoding="per_sentence", mc_samples=1, int8=True)
    assert variant("mc_dropout=output") == Approximation(mc_dropout="output")
    assert len({variant(v) for v in DEFAULT_VARIANTS}) == len(DEFAULT_VARIANTS)
    for bad in ("int8=yes", "mc_samples=two", "window=3", "mc_dropout=half"):
        with pytest.raises(ValueError):
            variant(bad)


def test_the_studys_table_gives_each_variants_change_and_largest_loss():
    from docgraph_dev.fast_mode import markdown_table

    def rows(cased, lower, change=None):
        out = {"cased": {"scores": {"f1": cased}}, "lower": {"scores": {"f1": lower}}}
        if change is not None:
            for name, value in zip(out, change):
                out[name]["f1_change"] = value
        return {"rows": out}

    record = {"models": {"m": {"variants": {"faithful": rows(90.0, 85.0),
                                            "int8": rows(89.9, 85.2, (-0.1, 0.2))}}}}
    table = markdown_table(record)
    assert "| cased | 90.00 | -0.10 |" in table
    assert "| lower | 85.00 | +0.20 |" in table
    assert "| largest loss | | -0.10 |" in table


def test_the_service_loads_its_workers_model_at_the_speed_it_is_given(monkeypatch):
    from docgraph.cli.serve import serve_parser
    from docgraph.config.serve import ServeConfig
    from docgraph.serve import worker

    assert serve_parser().parse_args(["--model", "conll03", "--speed", "fast"]).speed == "fast"
    loaded, sent = [], []

    def spy(model, **kwargs):
        loaded.append(kwargs["speed"])
        raise RuntimeError("stop here")

    class Pipe:
        def send(self, message):
            sent.append(message)

    def leave(status):
        raise SystemExit(status)

    monkeypatch.setattr(worker.Tagger, "load", spy)
    monkeypatch.setattr(worker, "leave_now", leave)
    monkeypatch.setattr(worker.signal, "signal", lambda *args: None)
    with pytest.raises(SystemExit):
        worker.main(Pipe(), ServeConfig(model="conll03", speed="fast"))
    assert loaded == ["fast"] and sent == [("failed", "stop here")]
