"""How large a model configuration is, told without torch: its parameter count in closed form,
the memory training it takes and the memory the host has, so that ``train.py`` refuses a model
that cannot fit before torch loads (:func:`memory_problem`).

:func:`estimate_parameters` counts the parameters of the :class:`~docgraph.model.GCDoc` that
:func:`~docgraph.persistence.model_dir.build_model` builds, from the sizes of its LSTMs and
linear layers; ``tests/test_input_checks.py`` holds it to
:func:`~docgraph.persistence.model_dir.parameter_count`, which builds the model on PyTorch's
``meta`` device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from docgraph.config.errors import DocgraphError
from docgraph.config.experiment import section_settings
from docgraph.config.fields import SIZE, fields_marked
from docgraph.config.model import GCDocConfig

#: The size fields of :class:`~docgraph.config.GCDocConfig` (marked
#: :data:`~docgraph.config.fields.SIZE`) and how a user sets them: their flag, else their TOML
#: key.
SIZE_FIELDS: dict[str, str] = {
    name: section_settings("model")[name].flag or f"[model] {name}"
    for name in fields_marked(GCDocConfig, SIZE)}

#: Files that say how much memory a process may still use, in order: the cgroup's limit and
#: usage (v2, then v1) bound what ``/proc/meminfo`` says in a container.
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                  "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


class ModelSizeError(DocgraphError, ValueError):
    """A model too large for the memory of the machine (the message names the sizes)."""


def _bilstm(inputs: int, hidden: int) -> int:
    """Parameters of a one-layer bidirectional LSTM (two biases per gate, as PyTorch's)."""
    return 2 * 4 * hidden * (inputs + hidden + 2)


def _linear(inputs: int, outputs: int, bias: bool = True) -> int:
    return outputs * (inputs + int(bias))


def estimate_parameters(config: GCDocConfig, words: int = 2, chars: int = 2,
                        labels: int = 5) -> int:
    """The number of parameters of the model of ``config`` with ``words`` words, ``chars``
    characters and ``labels`` labels (default: the smallest vocabularies, which count all but
    the embedding tables), in closed form: no tensor is made, however large the sizes."""
    token = config.word_dim + 2 * config.char_hidden
    count = words * config.word_dim + chars * config.char_dim
    count += _bilstm(config.char_dim, config.char_hidden)
    context_in = token + config.lm_dim
    if config.uses_cross_sentence:
        s = config.sent_dim
        encoders = 1 + int(config.use_previous) + int(config.use_next)
        # the window encoders; five s x s attention and gate matrices, one bias, w
        count += encoders * _bilstm(token, s // 2) + 5 * s * s + 2 * s
        context_in += s
    d = 2 * config.hidden
    count += _bilstm(context_in, config.hidden)
    if config.graph:
        if config.pruning:
            count += (_bilstm(token, config.uncertainty_hidden)
                      + _linear(2 * config.uncertainty_hidden, labels))
        if config.edge_weights:
            count += _linear(2 * d, 1)
        count += _linear(d, d) + 6 * d * d  # the gated graph layer
    return count + _linear(d, labels) + labels * (labels + 2)  # emission and CRF


def training_bytes(parameters: int, optimizer: str = "sgd", momentum: float = 0.0,
                   processes: int = 1) -> int:
    """A lower bound on the memory training takes for float32 ``parameters`` in one process:
    weights and gradients, Adam's two moments or SGD's momentum, and DDP's gradient buckets
    when ``processes > 1`` (activations not counted)."""
    states = 2 if optimizer == "adam" else (1 if momentum else 0)
    copies = 2 + states + (1 if processes > 1 else 0)
    return 4 * parameters * copies


def host_available_memory() -> int | None:
    """Bytes of host memory a new allocation can still get (``MemAvailable``, bounded by the
    cgroup's limit in a container); ``None`` when it cannot be told."""
    found: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in _CGROUP_FILES:
        try:
            limit = Path(limit_file).read_text().strip()
            usage = int(Path(usage_file).read_text().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 1 << 60:  # "max" or a huge number: no limit
            found.append(max(0, int(limit) - usage))
        break
    return min(found) if found else None


def format_bytes(n: float) -> str:
    """``"3.2 GB"`` (powers of 1000)."""
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} PB"


def sizes_text(config: GCDocConfig) -> str:
    """``"--sent-dim 300, --hidden 200, ..."``: the model's sizes as a user sets them, the
    largest first."""
    shown = [(getattr(config, name), flag) for name, flag in SIZE_FIELDS.items()
             if not flag.startswith("[") or getattr(config, name)]
    return ", ".join(f"{flag} {value}"
                     for value, flag in sorted(shown, key=lambda item: -item[0]))


def largest_size(config: GCDocConfig, count: int,
                 count_parameters: Callable[[GCDocConfig], int] = estimate_parameters) -> str:
    """``"--hidden 1000000"``: the size field whose default value shrinks the model most."""
    defaults = GCDocConfig()
    best, best_count = None, count
    for name, flag in SIZE_FIELDS.items():
        value, default = getattr(config, name), getattr(defaults, name)
        if value <= default:
            continue
        smaller = count_parameters(replace(config, **{name: default}))
        if smaller < best_count:
            best, best_count = f"{flag} {value}", smaller
    return best or "the model's sizes"


def memory_problem(config: GCDocConfig, available: int, optimizer: str = "sgd",
                   momentum: float = 0.0, processes: int = 1, sharing: int = 1,
                   where: str = "", weights_only: bool = False,
                   count_parameters: Callable[[GCDocConfig], int] = estimate_parameters
                   ) -> str | None:
    """Why training the model of ``config`` cannot fit in ``available`` bytes, in one line
    naming the size that makes it large (``None`` when it fits).

    Args:
        config: The model's configuration.
        available: Bytes of memory available.
        optimizer: ``"sgd"`` or ``"adam"`` (its state is one or two more copies).
        momentum: SGD momentum (a non-zero one keeps a copy).
        processes: Processes of the run.
        sharing: How many of them share ``available`` (the processes of a CPU run, else 1).
        where: Where the memory is, for the message (``" on cuda"``).
        weights_only: Count the float32 weights alone (the host memory the model is built
            in before it moves to its device).
        count_parameters: How to count the parameters of a configuration.
    """
    count = count_parameters(config)
    need = 4 * count if weights_only else (
        training_bytes(count, optimizer, momentum, processes) * sharing)
    if need <= available:
        return None
    what = ("building it" if weights_only
            else f"training it{f' in {processes} processes' if sharing > 1 else ''}")
    return (f"{largest_size(config, count, count_parameters)}: the model would have {count:,} "
            f"parameters ({format_bytes(4 * count)} as float32) and {what} needs at least "
            f"{format_bytes(need)}, more than the {format_bytes(available)} of memory "
            f"available{where}; lower it (model sizes: {sizes_text(config)})")
