"""Capturing one CUDA graph the way every graph of the engine is captured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def capture(
    run: Callable[[], tuple[torch.Tensor, ...]], pool: Any
) -> tuple[torch.cuda.CUDAGraph, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Capture `run` (which reads and writes fixed tensors) into a graph in memory `pool`, after a
    warm-up pass on a side stream (lazy initialisation, cuDNN's tuning), and replay it once. Returns
    the graph, the outputs it writes, and the warm-up's outputs: the eager answer to the same inputs,
    for the caller to check the replay against. Call it outside inference mode, under `no_grad`."""
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


def graph_key(length: int) -> tuple[int, bool, bool]:
    """A graph's length with the settings that change which kernels it holds (autocast, cuDNN): each
    setting has its own graphs."""
    return length, torch.is_autocast_enabled("cuda"), bool(torch.backends.cudnn.enabled)
