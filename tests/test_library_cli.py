"""`voicedesk voices`: listing, export, import, rename and delete from the command line."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from pathlib import Path

from test_library_voices import make_voice
from voicedesk.cli import main as cli_main
from voicedesk.core.engine.config import Pitch
from voicedesk.core.engine.voices import stock_voice_names
from voicedesk.core.library.voices import VoiceLibrary


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_listing_shows_stock_then_saved_one_per_line_name_first(voicedesk_home: Path) -> None:
    VoiceLibrary().save(replace(make_voice("anna", rows=1), pitch=Pitch(0.87, 0.4)))
    (voicedesk_home / "data" / "voices" / "broken.vdvoice").write_bytes(b"PK\x03\x04 not really")
    code, out, err = run("voices")
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    names = [row[0] for row in rows]
    assert names == [*stock_voice_names(), "anna"]
    assert all(" " not in name for name in names)
    assert rows[-1][1:3] == ["saved", "en"] and "similarity_after=0.810" in rows[-1][-1]
    assert "pitch_scale=0.870 pitch_spread=0.400" in rows[-1][-1]
    assert {row[1] for row in rows[:-1]} == {"stock"}
    assert "broken.vdvoice" in err and "skipped" in err


def test_round_trip_through_the_command_line(tmp_path: Path) -> None:
    VoiceLibrary().save(make_voice("anna", rows=1))
    code, out, _ = run("voices", "export", "anna", str(tmp_path / "anna-copy"))
    assert code == 0 and (tmp_path / "anna-copy.vdvoice").is_file()
    assert run("voices", "rename", "anna", "bella")[0] == 0
    assert run("voices", "import", str(tmp_path / "anna-copy.vdvoice"))[0] == 0
    code, _, err = run("voices", "import", str(tmp_path / "anna-copy.vdvoice"))
    assert code == 2 and "already exists" in err and "--name" in err
    assert run("voices", "import", str(tmp_path / "anna-copy.vdvoice"), "--name", "clara")[0] == 0
    assert run("voices", "delete", "bella")[0] == 0
    assert VoiceLibrary().names() == ["anna", "clara"]


def test_mistakes_are_one_line_errors() -> None:
    for args, needle in [
        (("voices", "rename", "nobody", "x"), "no saved voice"),
        (("voices", "rename", "jf_alpha", "x"), "no saved voice"),
        (("voices", "delete", "nobody"), "no saved voice"),
        (("voices", "export", "nobody", "/tmp/x"), "no saved voice"),
        (("voices", "import", "/nonexistent/voice.vdvoice"), "does not exist"),
    ]:
        code, _, err = run(*args)
        assert code == 2 and err.startswith("Error: ") and needle in err and err.count("\n") == 1, err
    VoiceLibrary().save(make_voice("anna", rows=1))
    code, _, err = run("voices", "rename", "anna", "jf_alpha")
    assert code == 2 and "stock voice" in err
    code, _, err = run("voices", "rename", "anna", "my voice")
    assert code == 2 and "'my-voice'" in err
