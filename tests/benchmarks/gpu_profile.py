"""Where the GPU's time goes: wall time against the time the GPU is actually busy.

Measures on a CUDA machine (docs/benchmarks/gpu-profile.md reports a run):
- synthesis of single sentences: wall time, GPU busy time (union of kernel intervals from the
  profiler), kernels launched and host syncs (`cudaStreamSynchronize`/`cudaMemcpy` calls);
- a fit at the product settings: time to prepare (rank the stock voices), per step, to finish;
  GPU busy share and kernels per step;
- cuDNN's autotuner for synthesis: sentences of lengths never seen before, autotuner off, on (first
  time each length is seen: tuning included) and on again (tuned);
- synthesis as the engine runs it on CUDA (its frame-rate half replayed as CUDA graphs, one per
  length bucket) against eager, sentence by sentence, with the audio's difference as SNR;
- the text half (ALBERT, text encoder) as `transformers`/Kokoro run it against `text_features`, and
  the whole eager front of a sentence; the graphs captured with the autotuner off.

Usage (venv or PYTHONPATH with the packages; see tests/tools/gpu_sweep_run.sh):
  python tests/benchmarks/gpu_profile.py [--prompt PROMPT.wav] [--json OUT.json] [--only synthesis_graphs,...]
  python tests/benchmarks/gpu_profile.py --device cpu --repeats 1   # a dry run of the script itself
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

VOICE = "jf_alpha"
SENTENCES = (  # distinct lengths, none used by the bench, so the autotuner meets each for the first time
    "Turn left at the bakery.",
    "My brother fixed the old radio last winter.",
    "Could you send the report before lunch tomorrow?",
    "The museum opens at nine.",
    "Rain fell softly on the tin roof all night long.",
    "I think we should leave a little earlier than usual.",
    "Her garden was full of roses and tall sunflowers.",
    "Nobody expected the quiet student to win the debate.",
    "Please water the plants while I am away.",
    "A small boat drifted slowly toward the harbour lights.",
    "The recipe needs two eggs, some flour and a pinch of salt.",
    "We watched the sunrise from the top of the hill.",
)
PROFILED = "The train to the coast leaves at noon."


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def wall(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall seconds of `fn`, the GPU drained before and after each call."""
    times = []
    for _ in range(repeats):
        _sync()
        started = time.perf_counter()
        fn()
        _sync()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def gpu_activity(fn: Callable[[], Any]) -> dict[str, float]:
    """GPU busy time (union of kernel and copy intervals), kernel launches and host syncs of one call."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    _sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        _sync()
    intervals, kernels, syncs = [], 0, 0
    sources: dict[str, int] = {}  # the operator that asked for each copy or sync
    for event in prof.events():
        if event.device_type == DeviceType.CUDA:
            intervals.append((event.time_range.start, event.time_range.end))
            kernels += 1
        elif event.name in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaMemcpy"):
            syncs += 1
            parent = event.cpu_parent
            while parent is not None and parent.cpu_parent is not None and parent.name.startswith("aten::_"):
                parent = parent.cpu_parent
            name = f"{event.name} <- {parent.name if parent is not None else '?'}"
            sources[name] = sources.get(name, 0) + 1
    busy_us, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            busy_us += stop - max(start, end)
            end = stop
    top = dict(sorted(sources.items(), key=lambda kv: -kv[1])[:12])
    return {"gpu_busy_s": busy_us / 1e6, "gpu_ops": kernels, "host_syncs_or_copies": syncs, "copy_sources": top}


def profile_synthesis(engine: Any, style: Any, repeats: int) -> dict[str, Any]:
    from voicedesk.core.text import phonemize

    phonemes = "".join(chunk.phonemes for chunk in phonemize(PROFILED, "en"))

    def speak() -> Any:
        return engine.synthesize_phonemes(phonemes, style, seed=0)

    audio_s = len(speak()) / engine.sample_rate
    seconds = wall(speak, repeats)
    found = {"text": PROFILED, "audio_s": audio_s, "wall_s": seconds, **gpu_activity(speak)}
    found["gpu_busy_share"] = found["gpu_busy_s"] / seconds
    return found


def profile_autotuner(engine: Any, style: Any) -> dict[str, Any]:
    """Mean seconds per sentence: autotuner off; on, lengths new to it; on again, lengths tuned."""
    import torch

    from voicedesk.core.text import phonemize

    chunks = [("".join(c.phonemes for c in phonemize(text, "en"))) for text in SENTENCES]

    def run_all() -> float:
        return wall(lambda: [engine.synthesize_phonemes(p, style, seed=0) for p in chunks], 1) / len(chunks)

    previous, graphs = torch.backends.cudnn.benchmark, engine.graphs
    engine.graphs = None  # eager: a graph keeps the algorithms it was captured with
    torch.backends.cudnn.benchmark = False
    off = run_all()
    torch.backends.cudnn.benchmark = True
    first_seen = run_all()
    tuned = run_all()
    torch.backends.cudnn.benchmark, engine.graphs = previous, graphs
    return {"sentences": len(chunks), "off_s": off, "on_first_seen_s": first_seen, "on_tuned_s": tuned}


def profile_synthesis_graphs(engine: Any, style: Any, repeats: int) -> dict[str, Any]:
    """Synthesis with its frame-rate half replayed as CUDA graphs (the engine's default on CUDA) against
    eager, sentence by sentence: wall time, and how far the graphed audio is from the eager audio (SNR,
    same seed) beside how far a second eager run is (GPU arithmetic is not bit-exact between runs)."""
    import math

    import numpy as np

    from voicedesk.core.text import phonemize

    graphs = engine.graphs
    if graphs is None:
        return {"skipped": "the engine has no CUDA graphs here"}
    started = time.perf_counter()
    captured = engine.prepare_graphs()
    prepare_s = time.perf_counter() - started

    def snr_db(reference: Any, other: Any) -> float:
        noise = float(np.sum((reference - other) ** 2))
        return math.inf if noise == 0 else 10 * math.log10(float(np.sum(reference**2)) / noise)

    rows = []
    try:
        for text in (PROFILED, *SENTENCES):
            phonemes = "".join(chunk.phonemes for chunk in phonemize(text, "en"))

            def speak(p: str = phonemes) -> Any:
                return engine.synthesize_phonemes(p, style, seed=0)

            engine.graphs = graphs
            graphed = speak()
            graphed_s = wall(speak, repeats)
            engine.graphs = None
            eager = speak()
            eager_s = wall(speak, repeats)
            rows.append({"text": text, "audio_s": len(eager) / engine.sample_rate, "eager_s": eager_s,
                         "graphed_s": graphed_s, "snr_db": snr_db(eager, graphed),
                         "eager_again_snr_db": snr_db(eager, speak())})
    finally:
        engine.graphs = graphs
    audio = sum(row["audio_s"] for row in rows)
    eager_total, graphed_total = sum(r["eager_s"] for r in rows), sum(r["graphed_s"] for r in rows)
    return {"graphs": captured, "prepare_s": prepare_s, "failure": graphs.failure,
            "eager_rtf": eager_total / audio, "graphed_rtf": graphed_total / audio,
            "speedup": eager_total / graphed_total, "min_snr_db": min(r["snr_db"] for r in rows),
            "sentences": rows}


def profile_graph_capture(engine: Any, style: Any, repeats: int) -> dict[str, Any]:
    """The engine's graphs (captured with cuDNN's autotuner off) against graphs captured with it on:
    capture time and replay speed over the sentences; a graphed sentence split into its front (text
    graph, durations, the shared LSTM) and the frame half (pad, replay, copy out); and the sentences
    with the text half eager."""
    import torch

    from voicedesk.core.engine.frame_graphs import FrameGraphs
    from voicedesk.core.text import phonemize

    graphs = engine.graphs
    if graphs is None:
        return {"skipped": "the engine has no CUDA graphs here"}
    chunks = ["".join(c.phonemes for c in phonemize(text, "en")) for text in (PROFILED, *SENTENCES)]
    frame_s: list[float] = []
    inner = graphs.speak_frames

    def timed(*args: Any, **kwargs: Any) -> Any:
        _sync()
        started = time.perf_counter()
        out = inner(*args, **kwargs)
        _sync()
        frame_s.append(time.perf_counter() - started)
        return out

    def per_sentence() -> float:
        return wall(lambda: [engine.synthesize_phonemes(p, style, seed=0) for p in chunks], repeats) / len(chunks)

    engine.prepare_graphs()  # already captured by the section before, if it ran
    graphed_s = per_sentence()
    graphs.tokens.failure = "switched off to compare"  # the text half eager, the frame half graphed
    try:
        eager_text_s = per_sentence()
    finally:
        graphs.tokens.failure = None
    graphs.speak_frames = timed
    try:
        split_s = per_sentence()
    finally:
        del graphs.speak_frames  # the instance attribute; the method shows through again
    frames = sum(frame_s) / (len(chunks) * repeats)
    tuned = FrameGraphs(engine.model, capture=graphs.capture, autotune=True)
    previous = torch.backends.cudnn.benchmark
    try:
        engine.graphs, torch.backends.cudnn.benchmark = tuned, True
        started = time.perf_counter()
        captured = engine.prepare_graphs()
        capture_s = time.perf_counter() - started
        tuned_s = per_sentence()
    finally:
        engine.graphs, torch.backends.cudnn.benchmark = graphs, previous
    return {"sentences": len(chunks), "graphed_s": graphed_s, "text_half_eager_s": eager_text_s,
            "text_graphs": graphs.tokens.captured, "split_total_s": split_s, "frame_half_s": frames,
            "front_s": split_s - frames, "autotuned_graphs": captured, "autotuned_capture_s": capture_s,
            "autotuned_s": tuned_s, "autotuned_failure": tuned.failure}


def profile_text_half(engine: Any, repeats: int) -> dict[str, Any]:
    """The text half of each sentence (ALBERT and the text encoder) as the `transformers` and Kokoro
    modules run it against `text_features` (the engine's), per sentence; and the whole eager front
    (text half, prosody features, durations read back to the host)."""
    import torch

    from voicedesk.core.engine import text_features
    from voicedesk.core.engine.model import frame_tokens, whole_frames
    from voicedesk.core.text import phonemize

    model = engine.model
    ids = [engine.token_ids("".join(c.phonemes for c in phonemize(text, "en"))) for text in (PROFILED, *SENTENCES)]
    style = engine.style_tensor(engine.stock_voice(VOICE), 50)

    def modules() -> None:
        for x in ids:
            n = x.shape[1]
            model.bert(x, attention_mask=torch.ones_like(x))
            model.text_encoder(x, torch.full((1,), n), torch.zeros((1, n), dtype=torch.bool, device=x.device))

    def ours() -> None:
        for x in ids:
            text_features.albert_hidden(model.bert, x)
            text_features.encode_tokens(model.text_encoder, x)

    def front() -> None:
        for x in ids:
            d = model.prosody_features(model.encode_text(x), style[:, 128:])
            frame_tokens(whole_frames(model.predict_durations(d)))

    with torch.inference_mode():
        for fn in (modules, ours, front):
            fn()
        found = {name: wall(fn, repeats) / len(ids) for name, fn in
                 (("modules_s", modules), ("text_features_s", ours), ("front_s", front))}
    return {"sentences": len(ids), **found, "speedup": found["modules_s"] / found["text_features_s"]}


def profile_fit(engine: Any, prompt_path: Path | None, transcript: str) -> dict[str, Any]:
    """One clone at the product settings (with the prompt's words, as `voicedesk bench` clones), timed
    by stage, with the passes that need no gradient eager and through the synthesis graphs; then a
    short fit's GPU activity."""
    from voicedesk.core.bench.clone_stages import run_timed
    from voicedesk.core.bench.prompt import bench_prompt
    from voicedesk.core.clone.fit import FitSettings, fit_voice, run_to_end
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import Judge
    from voicedesk.core.clone.words import words_of

    prompt, _ = bench_prompt(prompt_path)
    ids = words_of(lambda: prompt, len(prompt) / 16000, transcript, "en").ids
    ge2e, judge = GE2E(engine.device), Judge()
    stock = {name: engine.stock_voice(name) for name in engine.stock_voices()}

    def clone(settings: FitSettings, graphs: Any = engine.graphs) -> Any:
        return fit_voice(engine.model, stock, prompt, settings=settings, ge2e=ge2e, judge=judge, prompt_ids=ids,
                         graphs=graphs)

    found: dict[str, Any] = {"graphs": engine.prepare_graphs()}  # none yet if the graph sections did not run
    for label, graphs in (("eager_checks", None), ("graphed", engine.graphs)):
        run_to_end(clone(FitSettings(steps=2), graphs))
        result, found[label] = run_timed(clone(FitSettings(), graphs))
    found["steps"] = result.steps
    short = FitSettings(steps=6, check_every=100)
    whole = wall(lambda: run_to_end(clone(short)), 1)
    activity = gpu_activity(lambda: run_to_end(clone(short)))
    found["six_step_fit"] = {"wall_s": whole, **activity, "gpu_busy_share": activity["gpu_busy_s"] / whole}
    return found


def profile_fit_pass(engine: Any, repeats: int) -> dict[str, Any]:
    """One fitting pass (style row → 16 kHz speech → a loss → gradient of the row) on the prompt's words:
    as the fit ran it before (the whole model, durations predicted anew), with the timing fixed and the
    words' features computed once (eager), and that pass replayed as CUDA graphs; outputs and gradients
    compared with the source's randomness off."""
    import torch

    from voicedesk.core.clone.fit import _fitting_mode
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.torch_audio import resample_24k_to_16k
    from voicedesk.core.clone.utterance import FixedUtterance
    from voicedesk.core.text import phonemize

    model = engine.model
    phonemes = "".join(chunk.phonemes for chunk in phonemize(PROFILED, "en"))
    ids = engine.token_ids(phonemes)
    start = engine.style_tensor(engine.stock_voice(VOICE), len(phonemes))

    def step(speak: Callable[[torch.Tensor], Any]) -> tuple[torch.Tensor, torch.Tensor]:
        row = start.clone().requires_grad_(True)
        wav, f0 = speak(row)
        loss = wav.square().mean() + 1e-4 * f0.mean()
        (grad,) = torch.autograd.grad(loss, row)
        return wav.detach().clone(), grad

    def whole(row: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = model.synthesize(ids, row)
        return resample_24k_to_16k(out.audio), out.f0

    found: dict[str, Any] = {"text": PROFILED}
    model.deterministic_source = True
    try:
        with _fitting_mode(model, GE2E(engine.device), source_grad=False):
            fixed = FixedUtterance(model, ids, start)
            started = time.perf_counter()
            graphed = FixedUtterance(model, ids, start, graph=engine.device == "cuda")
            _sync()
            found["graph_build_s"] = time.perf_counter() - started
            for name, speak in (("whole_model", whole), ("fixed_eager", fixed), ("fixed_graphed", graphed)):
                step(speak)
                found[f"{name}_s"] = wall(lambda speak=speak: step(speak), repeats)
            (a, _), (b, gb), (c, gc) = step(whole), step(fixed), step(graphed)
            found["max_abs_diff_fixed"] = float((a - b).abs().max())
            found["max_abs_diff_graphed"] = float((b - c).abs().max())
            found["grad_rel_diff_graphed"] = float((gb - gc).norm() / gb.norm())
            found["speedup_graphed"] = found["whole_model_s"] / found["fixed_graphed_s"]
    finally:
        model.deterministic_source = False
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompt", type=Path)
    parser.add_argument("--transcript", default="The old lighthouse keeper watched the boats come home.",
                        help="what the prompt says (the GPU machine has no transcriber)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json")
    parser.add_argument("--only", help="comma-separated sections to run (default: all)")
    args = parser.parse_args()

    import torch

    from voicedesk.core.bench import system
    from voicedesk.core.engine import Engine

    engine = Engine.load(args.device)
    style = engine.stock_voice(VOICE)
    for _ in range(3):  # warm-up: CUDA context, kernels, allocator
        engine.synthesize_phonemes("hˈɛloʊ ðˈɛɹ", style, seed=0)
    result: dict[str, Any] = {"date": system.utc_now(), "versions": system.versions(args.device),
                              "machine": system.machine(args.device),
                              "cudnn_benchmark_at_load": torch.backends.cudnn.benchmark}
    for key, job in (
        ("synthesis", lambda: profile_synthesis(engine, style, args.repeats)),
        ("synthesis_graphs", lambda: profile_synthesis_graphs(engine, style, args.repeats)),
        ("text_half", lambda: profile_text_half(engine, args.repeats)),
        ("graph_capture", lambda: profile_graph_capture(engine, style, args.repeats)),
        ("fit_pass", lambda: profile_fit_pass(engine, args.repeats)),
        ("autotuner", lambda: profile_autotuner(engine, style)),
        ("fit", lambda: profile_fit(engine, args.prompt, args.transcript)),
    ):
        if args.only and key not in args.only.split(","):
            continue
        try:
            result[key] = job()
        except Exception as exc:  # one failed measurement must not lose the others
            result[key] = {"error": f"{type(exc).__name__}: {exc}"}
        print(key, json.dumps(result[key], default=float), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
