"""Tests of :mod:`docgraph.runtime.machine`: the device a run asks for, the CPU model and the
memory there is."""

from __future__ import annotations

import resource
import sys

import pytest
import torch

from docgraph.runtime import machine


def test_cpu_model_reads_the_model_name(tmp_path, monkeypatch):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t: Imaginary CPU @ 2.0GHz \n"
                    "model name\t: Second\n")
    monkeypatch.setattr(machine, "Path", lambda _: info)
    assert machine.cpu_model() == "Imaginary CPU @ 2.0GHz"


def test_cpu_model_without_cpuinfo(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "Path", lambda _: tmp_path / "missing")
    monkeypatch.setattr(machine.platform, "processor", lambda: "arm64")
    assert machine.cpu_model() == "arm64"
    monkeypatch.setattr(machine.platform, "processor", lambda: "")
    assert machine.cpu_model() == "unknown"
    (tmp_path / "missing").write_text("processor\t: 0\n")  # no model name line
    assert machine.cpu_model() == "unknown"


def test_cpu_model_of_this_machine_is_a_name():
    assert machine.cpu_model().strip()


def test_peak_rss_is_ru_maxrss_in_mib():
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    expected = rss / 1024**2 if sys.platform == "darwin" else rss / 1024
    assert machine.peak_rss_mib() == pytest.approx(expected, rel=0.01)
    assert machine.peak_rss_mib() > 10  # this process has loaded torch


def test_resolve_device(monkeypatch):
    assert machine.resolve_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert machine.resolve_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match="^--device cuda was requested but CUDA is not "
                                         "available$"):
        machine.resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert machine.resolve_device("auto") == torch.device("cuda")
    assert machine.resolve_device("cuda") == torch.device("cuda")


@pytest.mark.parametrize("name", ["gpu", "CPU", "cuda:0", ""])
def test_resolve_device_refuses_other_names(name):
    with pytest.raises(ValueError) as info:
        machine.resolve_device(name)
    assert str(info.value) == f"device must be 'auto', 'cpu' or 'cuda', not {name!r}"


def test_available_memory_of_the_host_and_of_a_gpu(monkeypatch):
    monkeypatch.setattr(machine, "host_available_memory", lambda: 12345)
    assert machine.available_memory() == 12345
    assert machine.available_memory("cpu") == 12345
    seen = []

    def mem_get_info(device):
        seen.append(device)
        return (5 * 2**30, 80 * 2**30)  # free, total

    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    assert machine.available_memory("cuda:1") == 5 * 2**30
    assert seen == [torch.device("cuda:1")]
