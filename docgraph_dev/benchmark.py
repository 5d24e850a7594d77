"""The command line of ``scripts/benchmark.py``: runs the chosen measurements, writes their JSON.

* by default, the speed of GCDoc against the BiLSTM-CRF baseline
  (:func:`~docgraph_dev.speed.measure_speed`) and the throughput per core setting
  (:func:`~docgraph_dev.core_scaling.run_scaling`);
* ``--ops``: the operators of one training and one tagging step per training mode
  (:func:`~docgraph_dev.operator_counts.run_operator_counts`);
* ``--step-speed``: training-step and tagging speed on a device
  (:func:`~docgraph_dev.step_speed.run_step_speed`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path

from docgraph.cli.arguments import SWITCHES
from docgraph.data.errors import CorpusFormatError
from docgraph.data.registry import load_dataset
from docgraph.runtime.atomic import atomic_write_json
from docgraph_dev.core_scaling import SETTINGS, ScalingOptions, run_scaling
from docgraph_dev.operator_counts import (
    OperatorCountOptions,
    format_counts,
    run_operator_counts,
)
from docgraph_dev.speed import SpeedOptions, epoch_minutes, format_speed_table, measure_speed
from docgraph_dev.step_speed import format_step_speed, run_step_speed

MEASUREMENTS = Path("benchmarks/results/measurements")
"""Where the measurements of ``scripts/benchmark.py`` go by default: ``benchmark-speed/``,
``benchmark-ops/`` and ``benchmark-step-speed/`` (see ``benchmarks/results/README.md``)."""


def default_output(today: _dt.date | None = None) -> Path:
    """``benchmarks/results/measurements/benchmark-speed/speed-<YYYY-MM-DD>.json``."""
    today = today or _dt.date.today()
    return MEASUREMENTS / "benchmark-speed" / f"speed-{today.isoformat()}.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options of ``scripts/benchmark.py``."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description="Speed of GCDoc vs the BiLSTM-CRF baseline on the same real batches."
    )
    parser.add_argument("--dataset", default="conll03")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--quick", action="store_true", help="2 batches, 1 repeat, graph build once (< 60 s)"
    )
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--batch-tokens", type=int, default=SpeedOptions.batch_tokens,
                        help="token budget per batch (default: the presets' 4000)")
    parser.add_argument("--batches", type=int, default=None, help="batches timed per repeat")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--fast",
        action="store_true",
        help="benchmark GCDoc with the --fast approximations "
        "(window_encoding=per_sentence, mc_dropout=output)",
    )
    parser.add_argument(
        "--out", default=None,
        help=f"JSON output (default {MEASUREMENTS}/benchmark-speed/speed-<date>.json)"
    )
    parser.add_argument("--settings", nargs="*", default=None,
                        help="core settings to compare ('1 thread', '2 threads', 'DDP x2'; "
                             "default all; none to skip)")
    parser.add_argument("--ops", action="store_true",
                        help="count the operators of one training and one tagging step of "
                             "every training mode on real batches (BiLSTM-CRF and GCDoc at "
                             "4000 and 16000 tokens, the other modes at 4000) instead of "
                             "timing, one JSON per mode (default output directory "
                             f"{MEASUREMENTS}/benchmark-ops/<dataset>/); exit status 1 when "
                             "a target is missed (any accumulating index write or documented "
                             "non-deterministic operator in a training step)")
    parser.add_argument("--modes", nargs="+", default=None, metavar="MODE",
                        help="with --ops: the modes counted (default: every training mode)")
    parser.add_argument("--step-speed", action="store_true",
                        help="time training steps of both models at each --budgets token "
                             "budget on --device, and dev tagging (the GPU kit's speed table)")
    parser.add_argument("--device", default="cpu", help="device of --step-speed (default: cpu)")
    parser.add_argument("--profile", action="store_true",
                        help="with --step-speed: profile one more step per model and budget "
                             "(kernels, busy fraction, top kernels, each component's time)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="with --step-speed: both models' precision (default fp32)")
    parser.add_argument("--deterministic", action="store_true",
                        help="with --step-speed: run with deterministic kernels "
                             "(train.py --deterministic), to measure what they cost")
    parser.add_argument("--budgets", type=int, nargs="+", default=[4000, 16000, 32000],
                        help="token budgets of --step-speed (default: 4000 16000 32000)")
    parser.add_argument("--steps", type=int, default=8,
                        help="timed steps per budget and model of --step-speed (default: 8)")
    parser.add_argument("--scaling-batches", type=int, default=None,
                        help="batches of the core-settings comparison (default 6, quick 2)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark from the command line, print the table and write the JSON."""
    args = parse_args(argv)
    argv_list = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(["python scripts/benchmark.py", *argv_list])
    if args.ops:
        return _operator_counts_main(args, command)
    if args.step_speed:
        return _step_speed_main(args, command)
    options = SpeedOptions(
        dataset=args.dataset,
        data_dir=args.data_dir,
        quick=args.quick,
        threads=args.threads,
        batch_tokens=args.batch_tokens,
        num_batches=args.batches,
        repeats=args.repeats,
        model_overrides=dict(SWITCHES["--fast"]["model"]) if args.fast else {},
    )
    try:
        result = measure_speed(options, command=command)
        settings = tuple(args.settings) if args.settings is not None else tuple(SETTINGS)
        unknown = [s for s in settings if s not in SETTINGS]
        if unknown:
            raise ValueError(f"--settings: unknown {unknown}; expected some of {list(SETTINGS)}")
        if settings:
            scaling = ScalingOptions(
                dataset=args.dataset, data_dir=args.data_dir, batch_tokens=args.batch_tokens,
                num_batches=args.scaling_batches or (2 if args.quick else 6),
                repeats=1 if args.quick else 2, model_overrides=options.model_overrides,
                settings=settings)
            result["scaling"] = run_scaling(scaling)
            dev = load_dataset(args.dataset, args.data_dir, splits=("dev",))["dev"]
            result["dev_tokens"] = sum(len(doc.tokens) for doc in dev)
            result["epoch_minutes_estimate"] = epoch_minutes(
                result["scaling"], result["train_tokens"], result["dev_tokens"])
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else default_output()
    atomic_write_json(out, result)
    print(format_speed_table(result))
    print(f"wrote {out}")
    return 0


def _operator_counts_main(args: argparse.Namespace, command: str) -> int:
    options = OperatorCountOptions(dataset=args.dataset, data_dir=args.data_dir,
                                   modes=tuple(args.modes) if args.modes else None)
    try:
        result = run_operator_counts(options, command=command)
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else MEASUREMENTS / "benchmark-ops" / args.dataset
    common = {k: v for k, v in result.items() if k != "modes"}
    for name, mode in result["modes"].items():
        atomic_write_json(out / f"{name}.json", {**common, "mode": name, **mode})
    print(format_counts(result))
    print(f"wrote {len(result['modes'])} modes to {out}/")
    return 0 if result["met"] else 1


def _step_speed_main(args: argparse.Namespace, command: str) -> int:
    try:
        result = run_step_speed(args.dataset, args.data_dir, args.device,
                                tuple(args.budgets), args.steps, command=command,
                                profiled=args.profile, deterministic=args.deterministic,
                                precision=args.precision)
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else MEASUREMENTS / "benchmark-step-speed" / (
        f"{args.dataset}-{result['device'].split(':')[0]}.json")
    atomic_write_json(out, result)
    print(format_step_speed(result))
    print(f"wrote {out}")
    return 0
