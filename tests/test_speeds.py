"""A model directory's speeds (``speed.json``, :mod:`docgraph.persistence.speeds`): its fast
mode and default speed reach every way of tagging, evaluation reports the trained computation
unless told, and a damaged or invalid file is refused by name."""

import shutil

import pytest

from docgraph.config.tagging import FAITHFUL, FAST, Approximation, ModelSpeeds
from docgraph.tagging.tagger import Tagger

TEXT = "Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice. Kestrel lead the table."


def test_a_model_directory_declares_its_fast_mode_and_default_speed(model_dir, tmp_path,
                                                                     monkeypatch):
    from docgraph import cli
    from docgraph.persistence.shipped import SPEEDS_FILE
    from docgraph.persistence.speeds import model_speeds, save_model_speeds

    own = shutil.copytree(model_dir, tmp_path / "own")
    assert model_speeds(own) == ModelSpeeds(FAST, "faithful")  # no file: the library's
    declared = Approximation(mc_samples=2)
    assert save_model_speeds(own, ModelSpeeds(declared)) == own / SPEEDS_FILE
    assert model_speeds(own) == ModelSpeeds(declared, "faithful")
    tagger = Tagger.load(own, speed="fast")
    assert tagger.overrides.approximation == declared
    assert tagger.model.config.num_samples == 2
    assert tagger.model.config.window_encoding == "concat"  # as trained: not FAST's
    assert Tagger.load(own).overrides.approximation == FAITHFUL
    # a setting given over --speed fast replaces the model's own, the rest stays
    loaded = []
    load = Tagger.load.__func__
    monkeypatch.setattr(Tagger, "load", classmethod(
        lambda cls, *a, **k: loaded.append(k["speed"]) or load(cls, *a, **k)))
    text = tmp_path / "in.txt"
    text.write_text(TEXT + "\n", encoding="utf-8")
    predict = ["--model", str(own), "--device", "cpu", str(text), "--output",
               str(tmp_path / "out.jsonl"), "--quiet"]
    assert cli.predict_main([*predict, "--speed", "fast", "--int8", "on"]) == 0
    assert loaded == [Approximation(mc_samples=2, int8=True)]
    # declared the default: every tagging door takes it unless told; evaluate.py does not
    save_model_speeds(own, ModelSpeeds(declared, "fast"))
    assert load(Tagger, own).overrides.approximation == declared
    loaded.clear()
    assert cli.predict_main(predict) == 0
    assert cli.predict_main([*predict, "--speed", "faithful"]) == 0
    assert cli.evaluate_main(["--model", str(own), "--device", "cpu", "--dataset", "sample",
                              "--split", "test", "--quiet"]) == 0
    assert loaded == [declared, FAITHFUL, FAITHFUL]
    # a saved copy keeps them
    assert model_speeds(load(Tagger, own).save(tmp_path / "saved")) == ModelSpeeds(declared,
                                                                                 "fast")


def test_a_packed_models_speeds_are_in_its_manifest(packed, tmp_path):
    from docgraph.persistence.archive import CheckpointError
    from docgraph.persistence.manifest import file_sha256, read_manifest, verify_manifest
    from docgraph.persistence.shipped import SPEEDS_FILE
    from docgraph.persistence.speeds import model_speeds, save_model_speeds

    directory = tmp_path / "packed"
    shutil.copytree(packed[1].directory, directory)
    speeds = ModelSpeeds(Approximation(mc_samples=1, int8=True), "fast")
    save_model_speeds(directory, speeds)
    assert read_manifest(directory)["files"][SPEEDS_FILE] == file_sha256(directory / SPEEDS_FILE)
    verify_manifest(directory)
    assert model_speeds(directory) == speeds
    path = directory / SPEEDS_FILE
    path.write_text(path.read_text().replace("true", "false"), encoding="utf-8")
    with pytest.raises(CheckpointError, match=f"{SPEEDS_FILE}.*damaged"):
        model_speeds(directory)


@pytest.mark.parametrize("record, problem", [
    ({"fast": {"mc_samples": 0}}, "mc_samples must be an integer >= 1"),
    ({"fast": {"window_encoding": "twice"}}, "window_encoding must be one of"),
    ({"fast": {"int8": "yes"}}, "int8 must be true or false"),
    ({"fast": {"speed": "fast"}}, "fast: expected an object of"),
    ({"default": "quick"}, "default must be one of"),
    ({"fastest": {}}, "expected an object of"),
])
def test_a_speeds_file_that_declares_no_valid_speeds_is_refused_by_name(model_dir, tmp_path,
                                                                         record, problem):
    from docgraph.persistence.archive import CheckpointError
    from docgraph.persistence.shipped import SPEEDS_FILE
    from docgraph.persistence.speeds import model_speeds
    from docgraph.runtime.integrity import write_sealed_json

    own = shutil.copytree(model_dir, tmp_path / "own")
    write_sealed_json(own / SPEEDS_FILE, record)
    with pytest.raises(CheckpointError, match=f"{SPEEDS_FILE}: not a model's speeds.*{problem}"):
        model_speeds(own)
    with pytest.raises(CheckpointError, match=SPEEDS_FILE):
        Tagger.load(own, speed="faithful")  # a damaged model directory, whatever the speed
