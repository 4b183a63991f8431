"""The development voices for cloning: espeak-ng's MBROLA and formant voices, recorded at run time.

MBROLA voices concatenate real recorded diphones, so they carry real speakers' timbre; the formant
variants add more male and female targets. Nothing binary is kept in git: recordings are made with
`espeak-ng -w` into a cache folder on first use.

Texts are split by role so that no score is flattered by shared words: the prompt (~3 s) is all the
fit sees of the target; the model speaks the fitting sentences while fitting; the judge compares
the target's real `REFERENCE` recordings with each candidate saying the `HELD_OUT` sentences.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from voicedesk.core.audio.resample import resample

TARGETS: dict[str, str] = {
    "mb-us1": "female, American (MBROLA)",
    "mb-us2": "male, American (MBROLA)",
    "mb-en1": "male, British (MBROLA)",
    "en+f4": "female (espeak-ng formant)",
    "en+m3": "male (espeak-ng formant)",
    "en-us+f2": "female, American (espeak-ng formant)",
}
PROMPT_TEXT = "The old lighthouse keeper watched the boats come home."
# What a fit is told the ~3 s prompt says when the speaker read something else than the line the recorder
# showed (sweep 30): a line of about the prompt's length from resources/reading-lines.txt.
MISREAD_TEXT = "They watched the stars from the roof of the house."
# Longer prompts, to measure what a longer recording buys (sweep 27): by name, the prompt's text, each the
# one before it and one sentence more.
_MORE = (" A gentle breeze carried the smell of fresh bread through the open window.",
         " Somewhere down the lane, a dog began to bark at the passing cart.")
PROMPT_TEXTS: dict[str, str] = {
    "": PROMPT_TEXT,  # ~3 s
    "long": PROMPT_TEXT + _MORE[0],  # ~6 s
    "longer": PROMPT_TEXT + "".join(_MORE),  # ~9-11 s
}
# What the recorder shows to read (sweep 31), by name "rec{seconds}t{turn}": the passage of
# resources/reading-lines.txt for a recording of that many seconds at that turn of "Another line".
RECORDER_PROMPTS = ("rec3t0", "rec3t4", "rec3t6", "rec3t9", "rec4t12", "rec4t17", "rec4t19", "rec4t26", "rec6t0")
REFERENCE = (
    "Her brother plays the violin every Sunday morning.",
    "The market opens early when the weather is fine.",
)
HELD_OUT = (
    "Nobody expected the train to arrive so quickly.",
    "My favorite color has always been deep green.",
)
# Spoken by every fitted voice for the word error rate only (with HELD_OUT): two sentences per target
# are too few to tell 1 % from 6 %.
WER_EXTRA = (
    "Turn left at the bakery and walk to the end of the road.",
    "Could you send the report before lunch tomorrow?",
    "Rain fell softly on the tin roof all night long.",
    "The recipe needs two eggs, some flour and a pinch of salt.",
)


def recorder_text(kind: str) -> str:
    """The passage the recorder shows for a prompt kind of `RECORDER_PROMPTS`."""
    from voicedesk.core.clone.reading import passage
    from voicedesk.core.paths import resource_lines

    seconds, turn = kind.removeprefix("rec").split("t")
    return passage(resource_lines("reading-lines.txt"), float(seconds), int(turn))


def prompt_texts() -> dict[str, str]:
    """Every prompt kind's text: `PROMPT_TEXTS` and the recorder's passages."""
    return {**PROMPT_TEXTS, **{kind: recorder_text(kind) for kind in RECORDER_PROMPTS}}


@dataclass(frozen=True)
class Target:
    name: str
    prompt_16k: np.ndarray
    prompt_path: Path
    reference_16k: tuple[np.ndarray, ...]
    held_out_16k: tuple[np.ndarray, ...]  # the target's own recordings, for the ceiling


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


def record(voice: str, text: str, folder: Path) -> Path:
    key = hashlib.sha1(f"{voice}|{text}".encode()).hexdigest()[:12]
    path = folder / f"{voice}-{key}.wav"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(tmp), text], check=True, capture_output=True)
        tmp.replace(path)
    return path


def load_16k(path: Path) -> np.ndarray:
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    return resample(audio.mean(axis=1), rate, 16000)


def target(name: str, folder: Path, prompt_text: str = PROMPT_TEXT) -> Target:
    prompt = record(name, prompt_text, folder)
    return Target(
        name=name,
        prompt_16k=load_16k(prompt),
        prompt_path=prompt,
        reference_16k=tuple(load_16k(record(name, t, folder)) for t in REFERENCE),
        held_out_16k=tuple(load_16k(record(name, t, folder)) for t in HELD_OUT),
    )
