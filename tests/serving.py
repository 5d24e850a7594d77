"""A real ``docgraph serve`` in a subprocess on 127.0.0.1, for the service's tests and its
benchmark: started on a free port, waited for until ready, always stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``python -m docgraph serve --model MODEL --port PORT FLAGS...``, its output in
    ``log``; a context manager that stops it (and its workers) on the way out.

    Args:
        log: The file the server's output goes to.
        flags: More flags of ``docgraph serve``.
        model: ``--model``.
        ready_timeout: Seconds to wait for ``GET /ready``.
    """

    def __init__(self, log: Path, *flags: str, model: str = "conll03",
                 ready_timeout: float = 240.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(log)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "docgraph", "serve", "--model", model,
                 "--port", str(self.port), *flags],
                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                start_new_session=True)
        try:
            self.wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, timeout: float) -> None:
        """Wait until ``GET /ready`` answers 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server ended ({self.process.returncode}):\n"
                                   f"{self.output()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/ready", timeout=5).status_code == 200:
                    return
            time.sleep(0.5)
        raise TimeoutError(f"not ready after {timeout} s:\n{self.output()}")

    def output(self) -> str:
        """What the server has written so far."""
        return self.log.read_text(errors="replace")

    def pids(self) -> list[int]:
        """The server's model workers (its children but multiprocessing's resource
        tracker)."""
        found = []
        for children in Path(f"/proc/{self.process.pid}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                found += [int(p) for p in children.read_text().split()]
        workers = []
        for pid in found:
            with contextlib.suppress(OSError):
                if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    workers.append(pid)
        return sorted(workers)

    @contextlib.contextmanager
    def frozen(self):
        """The model workers stopped (SIGSTOP) inside the block: whatever reaches them waits
        there, deterministically; they go on (SIGCONT) on the way out."""
        workers = self.pids()
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield workers
        finally:
            for pid in workers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60.0) -> int | None:
        """Send ``signum``, wait for the exit status; kill the whole session after
        ``timeout`` seconds (and in any case, so that no worker is left)."""
        status = None
        if self.process.poll() is None:
            self.process.send_signal(signum)
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self.process.wait(timeout)
        else:
            status = self.process.returncode
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        return status

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
