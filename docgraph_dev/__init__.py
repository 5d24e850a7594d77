"""Measurement and report code of the repository: not installed with the library, which never
imports it.

* :mod:`docgraph_dev.batches`: the batches a measurement times (the training sampler's
  first shuffled batches) and their shares over data-parallel processes;
* :mod:`docgraph_dev.benchmark`: the command line of ``scripts/benchmark.py``, over the
  measurements below;
* :mod:`docgraph_dev.speed`: speed of GCDoc against the BiLSTM-CRF baseline on the same
  batches, every measurement in one record;
* :mod:`docgraph_dev.throughput`: graph-construction, training and inference throughput and
  the models' cost ratios;
* :mod:`docgraph_dev.breakdown`: each component's share of a GCDoc training step;
* :mod:`docgraph_dev.flops`: analytic FLOPs of the models and the machine's matmul GFLOP/s;
* :mod:`docgraph_dev.step_speed`: training-step and tagging speed on a device
  (``scripts/benchmark.py --step-speed``);
* :mod:`docgraph_dev.timing`: wall-clock and CPU timing of closures;
* :mod:`docgraph_dev.core_scaling`: throughput per core setting (one or two threads, two
  DDP processes);
* :mod:`docgraph_dev.operator_counts`: operators of one training and one tagging step
  (``scripts/benchmark.py --ops``);
* :mod:`docgraph_dev.report`: the results tables, the README's generated blocks and Fig. 4
  from run directories (``scripts/report.py``);
* :mod:`docgraph_dev.edge_weights`, :mod:`docgraph_dev.inference_threshold`,
  :mod:`docgraph_dev.lm_pack`, :mod:`docgraph_dev.lm_speed`,
  :mod:`docgraph_dev.mc_samples`: the studies of ``benchmarks/<name>.py`` (thin scripts over
  these modules, which the tests import);

The scripts, the studies under ``benchmarks/`` and the tests use these modules from the
repository root (the scripts put it on ``sys.path``; pytest's ``pythonpath``); nothing under
``docgraph/`` imports them.
"""

# before a measurement module imports torch_geometric (and with it torch._dynamo, which makes its
# compile cache at import): docgraph points that cache out of $TMPDIR
import docgraph  # noqa: F401
