"""Sealed JSON files (docgraph/runtime/integrity.py): the digest of their content, checked
when read back; damage anywhere refused with the file named."""

from __future__ import annotations

import hashlib
import json

import pytest

from docgraph.runtime.integrity import (
    DIGEST_KEY,
    EDITED,
    MAX_JSON_BYTES,
    DamagedFileError,
    content_digest,
    read_json_file,
    seal,
    unseal,
    write_sealed_json,
)

CONTENT = {"dataset": "conll03", "model": {"threshold": 1.5, "hidden": 200}, "lm": None,
           "words": ["Paris", "café"]}


def test_the_digest_is_that_of_the_canonical_json():
    text = '{"dataset":"conll03","lm":null,"model":{"hidden":200,"threshold":1.5},' \
           '"words":["Paris","café"]}'
    assert content_digest(CONTENT) == hashlib.sha256(text.encode()).hexdigest()
    sealed = seal(CONTENT)
    assert list(sealed)[-1] == DIGEST_KEY and sealed[DIGEST_KEY] == content_digest(CONTENT)
    assert seal(sealed) == sealed  # sealing again replaces the digest
    assert unseal(sealed, "f.json") == CONTENT


def test_written_and_read_back(tmp_path):
    write_sealed_json(tmp_path / "a.json", CONTENT)
    assert read_json_file(tmp_path / "a.json") == CONTENT
    assert (tmp_path / "a.json").read_text().endswith("}\n")
    write_sealed_json(tmp_path / "b.json", CONTENT, indent=None, ensure_ascii=False)
    assert "\n" not in (tmp_path / "b.json").read_text(encoding="utf-8")
    assert "café" in (tmp_path / "b.json").read_text(encoding="utf-8")
    assert read_json_file(tmp_path / "b.json") == CONTENT


def test_the_seal_is_required_unless_the_file_says_it_was_edited(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps(CONTENT))
    with pytest.raises(DamagedFileError) as info:
        read_json_file(path)
    assert str(info.value) == (f"{path}: damaged or not written by docgraph (a JSON object "
                               "without the 'sha256' seal docgraph writes); copy it again or "
                               "retrain (edited on purpose? set its 'sha256' entry to 'edited')")
    assert read_json_file(path, sealed=False) == CONTENT  # a file of another tool
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(DamagedFileError, match=r"vocab.json: damaged .* \(list without"):
        read_json_file(path)
    path.write_text(json.dumps({**CONTENT, DIGEST_KEY: EDITED, "hidden": 7}))
    assert read_json_file(path) == {**CONTENT, "hidden": 7}


def test_a_damaged_seal_key_is_refused(tmp_path):
    path = tmp_path / "manifest.json"
    write_sealed_json(path, CONTENT)
    path.write_text(path.read_text().replace('"sha256"', '"sha2v6"'))
    with pytest.raises(DamagedFileError, match=r"manifest.json: damaged or not written by "):
        read_json_file(path)


def test_a_file_larger_than_any_docgraph_writes_is_refused_before_it_is_read(tmp_path,
                                                                            monkeypatch):
    path = tmp_path / "vocab.json"
    write_sealed_json(path, CONTENT)
    size = path.stat().st_size
    assert read_json_file(path, max_bytes=size) == CONTENT
    with pytest.raises(DamagedFileError) as info:
        read_json_file(path, max_bytes=size - 1)
    assert str(info.value) == (f"{path}: {size:,} bytes, more than the {size - 1:,} of any "
                               "JSON file docgraph writes; copy it again or retrain")
    with open(path, "r+b") as handle:  # sparse: no time spent writing it
        handle.truncate(MAX_JSON_BYTES + 1)
    monkeypatch.setattr("pathlib.Path.read_bytes", lambda self: pytest.fail("read"))
    with pytest.raises(DamagedFileError, match=r"vocab.json: 67,108,865 bytes, more than"):
        read_json_file(path)


def test_a_changed_value_is_refused_with_the_file_named(tmp_path):
    path = tmp_path / "config.json"
    write_sealed_json(path, CONTENT)
    path.write_text(path.read_text().replace("1.5", "1.7"))
    with pytest.raises(DamagedFileError, match=r"config.json: damaged \(its content does not "
                                               r"match the SHA-256 it carries\)"):
        read_json_file(path)


def test_not_json_and_not_utf8_name_the_file_and_place(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text('{"a": 1,\n "b": }')
    with pytest.raises(DamagedFileError, match=r"vocab.json: not valid JSON \(line 2, column 7"):
        read_json_file(path)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(DamagedFileError, match=r"vocab.json: not UTF-8 text \(byte 7\)"):
        read_json_file(path)


@pytest.mark.parametrize("indent", [2, None])
def test_every_flipped_bit_is_refused_or_harmless(tmp_path, indent):
    """Brute force: each single-bit change of a sealed file is refused, or reads the same
    content (a hit on the digest's own key is refused: the seal is required)."""
    path = tmp_path / "f.json"
    write_sealed_json(path, CONTENT, indent=indent, ensure_ascii=False)
    original = path.read_bytes()
    refused = 0
    for i in range(len(original)):
        for bit in range(8):
            data = bytearray(original)
            data[i] ^= 1 << bit
            path.write_bytes(bytes(data))
            try:
                read = read_json_file(path)
            except DamagedFileError:
                refused += 1
                continue
            assert read == CONTENT, f"byte {i} bit {bit} changed the content silently"
    assert refused > 0.95 * 8 * len(original)
