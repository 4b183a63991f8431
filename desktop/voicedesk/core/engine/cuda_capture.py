"""Capturing one CUDA graph the way every graph of the engine is captured.

Graphs are captured with cuDNN's autotuner off, whatever synthesis uses otherwise: on the H200 the
tuned graphs replayed 2.5 % faster (18.8 against 19.3 ms a sentence) but took 10× longer to capture
(37 s against 3.7 s for the 13 buckets up to 13 s; docs/benchmarks/gpu-profile.md, run 5): time in
which a first Speak waits, and the autotuner's trials borrow huge workspaces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch


def capture(
    run: Callable[[], tuple[torch.Tensor, ...]], pool: Any, autotune: bool = False
) -> tuple[torch.cuda.CUDAGraph, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Capture `run` (which reads and writes fixed tensors) into a graph in memory `pool`, after a
    warm-up pass on a side stream (lazy initialisation; cuDNN's tuning only if `autotune`), and replay
    it once. Returns the graph, the outputs it writes, and the warm-up's outputs: the eager answer to
    the same inputs, for the caller to check the replay against. Call it outside inference mode, under
    `no_grad`."""
    with _autotuner(autotune):
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            expected = tuple(out.clone() for out in run())
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            outputs = run()
    graph.replay()
    return graph, outputs, expected


@contextmanager
def _autotuner(on: bool) -> Iterator[None]:
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = on
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = previous


def graph_key(length: int) -> tuple[int, bool, bool]:
    """A graph's length with the settings that change which kernels it holds (autocast, cuDNN): each
    setting has its own graphs."""
    return length, torch.is_autocast_enabled("cuda"), bool(torch.backends.cudnn.enabled)
