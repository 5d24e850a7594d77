"""The dynamic batcher of the tagging service, with a stand-in for the model workers that
records every pass (no model, no server)."""

from __future__ import annotations

import asyncio

import pytest

from docgraph.serve.batcher import Batcher, Job, PassDocument, QueueFullError, estimated_tokens


class RecordingWorkers:
    """``workers`` stand-in workers: each pass is recorded and answered after ``seconds``
    with ``([{"doc": id}], tokens)`` per document."""

    def __init__(self, workers: int = 1, seconds: float = 0.0) -> None:
        self.free: asyncio.Queue[int] = asyncio.Queue()
        for k in range(workers):
            self.free.put_nowait(k)
        self.seconds = seconds
        self.passes: list[list[str]] = []
        self.busy = 0
        self.most_busy = 0

    async def acquire(self) -> int:
        return await self.free.get()

    async def run(self, worker: int, documents):
        self.passes.append([d.doc_id for d in documents])
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.busy -= 1
            self.free.put_nowait(worker)
        return [([{"doc": d.doc_id}], len(d.content.split())) for d in documents]


def jobs(texts: list[str], prefix: str = "d") -> list[Job]:
    loop = asyncio.get_running_loop()
    return [Job(PassDocument(f"{prefix}{k}", text), estimated_tokens(text), loop.create_future())
            for k, text in enumerate(texts)]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_estimated_tokens():
    assert estimated_tokens("EU rejects German call .") == 5
    assert estimated_tokens("") == 1
    assert estimated_tokens([["a", "b"], ["c"]]) == 3


def test_concurrent_documents_share_a_pass_and_get_their_own_results():
    async def main():
        workers = RecordingWorkers()
        batcher = Batcher(workers, max_tokens=100, max_wait=0.05, max_queue=100)
        batcher.start()
        first, second = jobs(["a b c"], "x"), jobs(["d e", "f"], "y")
        batcher.submit(first)
        await asyncio.sleep(0.01)  # within the wait: joins the same pass
        batcher.submit(second)
        results = await asyncio.gather(*(j.future for j in first + second))
        await batcher.close(RuntimeError)
        return workers.passes, results

    passes, results = run(main())
    assert passes == [["x0", "y0", "y1"]]
    assert results == [([{"doc": "x0"}], 3), ([{"doc": "y0"}], 2), ([{"doc": "y1"}], 1)]


def test_a_pass_holds_at_most_max_tokens_and_a_longer_document_goes_alone():
    async def main():
        workers = RecordingWorkers()
        batcher = Batcher(workers, max_tokens=5, max_wait=0.05, max_queue=100)
        submitted = jobs(["a b", "c d", "e f", "g h i j k l m", "n"])
        batcher.submit(submitted)
        batcher.start()
        await asyncio.gather(*(j.future for j in submitted))
        await batcher.close(RuntimeError)
        return workers.passes

    # 2 + 2 fit, + 2 would pass 5; the 7-token document alone; then the rest
    assert run(main()) == [["d0", "d1"], ["d2"], ["d3"], ["d4"]]


def test_the_first_document_waits_at_most_max_wait():
    async def main():
        workers = RecordingWorkers()
        batcher = Batcher(workers, max_tokens=1000, max_wait=0.05, max_queue=100)
        batcher.start()
        loop = asyncio.get_running_loop()
        first = jobs(["a"], "x")
        start = loop.time()
        batcher.submit(first)
        await first[0].future
        waited = loop.time() - start
        late = jobs(["b"], "y")
        batcher.submit(late)
        await late[0].future
        await batcher.close(RuntimeError)
        return workers.passes, waited

    passes, waited = run(main())
    assert passes == [["x0"], ["y0"]]
    assert 0.04 <= waited < 1.0


def test_documents_queue_while_the_workers_are_busy_and_the_queue_is_bounded():
    async def main():
        workers = RecordingWorkers(workers=2, seconds=0.2)
        batcher = Batcher(workers, max_tokens=1, max_wait=0.0, max_queue=3)
        batcher.start()
        running = jobs(["a", "b"], "r")
        batcher.submit(running)
        await asyncio.sleep(0.05)  # both workers busy, the queue empty
        waiting = jobs(["c", "d", "e"], "w")
        batcher.submit(waiting)
        depth = batcher.depth
        with pytest.raises(QueueFullError):
            batcher.submit(jobs(["f"], "z"))
        assert batcher.depth == depth  # a refused request leaves nothing behind
        await asyncio.gather(*(j.future for j in running + waiting))
        await batcher.close(RuntimeError)
        return workers.most_busy, depth

    most_busy, depth = run(main())
    assert most_busy == 2
    assert depth == 3


def test_dropped_documents_are_never_tagged():
    async def main():
        workers = RecordingWorkers(seconds=0.2)
        batcher = Batcher(workers, max_tokens=1, max_wait=0.0, max_queue=10)
        batcher.start()
        busy = jobs(["a"], "b")
        batcher.submit(busy)
        await asyncio.sleep(0.05)
        gone, kept = jobs(["x", "y"], "gone"), jobs(["z"], "kept")
        batcher.submit(gone)
        batcher.submit(kept)
        assert batcher.drop(gone) == 2
        assert all(j.future.cancelled() for j in gone)
        await asyncio.gather(busy[0].future, kept[0].future)
        await batcher.close(RuntimeError)
        return workers.passes

    assert run(main()) == [["b0"], ["kept0"]]


def test_a_failed_pass_fails_its_documents_only():
    class Failing(RecordingWorkers):
        async def run(self, worker, documents):
            if any(d.doc_id.startswith("bad") for d in documents):
                self.free.put_nowait(worker)
                raise RuntimeError("worker ended")
            return await super().run(worker, documents)

    async def main():
        workers = Failing()
        batcher = Batcher(workers, max_tokens=1, max_wait=0.0, max_queue=10)
        batcher.start()
        bad, good = jobs(["a"], "bad"), jobs(["b"], "good")
        batcher.submit(bad + good)
        outcome = await asyncio.gather(bad[0].future, good[0].future,
                                       return_exceptions=True)
        await batcher.close(RuntimeError)
        return outcome

    failed, answered = run(main())
    assert isinstance(failed, RuntimeError)
    assert answered == ([{"doc": "good0"}], 1)


def test_close_fails_what_still_waits():
    async def main():
        workers = RecordingWorkers(seconds=0.5)
        batcher = Batcher(workers, max_tokens=1, max_wait=0.0, max_queue=10)
        batcher.start()
        busy, waiting = jobs(["a"], "b"), jobs(["c"], "w")
        batcher.submit(busy + waiting)
        await asyncio.sleep(0.05)
        await batcher.close(lambda: RuntimeError("stopping"))
        return waiting[0].future

    future = run(main())
    assert isinstance(future.exception(), RuntimeError)


async def _beside_a_busy_worker(balance_wait: float, busy_for: float, late_after: float):
    """Worker 0 tags a pass of 10 documents for ``busy_for`` seconds; then one document
    arrives, and 4 more ``late_after`` seconds later. The passes and when the lone document's
    pass started, after its arrival."""
    workers = RecordingWorkers(workers=2, seconds=busy_for)
    started: list[float] = []
    loop = asyncio.get_running_loop()
    batcher = Batcher(workers, max_tokens=1000, max_wait=0.001, max_queue=100,
                      on_pass=lambda documents, tokens: started.append(loop.time()),
                      balance_wait=balance_wait)
    batcher.start()
    big = jobs(["a b c"] * 10, "big")
    batcher.submit(big)
    await asyncio.sleep(0.01)  # the big pass is under way
    workers.seconds = 0.0
    lone = jobs(["x"], "lone")
    arrived = loop.time()
    batcher.submit(lone)
    await asyncio.sleep(late_after)
    late = jobs(["y"] * 4, "late")
    batcher.submit(late)
    await asyncio.gather(*(j.future for j in big + lone + late))
    await batcher.close(RuntimeError)
    return workers.passes, started[1] - arrived


def test_a_pass_smaller_than_the_one_beside_waits_for_more_documents():
    passes, _ = run(_beside_a_busy_worker(balance_wait=0.3, busy_for=1.0, late_after=0.05))
    assert passes[1] == ["lone0", "late0", "late1", "late2", "late3"]
    # without the balance wait the lone document goes alone
    passes, waited = run(_beside_a_busy_worker(balance_wait=0.0, busy_for=1.0, late_after=0.05))
    assert passes[1] == ["lone0"] and waited < 0.05


def test_the_balance_wait_is_bounded_and_ends_with_the_pass_beside():
    # nothing more comes in time: the lone document goes after the balance wait
    passes, waited = run(_beside_a_busy_worker(balance_wait=0.1, busy_for=1.0, late_after=0.5))
    assert passes[1] == ["lone0"] and 0.09 <= waited < 0.4
    # the pass beside ends first: no reason to wait longer
    passes, waited = run(_beside_a_busy_worker(balance_wait=5.0, busy_for=0.1, late_after=0.5))
    assert passes[1] == ["lone0"] and waited < 1.0


def test_a_pass_as_large_as_the_one_beside_does_not_wait_for_balance():
    async def main():
        workers = RecordingWorkers(workers=2, seconds=0.5)
        loop = asyncio.get_running_loop()
        started: list[float] = []
        batcher = Batcher(workers, max_tokens=1000, max_wait=0.001, max_queue=100,
                          on_pass=lambda documents, tokens: started.append(loop.time()),
                          balance_wait=5.0)
        batcher.start()
        small = jobs(["a"], "small")
        batcher.submit(small)
        await asyncio.sleep(0.01)
        larger = jobs(["b c", "d e"], "larger")
        arrived = loop.time()
        batcher.submit(larger)
        await asyncio.gather(*(j.future for j in small + larger))
        await batcher.close(RuntimeError)
        return workers.passes, started[1] - arrived

    passes, waited = run(main())
    assert passes == [["small0"], ["larger0", "larger1"]] and waited < 0.1
