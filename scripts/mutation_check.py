"""Mutation check of the core modules: does the test suite catch small, plausible bugs?

Each mutant below changes one expression of the library the way a real slip would (a dropped
term, a swapped index, a wrong split, a key that forgets a setting). The script applies one
mutant at a time to a scratch copy of the checkout, runs the test files that guard that code
and records whether they fail (the mutant is *killed*) or pass (it *survives*). The
checkout itself is never modified. Results go to ``docs/mutation.md`` (``--report``) so a
survivor is either killed by a new test or explained there.

    python scripts/mutation_check.py                 # all mutants, prints a table
    python scripts/mutation_check.py --report docs/mutation.md
    python scripts/mutation_check.py --only crf-no-end-transitions
    python scripts/mutation_check.py --check-targets  # every mutant still applies (fast)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    """One small bug: ``old`` (which must occur exactly once in ``path``) becomes ``new``."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str


MUTANTS: tuple[Mutant, ...] = (
    Mutant("crf-no-end-transitions", "docgraph/nn/crf.py",
           "log_z = torch.log((alpha_last * end_exp).sum(dim=1)) + smax + emax",
           "log_z = torch.log(alpha_last.sum(dim=1)) + smax",
           ("tests/test_crf.py",), "the CRF normaliser forgets the end transitions"),
    Mutant("crf-gold-no-end", "docgraph/nn/crf.py",
           " \\\n            + gather_rows(crf.end_transitions, "
           "padded_tags.reshape(-1)[layout.crf_last])", "",
           ("tests/test_crf.py",), "the gold path score forgets the end transition"),
    Mutant("crf-gold-transition-swapped", "docgraph/nn/crf.py",
           "pairs = padded_tags[:, :-1] * labels + padded_tags[:, 1:]",
           "pairs = padded_tags[:, 1:] * labels + padded_tags[:, :-1]",
           ("tests/test_crf.py",), "gold transitions read [to, from]"),
    Mutant("viterbi-no-end", "docgraph/nn/crf.py",
           "final = torch.cat(scores)[layout.packed_last] + end",
           "final = torch.cat(scores)[layout.packed_last]",
           ("tests/test_crf.py",), "Viterbi ignores the end transitions"),
    Mutant("layout-reverse-not-within-length", "docgraph/nn/layout.py",
           "reverse = np.where(real, starts[members, None] + member_len[:, None] - 1 - pos, 0)",
           "reverse = np.where(real, starts[members, None] + steps - 1 - pos, 0)",
           ("tests/test_layout.py",), "the right-to-left LSTM reads padding first"),
    Mutant("conv-mean-over-all-neighbours", "docgraph/nn/conv.py",
           "count = segment_sum(keep, ptr)", "count = degree",
           ("tests/test_conv.py",), "the mean counts pruned neighbours too"),
    Mutant("conv-gate-swapped", "docgraph/nn/conv.py",
           "return (1.0 - z) * x + z * h_tilde", "return z * x + (1.0 - z) * h_tilde",
           ("tests/test_conv.py",), "the update gate's roles swapped"),
    Mutant("relation-halves-swapped", "docgraph/nn/relation.py",
           "return gather_rows(score_i, edge_index[1]) + gather_rows(score_j, edge_index[0])",
           "return gather_rows(score_i, edge_index[0]) + gather_rows(score_j, edge_index[1])",
           ("tests/test_relation.py",), "W_c's target and source halves swapped"),
    Mutant("relation-entity-labels-keep-o", "docgraph/nn/relation.py",
           "return same & entity_i, entity_i | entity_j", "return same, entity_i | entity_j",
           ("tests/test_relation.py", "tests/test_model.py"),
           "O-O edges counted as positives with relation_labels='entity'"),
    Mutant("uncertainty-prunes-below-threshold", "docgraph/nn/uncertainty.py",
           "return u > self.threshold", "return u < self.threshold",
           ("tests/test_uncertainty.py",), "Drop holds the confident tokens"),
    Mutant("uncertainty-sum-not-mean", "docgraph/nn/uncertainty.py",
           ".view(T, num_tokens, -1).mean(dim=0)", ".view(T, num_tokens, -1).sum(dim=0)",
           ("tests/test_uncertainty.py",), "the MC average is not normalised"),
    Mutant("cross-sentence-softmax-wrong-axis", "docgraph/nn/cross_sentence.py",
           "attn = scores.softmax(dim=1) * avail.to(scores.dtype)",
           "attn = scores.softmax(dim=0) * avail.to(scores.dtype)",
           ("tests/test_cross_sentence.py",), "attention normalised over sentences"),
    Mutant("graph-case-sensitive", "docgraph/graph/build.py",
           "keys = [w.lower() for w in words] if lowercase else list(words)",
           "keys = list(words)",
           ("tests/test_build.py",), "recurrence edges ignore the lowercase setting"),
    Mutant("lm-key-without-context", "docgraph/data/lm_encoder.py",
           '        out.pop("batch_size")\n',
           '        out.pop("batch_size")\n        out.pop("context")\n',
           ("tests/test_lm_cache.py",), "the LM cache key forgets --lm-context"),
    Mutant("lm-key-without-layers", "docgraph/data/lm_encoder.py",
           '        out.pop("batch_size")\n',
           '        out.pop("batch_size")\n        out.pop("layers")\n',
           ("tests/test_lm_cache.py",), "the LM cache key forgets the layer selection"),
    Mutant("lm-features-on-chunks", "docgraph/graph/splits.py",
           "lm_features = lm_encoder.encode(list(documents))",
           "lm_features = lm_encoder.encode(docs)",
           ("tests/test_splits.py",), "LM features computed on the --max-doc-tokens chunks"),
    Mutant("report-best-by-test", "docgraph_dev/report/selection.py",
           'statistics.fmean(score_values(item[1], "dev", "f1"))',
           'statistics.fmean(score_values(item[1], "test", "f1"))',
           ("tests/test_report_selection.py",),
           "the summary's best configuration chosen by test F1"),
    Mutant("resume-one-rng-state", "docgraph/training/loop.py",
           "            return ranks[rank]\n", '            return ckpt["rng"]\n',
           ("tests/test_processes.py",), "a resumed multi-process run restores one RNG state"),
    Mutant("trainer-skips-clipping-of-tagger", "docgraph/training/loop.py",
           "return [group for group in (main, tagger) if group]", "return [main]",
           ("tests/test_loop.py",), "the uncertainty tagger's gradient is never clipped"),
    Mutant("early-stopping-patience-off-by-one", "docgraph/training/loop.py",
           "return state.bad_epochs >= config.patience and",
           "return state.bad_epochs > config.patience and",
           ("tests/test_training_stop.py",),
           "training runs patience + 1 epochs without improvement before stopping"),
    Mutant("stop-reason-patience-off-by-one", "docgraph/training/loop.py",
           "    if early_stopped(state, config, min_steps):\n        return \"early_stopping\"",
           "    if state.bad_epochs > config.patience:\n        return \"early_stopping\"",
           ("tests/test_training_stop.py",),
           "a run stopped after patience epochs without improvement not called converged"),
    Mutant("tagging-masks-from-global-stream", "docgraph/tagging/inference.py",
           "model.inspect(batch, mc_seed=seed)", "model.inspect(batch, mc_seed=None)",
           ("tests/test_batch_independence.py",),
           "tagging draws the Monte-Carlo masks from the global stream (batch-dependent tags)"),
    Mutant("segment-noise-from-global-stream", "docgraph/nn/uncertainty.py",
           "noise_in.append(torch.rand(in_shape, generator=gen,",
           "noise_in.append(torch.rand(in_shape,",
           ("tests/test_batch_independence.py",),
           "a segment's input masks ignore its generator"),
    Mutant("mc-keys-hash-the-whole-batch", "docgraph/batching/plan.py",
           "for part in (word[start:end], chars[start:end], sent_len[first:last]):",
           "for part in (word, chars[start:end], sent_len[first:last]):",
           ("tests/test_plan.py",),
           "a document's Monte-Carlo key hashes the words of the whole batch"),
    Mutant("windows-previous-next-swapped", "docgraph/batching/plan.py",
           "prev_start, prev_len, next_start, next_len = window_segments(",
           "next_start, next_len, prev_start, prev_len = window_segments(",
           ("tests/test_window_order.py",),
           "the batch plan's previous and next cross-sentence windows swapped"),
    Mutant("config-accepts-negative-window", "docgraph/config/model.py",
           'window: int = integer(2, low=0,', 'window: int = integer(2, low=None,',
           ("tests/test_validation.py",), "--window -2 accepted"),
    Mutant("window-rows-cross-documents", "docgraph/nn/cross_sentence.py",
           "previous = np.where(idx - steps >= doc_first, idx - steps, num)",
           "previous = np.where(idx - steps >= 0, idx - steps, num)",
           ("tests/test_cross_sentence.py",),
           "a per-sentence previous window reaches into the document before"),
    Mutant("window-sums-skip-farthest", "docgraph/nn/cross_sentence.py",
           "for j in range(rows.size(1)):", "for j in range(rows.size(1) - 1):",
           ("tests/test_cross_sentence.py",),
           "a per-sentence window sum leaves out its farthest sentence"),
    Mutant("layout-sum-is-mean", "docgraph/nn/layout.py",
           'weights = bucket.mean_weights if reduce == "mean" else bucket.mean_weights > 0',
           "weights = bucket.mean_weights",
           ("tests/test_layout.py",), "run_bilstm(reduce='sum') returns the means"),
    Mutant("pad-tokens-padding-reads-a-token", "docgraph/nn/encoders.py",
           "index = torch.where(mask, first.unsqueeze(1) + steps, x.size(0))",
           "index = torch.where(mask, first.unsqueeze(1) + steps, 0)",
           ("tests/test_encoders.py",), "padded positions read the first token, not padding"),
    Mutant("counter-ignores-accumulate", "docgraph_dev/operator_counts.py",
           "return len(inputs) <= position or inputs[position] is not False", "return True",
           ("tests/test_operator_counts.py",),
           "an index_put without accumulate counted as an accumulating write"),
    Mutant("counter-misses-gather-backward", "docgraph_dev/operator_counts.py",
           '"IndexBackward0", "UnsafeIndexBackward0", "GatherBackward0", "IndexSelectBackward0",',
           '"IndexBackward0", "UnsafeIndexBackward0", "IndexSelectBackward0",',
           ("tests/test_operator_counts.py",),
           "gather's backward (a scatter_add) named by its operators, not its node"),
    Mutant("deterministic-switch-dropped", "docgraph/training/experiment.py",
           "with deterministic_kernels(config.train.deterministic):",
           "with deterministic_kernels(False):",
           ("tests/test_determinism.py",), "run_experiment ignores --deterministic"),
    Mutant("deterministic-not-given-back", "docgraph/runtime/determinism.py",
           "torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])", "pass",
           ("tests/test_determinism.py",),
           "a deterministic run leaves deterministic algorithms on in its process"),
    Mutant("gather-rows-flattens-wrong", "docgraph/nn/gather.py",
           "rows = F.embedding(index, x.reshape(x.size(0), -1))",
           "rows = F.embedding(index.flip(-1), x.reshape(x.size(0), -1))",
           ("tests/test_gather.py",), "a gather of rows of more than two dimensions reorders them"),
    Mutant("csr-offsets-off-by-one", "docgraph/nn/gather.py",
           "ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)",
           "ptr = np.concatenate([[0], np.cumsum(counts) - 1]).astype(np.int64)",
           ("tests/test_gather.py",), "the CSR offsets of the runs end one row early"),
    Mutant("spacy-span-end-inclusive", "docgraph/integrations/spacy_component.py",
           "layout.sentences[e.sentence][e.end - 1] + 1, e.score)",
           "layout.sentences[e.sentence][e.end - 1], e.score)",
           ("tests/test_spacy_component.py",), "a spaCy entity leaves out its last token"),
    Mutant("progress-on-every-rank", "docgraph/runtime/progress.py",
           "        return dist.get_rank() == 0\n", "        return True\n",
           ("tests/test_progress.py",), "every process of a group shows progress"),
    Mutant("override-threshold-ignored", "docgraph/persistence/model_dir.py",
           "        if self.threshold is not None:\n            changes[\"threshold\"]",
           "        if False:\n            changes[\"threshold\"]",
           ("tests/test_model_dir.py",), "a tagging threshold override never reaches the model"),
    Mutant("override-precision-ignored", "docgraph/persistence/model_dir.py",
           "        if precision is not None and precision != config.model.precision:",
           "        if False:",
           ("tests/test_precision.py",), "a tagging precision never reaches the model"),
    Mutant("uncertainty-in-bf16", "docgraph/nn/uncertainty.py",
           "            logits = logits.float()\n", "            pass\n",
           ("tests/test_batch_independence.py",),
           "the uncertainty of bfloat16 tagging is computed in bfloat16 and prunes nothing"),
    Mutant("leave-now-loses-buffers", "docgraph/runtime/lifetime.py",
           "            stream.flush()\n    os._exit(status)",
           "            pass\n    os._exit(status)",
           ("tests/test_lifetime.py",), "a worker leaving with os._exit drops its buffered output"),
    Mutant("tagging-flags-ignore-marks", "docgraph/config/tagging.py",
           "            if tool in setting.marks]", "            if setting.marks]",
           ("tests/test_config_tagging.py", "tests/test_arguments.py"),
           "every tagging tool takes every tagging flag"),
    Mutant("corpus-check-forgets-the-models-dataset",
           "docgraph/cli/arguments/tagging_checks.py",
           'dataset = getattr(args, "dataset", None) or saved.get("dataset")',
           'dataset = getattr(args, "dataset", None)',
           ("tests/test_arguments.py",),
           "evaluate.py/visualize.py check no corpus unless --dataset is given"),
    Mutant("html-documents-ignore-the-split", "docgraph/tagging/prediction_io.py",
           "enumerate(_document_spans(text, options.documents))]",
           'enumerate(_document_spans(text, "file"))]',
           ("tests/test_prediction_io.py",),
           "predict.py --format html ignores --documents"),
    Mutant("pool-worker-threads-unset", "docgraph/tagging/pipeline.py",
           "    torch.set_num_threads(threads)\n    model, vocabs, config = load_model_dir",
           "    model, vocabs, config = load_model_dir",
           ("tests/test_processes.py",), "a tagging pool process keeps torch's default threads"),
    Mutant("training-worker-threads-unset", "docgraph/runtime/processes.py",
           "        torch.set_num_threads(threads)\n        function = resolve(fn)",
           "        function = resolve(fn)",
           ("tests/test_processes.py",), "a training process keeps torch's default threads"),
    Mutant("tokenized-lines-narrowed", "docgraph/tagging/chunks.py",
           r'_LINE_RE = re.compile(r"[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")',
           r'_LINE_RE = re.compile(r"[^\n\r]+")',
           ("tests/test_prediction_io.py",), "--tokenized splits lines on \\n and \\r only"),
    Mutant("run-lock-covers-any-directory", "docgraph/persistence/run_lock.py",
           "if held is not None and held.covers(directory):", "if held is not None:",
           ("tests/test_run_lock.py",), "a lock stands in for another directory's"),
    Mutant("run-lock-no-retry", "docgraph/persistence/run_lock.py",
           "        if _names(path, fd):\n            break", "        if True:\n            break",
           ("tests/test_run_lock.py",), "the lock is taken on a replaced (stale) file"),
    Mutant("death-signal-after-import", "docgraph/runtime/lifetime.py",
           "    die_with_parent(parent, signum)\n    return resolve(target)(*args)",
           "    function = resolve(target)\n    die_with_parent(parent, signum)\n"
           "    return function(*args)",
           ("tests/test_lifetime.py",), "a child imports its target before it can die with "
           "its parent"),
    Mutant("open-vocab-boundary-id", "docgraph/data/open_vocab.py",
           "if i < closed else self._open_word(i - closed)",
           "if i <= closed else self._open_word(i - closed)",
           ("tests/test_open_vocab.py",), "the first open id is read as a closed one"),
    Mutant("manifest-unsealed", "docgraph/runtime/integrity.py",
           "    if obj[DIGEST_KEY] != EDITED and obj[DIGEST_KEY] != content_digest(rest):",
           "    if False:",
           ("tests/test_integrity.py", "tests/test_manifest.py"),
           "a sealed file's digest is not checked"),
    Mutant("checkpoint-crc-unchecked", "docgraph/persistence/archive.py",
           "    return record_damage(path)", "    return None",
           ("tests/test_archive.py",), "a flipped byte inside a tensor loads silently"),
)


def run_mutant(mutant: Mutant, scratch: Path, python: str) -> tuple[str, float, str]:
    """Apply ``mutant`` in ``scratch``, run its tests, restore.

    Returns ``(outcome, seconds, detail)``. The outcome is ``"killed"`` only when a test fails
    (pytest's exit status 1); a mutant that breaks collection (a syntax or import error, exit
    status 2 to 5) is ``"error"``, not a kill, since no test judged it. ``detail`` names the
    first failing test, or the last line of pytest's output for an error.
    """
    target = scratch / mutant.path
    original = target.read_text()
    if original.count(mutant.old) != 1:
        return "not applied", 0.0, f"{mutant.old!r} occurs {original.count(mutant.old)} times"
    target.write_text(original.replace(mutant.old, mutant.new))
    start = time.perf_counter()
    try:
        env = {**os.environ, "PYTHONPATH": str(scratch), "OMP_NUM_THREADS": "1",
               "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("DOCGRAPH_DATA_DIR", None)
        res = subprocess.run([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                              *mutant.tests], cwd=scratch, env=env, capture_output=True,
                             text=True, check=False)
    finally:
        target.write_text(original)
    seconds = time.perf_counter() - start
    lines = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    if res.returncode == 0:
        return "survived", seconds, ""
    if res.returncode == 1:
        failed = [line.split(" - ")[0].removeprefix("FAILED ") for line in lines
                  if line.startswith("FAILED ")]
        return "killed", seconds, failed[0] if failed else "a test failed"
    return "error", seconds, f"pytest exit {res.returncode}: {lines[-1] if lines else ''}"


def target_problems(mutants: tuple[Mutant, ...] = MUTANTS, root: Path = ROOT) -> list[str]:
    """Why mutants would not apply to the checkout at ``root``: a file that moved, an ``old``
    text that is no longer there exactly once, a guarding test file that is gone."""
    problems = []
    for mutant in mutants:
        target = root / mutant.path
        if not target.is_file():
            problems.append(f"{mutant.name}: {mutant.path} does not exist")
            continue
        count = target.read_text().count(mutant.old)
        if count != 1:
            problems.append(f"{mutant.name}: {mutant.old!r} occurs {count} times in "
                            f"{mutant.path} (expected once)")
        problems += [f"{mutant.name}: test file {test} does not exist"
                     for test in mutant.tests if not (root / test).is_file()]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="mutant names to run")
    parser.add_argument("--report", default=None, help="write a markdown report here")
    parser.add_argument("--check-targets", action="store_true",
                        help="only check that every mutant applies to this checkout")
    args = parser.parse_args(argv)
    if args.check_targets:
        problems = target_problems()
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"{len(MUTANTS) - len({p.split(':')[0] for p in problems})}/{len(MUTANTS)} "
              "mutants apply")
        return 1 if problems else 0
    chosen = [m for m in MUTANTS if args.only is None or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        print(f"mutation_check.py: error: unknown mutants {sorted(unknown)}", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "checkout"
        shutil.copytree(ROOT, scratch, ignore=shutil.ignore_patterns(
            ".git", ".venv", "runs", "logs", "__pycache__", ".pytest_cache", "benchmarks"))
        shutil.copytree(ROOT / "benchmarks", scratch / "benchmarks",
                        ignore=shutil.ignore_patterns("results"))
        for mutant in chosen:
            outcome, seconds, detail = run_mutant(mutant, scratch, sys.executable)
            results.append((mutant, outcome, seconds))
            print(f"{outcome:>11}  {seconds:6.1f}s  {mutant.name}: {mutant.what}", flush=True)
            if detail:
                print(f"{'':>21}{detail}", flush=True)
    survivors = [m.name for m, outcome, _ in results if outcome != "killed"]
    print(f"{len(results) - len(survivors)}/{len(results)} killed"
          + (f"; not killed: {', '.join(survivors)}" if survivors else ""))
    if args.report:
        write_report(Path(args.report), results)
    return 1 if survivors else 0


def write_report(path: Path, results: list[tuple[Mutant, str, float]]) -> None:
    """The markdown table of ``docs/mutation.md`` (between its generated markers). Rows of
    mutants not run this time (``--only``) are kept from the previous report."""
    text = path.read_text() if path.exists() else ""
    previous: dict[str, str] = {}
    if "<!-- mutation:start -->" in text:
        block = text.split("<!-- mutation:start -->", 1)[1].split("<!-- mutation:end -->", 1)[0]
        for line in block.splitlines():
            if line.startswith("| `"):
                previous[line.split("`")[1]] = line
    today = _dt.date.today().isoformat()
    for mutant, outcome, seconds in results:
        previous[mutant.name] = (
            f"| `{mutant.name}` | `{mutant.path}` | {mutant.what} | "
            f"{', '.join(f'`{t}`' for t in mutant.tests)} | {outcome} ({seconds:.0f} s, {today}) |")
    rows = [previous[m.name] for m in MUTANTS if m.name in previous]
    killed = sum(" killed (" in row for row in rows)
    block = "\n".join([
        "<!-- mutation:start -->",
        f"**{killed}/{len(rows)} killed** (`python scripts/mutation_check.py --report "
        "docs/mutation.md`).", "",
        "| mutant | module | the bug | guarded by | outcome |", "|---|---|---|---|---|", *rows,
        "<!-- mutation:end -->"])
    if "<!-- mutation:start -->" in text:
        head, rest = text.split("<!-- mutation:start -->", 1)
        tail = rest.split("<!-- mutation:end -->", 1)[1]
        text = head + block + tail
    else:
        text = text + ("\n" if text else "") + block + "\n"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
