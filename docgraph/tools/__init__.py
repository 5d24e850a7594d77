"""Tooling that measures and reports the library; the library never imports it.

* :mod:`docgraph.tools.batches`: the batches a measurement times (the training sampler's
  first shuffled batches) and their shares over data-parallel processes;
* :mod:`docgraph.tools.benchmark`: speed of GCDoc against the BiLSTM-CRF baseline, FLOPs,
  components, step speed on a device (``scripts/benchmark.py``);
* :mod:`docgraph.tools.core_scaling`: throughput per core setting (one or two threads, two
  DDP processes);
* :mod:`docgraph.tools.operator_counts`: operators of one training and one tagging step
  (``scripts/benchmark.py --ops``);
* :mod:`docgraph.tools.report`: the results tables, the README's generated blocks and Fig. 4
  from run directories (``scripts/report.py``);
* :mod:`docgraph.tools.edge_weights`, :mod:`docgraph.tools.inference_threshold`,
  :mod:`docgraph.tools.lm_pack`, :mod:`docgraph.tools.lm_speed`,
  :mod:`docgraph.tools.mc_samples`: the studies of ``benchmarks/<name>.py`` (thin scripts over
  these modules, which the tests import);

The scripts, the console entry point (:mod:`docgraph.cli.console`, by name), the studies under
``benchmarks/`` and the tests use these modules; nothing else under ``docgraph/`` imports
them.
"""
