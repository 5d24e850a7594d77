"""Tests of the pure helpers of :mod:`docgraph_dev.ship`: its command line and the tagging
threshold written into a packed model (packing and tagging are
``tests/test_packing.py``'s and ``tests/test_shipped.py``'s)."""

from __future__ import annotations

import pytest

from docgraph_dev.ship import parser


def test_the_command_line_defaults():
    args = parser().parse_args(["runs/x", "--name", "conll03"])
    assert (args.run_dir, args.name, args.dtype) == ("runs/x", "conll03", "float16")
    assert (args.keep_float32, args.threshold, args.target, args.out) == ([], None, None, None)
    assert (args.min_agreement, args.max_f1_change) == (99.9, 0.05)


def test_the_command_line_values():
    args = parser().parse_args(["r", "--name", "n", "--dtype", "bfloat16", "--keep-float32",
                                "crf.*", "emb*", "--threshold", "1.5", "--min-agreement", "99"])
    assert args.dtype == "bfloat16" and args.keep_float32 == ["crf.*", "emb*"]
    assert (args.threshold, args.min_agreement) == (1.5, 99.0)


@pytest.mark.parametrize("argv", [["r"], ["r", "--name", "n", "--dtype", "int8"], []])
def test_the_command_line_refuses(argv, capsys):
    with pytest.raises(SystemExit) as info:
        parser().parse_args(argv)
    assert info.value.code == 2
    assert "ship_model.py: error:" in capsys.readouterr().err
