"""The tagging service's bearer token."""

from __future__ import annotations

import pytest

from docgraph.serve.auth import bearer_matches, read_api_key


def test_the_key_is_the_first_line_stripped(tmp_path):
    (tmp_path / "key").write_text("  t0ken \nsecond line\n")
    assert read_api_key(tmp_path / "key") == "t0ken"


@pytest.mark.parametrize("content, reason", [("\n\n", "holds no token"),
                                             (None, "cannot be read")])
def test_a_bad_key_file_is_one_line_naming_the_flag_and_file(tmp_path, content, reason):
    path = tmp_path / "key"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=rf"^--api-key-file {path}: {reason}"):
        read_api_key(path)


@pytest.mark.parametrize("header, ok", [
    ("Bearer t0ken", True), ("bearer t0ken", True), ("Bearer  t0ken ", True),
    ("Bearer t0ke", False), ("Bearer t0kenn", False), ("Basic t0ken", False),
    ("t0ken", False), ("", False), (None, False), ("Bearer ", False)])
def test_the_header_must_carry_the_token(header, ok):
    assert bearer_matches(header, "t0ken") is ok


def test_the_comparison_is_constant_time(monkeypatch):
    import hmac

    seen = []
    original = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest",
                        lambda a, b: seen.append((a, b)) or original(a, b))
    assert not bearer_matches("Bearer guess", "t0ken")
    assert seen == [(b"guess", b"t0ken")]
