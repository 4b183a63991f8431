"""Would a frame-by-frame envelope mapping after the style bring the clones closer? A probe on a device run's fits.

A fit with the prompt's words can say those words again: the clone's speech and the prompt are then a parallel pair,
the data classic voice conversion learns from. Along their time alignment (DTW on mel cepstra), this learns a
mapping from the clone's spectral envelope to the prompt's, frame by frame, and applies it to the clone's speech of
the held-out sentences (the STFT magnitude scaled by the envelope's change, phase and pitch untouched). Mappings,
from the fewest numbers to the most:

- "mean": the cepstra's mean moved (a fixed equaliser, learned on the clone itself rather than a stock voice);
- "meanvar": each coefficient's mean and spread moved (cepstral mean and variance conversion);
- "linear": a ridge regression from the clone's cepstra to the prompt's, pulled toward the identity;
- "knn": each frame's envelope replaced by the mean of the prompt's k nearest frames (by mean-normalised cepstra);
- "cov": whitened with the clone's covariance and coloured with the prompt's ("cov0.1m0": each shrunk 0.1 toward its
  diagonal, the mean not moved: what the app ships, engine/envelope.py);
- "product24" / "product16": the app's own map, learned at 24 / 16 kHz ("product24p1": from the words at pace 1).

Each fit's check sentence is also heard by GE2E against the prompt with and without the map ("KIND if GE2E": the map
kept only where GE2E hears it closer). For each fit (`clone_dev.py device` results, configs `PREFIX<seed>`), the judge's similarity of the held-out speech to
the target's reference, without and with each mapping (the same styles and random source: paired):

    python tests/benchmarks/clone_envelope_probe.py /work/.device/9/results-0.npz --prefix s35-tv8-typed-seed \
        --kinds cov0.1m0,product24 --cepstra 30 --smooth 1
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "desktop"))
sys.path.insert(0, str(HERE))

from clone_dev import Scorer, load_local, seeded_fits, speak, words_of  # noqa: E402

from voicedesk.core.engine.envelope import dct_rows  # noqa: E402

RATE = 24000
N_FFT, HOP = 1024, 240  # 43 ms windows, 10 ms apart
BANDS, F_MAX = 40, 8000.0  # the prompt holds nothing above 8 kHz (16 kHz recordings)
N_CEP = 24
LIMIT = np.log(10 ** (12 / 10))  # no band moved by more than 12 dB


def mel_filters() -> np.ndarray:
    """[BANDS, bins] triangular mel filters up to F_MAX."""
    freqs = np.linspace(0, RATE / 2, N_FFT // 2 + 1)
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    edges = 700 * (10 ** (np.linspace(mel(60.0), mel(F_MAX), BANDS + 2) / 2595) - 1)
    fb = np.zeros((BANDS, len(freqs)))
    for b in range(BANDS):
        lo, mid, hi = edges[b : b + 3]
        fb[b] = np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None)
    return fb


FILTERS = mel_filters()
DCT = dct_rows(BANDS, N_CEP)  # [N_CEP, BANDS]


def stft(audio: np.ndarray) -> np.ndarray:
    import torch

    x = torch.from_numpy(audio.astype(np.float32))
    return torch.stft(x, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True).numpy().T  # [frames, bins]


def cepstra(spectrum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[frames, N_CEP] mel cepstra (c1..) and [frames] speech mask (within 30 dB of the loudest frame)."""
    mel = np.abs(spectrum) ** 2 @ FILTERS.T
    energy = mel.sum(1)
    return np.log(mel + 1e-10) @ DCT.T, energy > energy.max() * 1e-3


def reshape(audio: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """`audio` with each frame's envelope changed by `delta` ([frames, N_CEP] cepstra), pitch and phase kept."""
    import torch

    spectrum = stft(audio)
    log_gain = np.clip(delta @ DCT, -LIMIT, LIMIT)  # [frames, BANDS], natural log of power
    weight = FILTERS.sum(0)
    bins = (log_gain @ FILTERS) / np.maximum(weight, 1e-6)
    top = int(np.searchsorted(np.linspace(0, RATE / 2, N_FFT // 2 + 1), F_MAX))
    bins[:, top:] = bins[:, top - 1 : top]  # above the prompt's band: the top band's gain
    bins[:, weight < 1e-6] = 0.0
    bins[:, :top][:, weight[:top] < 1e-6] = 0.0
    shaped = spectrum * np.exp(bins / 2)
    x = torch.from_numpy(shaped.T.copy())
    out = torch.istft(x, N_FFT, HOP, window=torch.hann_window(N_FFT), length=len(audio))
    return out.numpy()


def aligned_pairs(ours: np.ndarray, theirs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from voicedesk.core.clone.align import dtw_path, path_cost

    rows, cols = dtw_path(path_cost(ours.astype(np.float64), theirs.astype(np.float64)))
    return ours[rows], theirs[cols]


Mapping = Callable[[np.ndarray], np.ndarray]


def learn(kind: str, said: np.ndarray, prompt: np.ndarray) -> Mapping:
    """A mapping of [frames, N_CEP] cepstra learned from the clone's speech frames `said` and the prompt's `prompt`."""
    mu_x, mu_y = said.mean(0), prompt.mean(0)
    if kind == "mean":
        return lambda c: c + (mu_y - mu_x)
    if kind.startswith("meanvar"):
        # "meanvar", or "meanvar0.5": the spread's ratio raised to that power (part of the way)
        power = float(kind.removeprefix("meanvar") or 1.0)
        ratio = (prompt.std(0) / said.std(0)) ** power
        return lambda c: mu_y + ratio * (c - mu_x)
    if kind.startswith("covmod"):
        # The shipped covariance map, then each coefficient's fast movement (what a 5-frame moving average leaves)
        # scaled to the prompt's: how quickly the envelope moves, not only how far ("covmod0.5": half way)
        power = float(kind.removeprefix("covmod") or 1.0)
        base = learn("cov0.1m0", said, prompt)

        def fast(c: np.ndarray) -> np.ndarray:
            return c - smooth(c, 5)

        ratio = (fast(prompt).std(0) / fast(base(said)).std(0)) ** power

        def with_pace(c: np.ndarray) -> np.ndarray:
            mapped = base(c)
            return mapped + (ratio - 1) * fast(mapped)

        return with_pace
    if kind.startswith("class"):
        # "class2s0.3o1": the clone's frames in 2 classes (k-means), each class with its own covariance map (each
        # covariance shrunk 0.3), the prompt's frames classed by the clone frame DTW aligns them with; the global mean
        # kept, each class's offset from it moved by o (0: every class's mean kept). Frames blend the classes' maps
        # by their soft class membership.
        spec = kind.removeprefix("class")
        count, rest = spec.split("s")
        shrink_text, offset_text = rest.split("o")
        return class_map(said, prompt, int(count), float(shrink_text), float(offset_text))
    if kind.startswith("covq"):
        # The shipped covariance map, then each whitened coordinate's distribution (not only its spread) matched to
        # the prompt's by quantiles ("covq0.5": half way)
        part = float(kind.removeprefix("covq") or 1.0)
        return quantile_map(said, prompt, part)
    if kind.startswith("cov"):
        # Whitened with the clone's covariance, coloured with the prompt's (each shrunk toward its diagonal);
        # "cov0.1m0.5": shrink 0.1, the mean moved half way; "s0.7": the whole change scaled
        spec = kind.removeprefix("cov")
        scale = float(spec.split("s")[1]) if "s" in spec else 1.0
        spec = spec.split("s")[0]
        shrink, mean_part = (float(x) for x in spec.split("m")) if "m" in spec else (float(spec or 0.3), 1.0)
        target_mu = mu_x + mean_part * (mu_y - mu_x)

        transform = _shrunk_root(said, shrink, True) @ _shrunk_root(prompt, shrink, False)
        return lambda c: c + scale * (target_mu + (c - mu_x) @ transform - c)
    if kind.startswith("linear"):
        strength = float(kind.removeprefix("linear") or 10.0)
        x, y = aligned_pairs(said - mu_x, prompt - mu_y)
        n = len(x)
        # Ridge toward the identity: W = argmin |xW - y|² + λ n |W - I|²
        lam = strength * n / 100
        w = np.linalg.solve(x.T @ x + lam * np.eye(N_CEP), x.T @ y + lam * np.eye(N_CEP))
        return lambda c: mu_y + (c - mu_x) @ w
    if kind.startswith("knn"):
        k = int(kind.removeprefix("knn") or 4)
        bank = prompt - mu_y

        def nearest(c: np.ndarray) -> np.ndarray:
            d = (((c - mu_x)[:, None, :] - bank[None]) ** 2).sum(-1)
            idx = np.argsort(d, axis=1)[:, :k]
            return mu_y + bank[idx].mean(1)

        return nearest
    raise ValueError(kind)


def _shrunk_root(frames: np.ndarray, shrink: float, inverse: bool) -> np.ndarray:
    cov = np.cov(frames.T)
    cov = (1 - shrink) * cov + shrink * np.diag(np.diag(cov))
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, 1e-6) ** (-0.5 if inverse else 0.5)
    return (vecs * vals) @ vecs.T


def kmeans(frames: np.ndarray, count: int, rounds: int = 30) -> np.ndarray:
    """[count, dims] centroids; deterministic (farthest-point start from the frame nearest the mean)."""
    centres = [frames[np.argmin(((frames - frames.mean(0)) ** 2).sum(1))]]
    while len(centres) < count:
        d = np.min([((frames - c) ** 2).sum(1) for c in centres], axis=0)
        centres.append(frames[np.argmax(d)])
    c = np.array(centres)
    for _ in range(rounds):
        labels = np.argmin(((frames[:, None] - c[None]) ** 2).sum(-1), 1)
        c = np.array([frames[labels == k].mean(0) if (labels == k).any() else c[k] for k in range(count)])
    return c


def class_map(said: np.ndarray, prompt: np.ndarray, count: int, shrink: float, offset: float) -> Mapping:
    mu_x, mu_y = said.mean(0), prompt.mean(0)
    centres = kmeans(said - mu_x, count)
    labels_x = np.argmin((((said - mu_x)[:, None] - centres[None]) ** 2).sum(-1), 1)
    from voicedesk.core.clone.align import dtw_path, path_cost

    rows, cols = dtw_path(path_cost(said.astype(np.float64), prompt.astype(np.float64)))
    votes = np.zeros((len(prompt), count))
    np.add.at(votes, (cols, labels_x[rows]), 1.0)
    labels_y = votes.argmax(1)
    spread = float(((said - mu_x - centres[labels_x]) ** 2).sum(1).mean())  # within-class distance, for softness
    maps = []
    for k in range(count):
        x, y = said[labels_x == k], prompt[labels_y == k]
        if min(len(x), len(y)) < 40:  # too few frames: the global map
            x, y = said, prompt
        transform = _shrunk_root(x, shrink, True) @ _shrunk_root(y, shrink, False)
        target = x.mean(0) + offset * ((y.mean(0) - mu_y) - (x.mean(0) - mu_x))
        maps.append((x.mean(0), target, transform))

    def mapped(c: np.ndarray) -> np.ndarray:
        d = (((c - mu_x)[:, None] - centres[None]) ** 2).sum(-1)
        logits = -(d - d.min(1, keepdims=True)) / spread
        weights = np.exp(logits)
        weights /= weights.sum(1, keepdims=True)
        out = np.zeros_like(c)
        for k, (centre, target, transform) in enumerate(maps):
            out += weights[:, k : k + 1] * (target + (c - centre) @ transform)
        return out

    return mapped


def quantile_map(said: np.ndarray, prompt: np.ndarray, part: float) -> Mapping:
    mu_x, mu_y = said.mean(0), prompt.mean(0)
    w_x, c_y = _shrunk_root(said, 0.1, True), _shrunk_root(prompt, 0.1, False)
    w_y = _shrunk_root(prompt, 0.1, True)
    z_x, z_y = (said - mu_x) @ w_x, (prompt - mu_y) @ w_y
    probs = (np.arange(len(z_x)) + 0.5) / len(z_x)
    q_x = np.sort(z_x, 0)
    q_y = np.quantile(z_y, probs, axis=0)

    def mapped(c: np.ndarray) -> np.ndarray:
        z = (c - mu_x) @ w_x
        moved = np.stack([np.interp(z[:, i], q_x[:, i], q_y[:, i]) for i in range(z.shape[1])], 1)
        # outside the clone's range: shifted as its extreme is
        moved = np.where(z < q_x[0], z + q_y[0] - q_x[0], np.where(z > q_x[-1], z + q_y[-1] - q_x[-1], moved))
        z = z + part * (moved - z)
        return mu_x + z @ c_y

    return mapped


def smooth(delta: np.ndarray, width: int = 3) -> np.ndarray:
    kernel = np.ones(width) / width
    return np.stack([np.convolve(np.pad(col, width // 2, mode="edge"), kernel, "valid") for col in delta.T], 1)


def convert(audio: np.ndarray, mapping: Mapping, width: int) -> np.ndarray:
    c, _ = cepstra(stft(audio))
    delta = mapping(c) - c
    return reshape(audio, smooth(delta, width) if width > 1 else delta)


KINDS = ("mean", "meanvar", "linear10", "linear1", "knn4", "knn16")


def main() -> None:
    global N_CEP, DCT, BANDS, FILTERS
    import torch

    from voicedesk.core.audio.resample import resample
    from voicedesk.core.engine.config import Pitch

    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--prefix", required=True, help="configs named this followed by a seed number")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--smooth", type=int, default=3, help="frames the envelope's change is averaged over")
    parser.add_argument("--cepstra", type=int, default=N_CEP, help="how many cepstra the mapping moves")
    parser.add_argument("--bands", type=int, default=BANDS, help="mel bands the cepstra are taken from")
    parser.add_argument("--targets", default="", help="only these targets (comma-separated)")
    parser.add_argument("--wer", action="store_true", help="also the word error rate of each mapping's speech")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    N_CEP, BANDS = args.cepstra, args.bands
    FILTERS = mel_filters()
    DCT = dct_rows(BANDS, N_CEP)
    torch.set_num_threads(2)
    model, _ = load_local()
    scorer = Scorer()
    from voicedesk.core.clone.ge2e import GE2E

    ge2e = GE2E()

    def heard(audio_24k: np.ndarray, target: np.ndarray) -> float:
        """GE2E's similarity (the fit's encoder, not the judge) of speech to the prompt's embedding."""
        return float(ge2e.embed_numpy(resample(audio_24k, RATE, 16000)) @ target)

    table: dict[str, list[float]] = {k: [] for k in ("as fitted", *kinds, *(f"{k} if GE2E" for k in kinds))}
    wers: dict[str, list[float]] = {k: [] for k in table}
    for path in args.results:
        with np.load(path, allow_pickle=True) as saved:
            ids: dict[str, Any] = json.loads(str(saved["ids"]))
            held = ids["held_out"]
            for config, name in seeded_fits(saved, args.prefix):
                if args.targets and name not in args.targets.split(","):
                    continue
                rows = saved[f"fit|{config}|{name}|rows"]
                pitch = Pitch(**json.loads(str(saved[f"fit|{config}|{name}|meta"]))["pitch"])
                words = words_of(config, ids, name)
                assert words is not None, "the mapping learns from the clone saying the prompt's words"
                spoken = [speak(model, np.repeat(rows[k : k + 1], 510, axis=0), ids_k, 0, pitch)
                          for k, ids_k in enumerate(held)]
                said = speak(model, np.repeat(rows[0:1], 510, axis=0), words, 0, pitch)
                prompt = resample(scorer.targets[name].prompt_16k, 16000, RATE)
                c_said, m_said = cepstra(stft(said))
                c_prompt, m_prompt = cepstra(stft(prompt))
                results = {"as fitted": spoken}
                check = speak(model, np.repeat(rows[0:1], 510, axis=0), ids["check"], 0, pitch)
                wanted = ge2e.embed_numpy(scorer.targets[name].prompt_16k)
                plain = heard(check, wanted)
                verdicts = []
                for kind in kinds:
                    if kind.startswith("product"):  # the app's own map (engine/envelope.py), learned at 16 or 24 kHz
                        from voicedesk.core.engine import envelope as product

                        # "product16": learned at 16 kHz; "product24p1": from the words spoken at the model's pace
                        spec = kind.removeprefix("product")
                        rate = int(spec.split("i")[0].split("p")[0].removesuffix("check") or 24) * 1000
                        voice = said if "p1" not in spec else speak(model, np.repeat(rows[0:1], 510, axis=0), words, 0,
                                                                    replace(pitch, pace=1.0))
                        if "check" in spec:  # without the words: from the voice's check sentence (other words)
                            voice, rate = check, RATE
                        sources = (voice, prompt) if rate == RATE else (resample(voice, RATE, rate), scorer.targets[name].prompt_16k)
                        learned = product.learn([sources[0]], sources[1], rate)
                        assert learned is not None
                        maps = [learned]
                        # "i2": learned again from the voice's speech with the first map applied (what the
                        # reshaping through the STFT bins left of the covariance's change), both applied in turn
                        for _ in range(int(spec.split("i")[1]) - 1 if "i" in spec else 0):
                            mapped_voice = functools.reduce(lambda a, m: product.apply(a, m, rate), maps, sources[0])
                            again = product.learn([mapped_voice], sources[1], rate)
                            assert again is not None
                            maps.append(again)

                        def convert_with(a: np.ndarray, _: Any, __: int, ms: Any = maps) -> np.ndarray:
                            return functools.reduce(lambda x, m: product.apply(x, m, RATE), ms, a)

                        results[kind] = [convert_with(a, None, 0) for a in spoken]
                        mapped = heard(convert_with(check, None, 0), wanted)
                        verdicts.append(f"GE2E {kind} {mapped - plain:+.3f}")
                        results[f"{kind} if GE2E"] = results[kind] if mapped > plain else spoken
                        continue
                    mapping = learn(kind, c_said[m_said], c_prompt[m_prompt])
                    results[kind] = [convert(a, mapping, args.smooth) for a in spoken]
                    # Kept only where the fit's own encoder hears the check sentence closer with it
                    mapped = heard(convert(check, mapping, args.smooth), wanted)
                    verdicts.append(f"GE2E {kind} {mapped - plain:+.3f}")
                    results[f"{kind} if GE2E"] = results[kind] if mapped > plain else spoken
                line = []
                # GE2E on the judge's comparison: the held-out speech against the speaker's reference recordings
                ref = np.mean([ge2e.embed_numpy(a) for a in scorer.targets[name].reference_16k], 0)
                ref /= np.linalg.norm(ref)
                for kind in ("as fitted", *kinds):
                    emb = np.mean([ge2e.embed_numpy(resample(a, RATE, 16000)) for a in results[kind]], 0)
                    verdicts.append(f"GE2E~ref {kind} {emb @ ref / np.linalg.norm(emb):.3f}")
                for kind, audio in results.items():
                    table[kind].append(scorer.similarity(name, audio))
                    if args.wer:
                        wers[kind].append(scorer.wer(audio))
                    line.append(f"{kind} {table[kind][-1]:.3f}")
                print(f"{config} {name}: " + ", ".join(line + verdicts), flush=True)
    print("| mapping | mean judge similarity | vs as fitted | WER |")
    for kind, sims in table.items():
        wer = f"{100 * np.mean(wers[kind]):.1f} %" if wers[kind] else "–"
        print(f"| {kind} | {np.mean(sims):.4f} | {np.mean(sims) - np.mean(table['as fitted']):+.4f} | {wer} |")


if __name__ == "__main__":
    main()
