"""Tooling that measures and reports the library; the library never imports it.

* :mod:`docgraph.tools.batches`: the batches a measurement times (the training sampler's
  first shuffled batches) and their shares over data-parallel processes;
* :mod:`docgraph.tools.benchmark`: the command line of ``scripts/benchmark.py``, over the
  measurements below;
* :mod:`docgraph.tools.speed`: speed of GCDoc against the BiLSTM-CRF baseline on the same
  batches, every measurement in one record;
* :mod:`docgraph.tools.throughput`: graph-construction, training and inference throughput and
  the models' cost ratios;
* :mod:`docgraph.tools.breakdown`: each component's share of a GCDoc training step;
* :mod:`docgraph.tools.flops`: analytic FLOPs of the models and the machine's matmul GFLOP/s;
* :mod:`docgraph.tools.step_speed`: training-step and tagging speed on a device
  (``scripts/benchmark.py --step-speed``);
* :mod:`docgraph.tools.timing`: wall-clock and CPU timing of closures;
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
