"""The voice library: round trips, names, rename/delete/export/import, damaged and hostile files."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tools.processes import kill_while_writing
from voicedesk.core.engine.config import Pitch
from voicedesk.core.engine.envelope import N_CEPSTRA, QUANTILES, EnvelopeMap
from voicedesk.core.errors import InputError
from voicedesk.core.library import voicefile
from voicedesk.core.library.names import check_name, suggest_name
from voicedesk.core.library.scan import STALE_SECONDS
from voicedesk.core.library.voicefile import CorruptVoiceFile, SavedVoice
from voicedesk.core.library.voices import VoiceLibrary


def make_voice(name: str = "anna", rows: int = 510, seed: int = 0) -> SavedVoice:
    rng = np.random.default_rng(seed)
    t = np.arange(24000 * 2) / 24000
    prompt = (0.3 * np.sin(2 * np.pi * 180 * t) * np.sin(2 * np.pi * 3 * t)).astype(np.float32)
    return SavedVoice(
        name=name,
        style=rng.standard_normal((rows, 256)).astype(np.float32),
        prompt_audio=prompt,
        language="en",
        scores={"similarity_before": 0.42, "similarity_after": 0.81, "verdict": "close match", "steps": 100},
        transcript="Hello — it's me, “Anna”.",
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_save_load_round_trip_is_exact(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path)
    original = make_voice()
    library.save(original)
    loaded = VoiceLibrary(tmp_path).load("anna")
    assert loaded.name == "anna" and loaded.language == "en" and loaded.created == original.created
    assert loaded.scores == original.scores and loaded.transcript == original.transcript
    assert loaded.style.dtype == np.float32 and np.array_equal(loaded.style, original.style)
    assert loaded.prompt_rate == 24000 and loaded.prompt_audio.shape == original.prompt_audio.shape
    assert np.max(np.abs(loaded.prompt_audio - original.prompt_audio)) < 1e-6  # 24-bit FLAC
    assert [path.name for path in tmp_path.iterdir()] == ["anna.vdvoice"]
    assert loaded.pitch == Pitch()


def test_a_voices_pitch_survives_save_rename_and_export(tmp_path: Path) -> None:
    import json
    import zipfile

    library = VoiceLibrary(tmp_path / "lib")
    library.save(replace(make_voice(), pitch=Pitch(0.84, 0.5)))
    library.rename("anna", "Anna-Low")
    exported = tmp_path / "anna.vdvoice"
    library.export("Anna-Low", exported)
    with zipfile.ZipFile(exported) as archive:
        meta = json.loads(archive.read("meta.json"))
    # Version 2: an older VoiceDesk refuses it rather than speaking it at the wrong pitch.
    assert meta["pitch"] == {"scale": 0.84, "spread": 0.5} and meta["version"] == 2
    imported = VoiceLibrary(tmp_path / "other").import_file(exported)
    assert imported.pitch == Pitch(0.84, 0.5) == VoiceLibrary(tmp_path / "other").load(imported.name).pitch
    library.save(make_voice("plain"))
    with zipfile.ZipFile(tmp_path / "lib" / "plain.vdvoice") as archive:
        assert json.loads(archive.read("meta.json"))["version"] == 1  # every VoiceDesk reads it
    # A pace of its own: version 3, which a VoiceDesk that knows only the pitch refuses.
    library.save(replace(make_voice("quick"), pitch=Pitch(0.84, 0.5, 1.2)))
    with zipfile.ZipFile(tmp_path / "lib" / "quick.vdvoice") as archive:
        meta = json.loads(archive.read("meta.json"))
    assert meta["pitch"] == {"scale": 0.84, "spread": 0.5, "pace": 1.2} and meta["version"] == 3
    assert library.load("quick").pitch == Pitch(0.84, 0.5, 1.2)


def test_a_voices_envelope_map_survives_export_and_a_damaged_one_is_reported(tmp_path: Path) -> None:
    import io
    import json
    import zipfile

    rng = np.random.default_rng(3)
    n = N_CEPSTRA
    knots = np.sort(rng.standard_normal((2, QUANTILES, n)), axis=1).astype(np.float32)
    mapping = EnvelopeMap(rng.standard_normal(n).astype(np.float32),
                          (np.eye(n) + 0.05 * rng.standard_normal((n, n))).astype(np.float32),
                          (np.eye(n) + 0.05 * rng.standard_normal((n, n))).astype(np.float32), knots[0], knots[1])
    library = VoiceLibrary(tmp_path / "lib")
    library.save(replace(make_voice(), pitch=Pitch(0.9, 0.5, 1.1), envelope=mapping))
    exported = library.export("anna", tmp_path / "anna.vdvoice")
    with zipfile.ZipFile(exported) as archive:
        assert json.loads(archive.read("meta.json"))["version"] == 5  # a VoiceDesk without such maps refuses it
    # A linear map (the quantiles left out) is still written in format 4, which VoiceDesks since the maps read
    linear = VoiceLibrary(tmp_path / "linear")
    linear.save(replace(make_voice(name="bea"), envelope=EnvelopeMap(mapping.centre, mapping.transform)))
    with zipfile.ZipFile(linear.export("bea", tmp_path / "bea.vdvoice")) as archive:
        assert json.loads(archive.read("meta.json"))["version"] == 4
    imported = VoiceLibrary(tmp_path / "other").import_file(exported)
    assert imported.envelope is not None
    assert np.array_equal(imported.envelope.to_array(), mapping.to_array()) and imported.pitch == Pitch(0.9, 0.5, 1.1)
    assert library.load("anna").envelope is not None and make_voice().envelope is None
    # A map that is not one: the file is reported and skipped, the others listed.
    damaged = io.BytesIO()
    with zipfile.ZipFile(exported) as source, zipfile.ZipFile(damaged, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "envelope.npy":
                buffer = io.BytesIO()
                np.save(buffer, np.full((n + 1, n), np.inf, np.float32))
                data = buffer.getvalue()
            target.writestr(item, data)
    (tmp_path / "lib" / "broken.vdvoice").write_bytes(damaged.getvalue())
    scan = library.scan()
    assert [voice.name for voice in scan.items] == ["anna"]
    assert [problem.path.name for problem in scan.problems] == ["broken.vdvoice"]
    assert "envelope map" in scan.problems[0].message


def test_default_root_is_the_user_voices_folder(voicedesk_home: Path) -> None:
    library = VoiceLibrary()
    library.save(make_voice(rows=1))
    assert (voicedesk_home / "data" / "voices" / "anna.vdvoice").is_file()


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("my voice", "my-voice"), ("Grandma's voice!", "Grandmas-voice"), ("../etc", "etc"), ("CON", "voice-CON"), ("", None),
     ("é" * 3, "eee"), ("x" * 60, "x" * 48), ("trailing.", "trailing")],
)
def test_invalid_names_are_refused_with_a_suggestion(name: str, suggestion: str | None) -> None:
    with pytest.raises(InputError) as caught:
        check_name(name)
    if suggestion is not None:
        assert repr(suggestion) in str(caught.value)
        assert check_name(suggest_name(name)) == suggestion


def test_names_are_unique_regardless_of_case_and_stock_names_are_reserved(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path, reserved_names=["jf_alpha"])
    library.save(make_voice("Anna"))
    with pytest.raises(InputError, match="already exists.*'anna-2'"):
        library.save(make_voice("anna"))
    with pytest.raises(InputError, match="stock voice"):
        library.save(make_voice("JF_ALPHA"))
    assert library.load("ANNA").name == "Anna"
    library.save(make_voice("anna", seed=3), overwrite=True)
    assert library.names() == ["Anna"]
    assert np.array_equal(library.load("Anna").style, make_voice(seed=3).style)


def test_rename_including_a_change_of_case(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path)
    library.save(make_voice("anna"))
    library.save(make_voice("bob", seed=1))
    with pytest.raises(InputError, match="already exists"):
        library.rename("anna", "BOB")
    library.rename("anna", "clara")
    assert library.names() == ["bob", "clara"]
    library.rename("clara", "Clara")
    assert library.names() == ["bob", "Clara"]
    assert np.array_equal(library.load("Clara").style, make_voice().style)
    with pytest.raises(InputError, match="no saved voice"):
        library.rename("anna", "dora")


def test_delete_moves_to_trash_which_is_never_listed(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path)
    library.save(make_voice())
    trashed = library.delete("anna")
    assert trashed.parent == tmp_path / ".trash" and trashed.is_file()
    assert library.names() == [] and not library.exists("anna")
    with pytest.raises(InputError):
        library.delete("anna")


def test_export_import_round_trip_with_clash_handling(tmp_path: Path) -> None:
    source, target = VoiceLibrary(tmp_path / "a"), VoiceLibrary(tmp_path / "b")
    source.save(make_voice())
    exported = source.export("anna", tmp_path / "anna-export")
    assert exported.name == "anna-export.vdvoice"
    assert target.import_file(exported).name == "anna"
    with pytest.raises(InputError, match="already exists"):
        target.import_file(exported)
    assert target.import_file(exported, rename_on_clash=True).name == "anna-2"
    assert target.import_file(exported, name="dora").name == "dora"
    assert target.names() == ["anna", "anna-2", "dora"]
    assert np.array_equal(target.load("dora").style, make_voice().style)
    into_folder = source.export("anna", tmp_path)
    assert into_folder == tmp_path / "anna.vdvoice"


def test_listing_skips_and_reports_damaged_entries(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path)
    library.save(make_voice("good"))
    data = (tmp_path / "good.vdvoice").read_bytes()
    (tmp_path / "half.vdvoice").write_bytes(data[: len(data) // 2])
    (tmp_path / "zero.vdvoice").write_bytes(b"")
    (tmp_path / "has space.vdvoice").write_bytes(data)
    scan = library.scan()
    assert [voice.name for voice in scan.items] == ["good"]
    assert sorted(problem.path.name for problem in scan.problems) == ["half.vdvoice", "has space.vdvoice", "zero.vdvoice"]
    assert all("skipped" in problem.message for problem in scan.problems)
    with pytest.raises(CorruptVoiceFile):
        library.load("half")


def test_hostile_import_leaves_the_library_untouched(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path / "lib")
    library.save(make_voice())
    before = snapshot(tmp_path / "lib")
    bad = tmp_path / "bad.vdvoice"
    good = voicefile.encode(make_voice("eve"))
    for data in (b"", b"PK\x05\x06" + b"\x00" * 18, good[:-30], good[:100], b"\x00" * 1000):
        bad.write_bytes(data)
        with pytest.raises(InputError):
            library.import_file(bad)
    with pytest.raises(InputError, match="does not exist"):
        library.import_file(tmp_path / "missing.vdvoice")
    assert snapshot(tmp_path / "lib") == before


def test_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.vdvoice"
    with big.open("wb") as handle:
        handle.truncate(voicefile.MAX_FILE_BYTES + 1)  # sparse
    with pytest.raises(CorruptVoiceFile, match="larger than any voice file"):
        VoiceLibrary(tmp_path / "lib").import_file(big)


def test_invalid_voices_are_refused_on_save(tmp_path: Path) -> None:
    library = VoiceLibrary(tmp_path)
    voice = make_voice()
    bad_voices = [
        SavedVoice("a", np.zeros((2, 128), np.float32), voice.prompt_audio),
        SavedVoice("a", np.full((1, 256), np.nan, np.float32), voice.prompt_audio),
        SavedVoice("a", voice.style, np.zeros(0, np.float32)),
        SavedVoice("a", voice.style, voice.prompt_audio, scores={"x": [1, 2]}),  # type: ignore[dict-item]
        SavedVoice("a", voice.style, voice.prompt_audio, created="soon"),
        SavedVoice("a", voice.style, voice.prompt_audio, transcript="word " * 1000),
        SavedVoice("a", voice.style, voice.prompt_audio, pitch=Pitch(3.0)),
        SavedVoice("a", voice.style, voice.prompt_audio, pitch=Pitch(1.0, float("nan"))),
        SavedVoice("a", voice.style, voice.prompt_audio, pitch=Pitch(pace=0.0)),
    ]
    for bad in bad_voices:
        with pytest.raises(InputError):
            library.save(bad)
    assert library.names() == []


def test_stale_temp_files_are_removed_and_fresh_ones_kept(tmp_path: Path) -> None:
    stale, fresh = tmp_path / ".anna.vdvoice.x1.part", tmp_path / ".bob.vdvoice.x2.part"
    stale.write_bytes(b"half a voice")
    fresh.write_bytes(b"being written by another process")
    old = time.time() - STALE_SECONDS - 10
    os.utime(stale, (old, old))
    library = VoiceLibrary(tmp_path)
    assert not stale.exists() and fresh.exists()
    assert library.scan().problems == []


_WRITER = """
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from test_library_voices import make_voice
from voicedesk.core.library.voices import VoiceLibrary
library = VoiceLibrary(__import__("pathlib").Path(sys.argv[1]))
print("ready", flush=True)
i = 0
while True:
    i += 1
    library.save(make_voice("v%d" % (i % 5), seed=i), overwrite=True)
    if i % 3 == 0:
        library.rename("v%d" % (i % 5), "r%d" % i)
        library.delete("r%d" % i)
"""


def test_killed_mid_write_leaves_a_consistent_library(tmp_path: Path) -> None:
    """SIGKILL a process that saves, renames and deletes in a loop; every voice left must load."""
    root = tmp_path / "lib"
    for _ in kill_while_writing(_WRITER, [str(root), str(Path(__file__).parent)], (0.3, 0.55, 0.8)):
        library = VoiceLibrary(root)
        scan = library.scan()
        assert scan.problems == [], scan.problems
        assert scan.items, "the writer saved nothing before the kill"
        for voice in scan.items:
            assert voice.style.shape == (510, 256)
    for part in root.glob(".*.part"):  # a kill can leave a temp file: ignored now, removed once stale
        old = time.time() - STALE_SECONDS - 10
        os.utime(part, (old, old))
    VoiceLibrary(root)
    assert list(root.glob(".*.part")) == []
