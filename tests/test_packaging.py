"""Packaging: what the spec collects, the frozen entry point, the desktop entry, and the self-test.

Building the bundle itself takes minutes, so it is a separate step of the test command (tests/run.sh
runs packaging/build.sh after pytest, whose last step is the frozen self-test). These tests
cover everything that can be checked without a build, including the self-test from source.
"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "voicedesk.spec"


def spec_constant(name: str) -> Any:
    """The literal value assigned to `name` at the top level of the spec."""
    for node in ast.parse(SPEC.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not assigned in {SPEC}")


def package_root(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, f"{package} is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def test_spec_is_python_and_builds_the_named_app() -> None:
    source = SPEC.read_text(encoding="utf-8")
    compile(source, str(SPEC), "exec")
    assert 'name="VoiceDesk"' in source
    assert "voicedesk.__version__" in source
    # The bundle's data: resources/, the converted weights into models/, package data.
    assert '(str(ROOT / "resources"), "resources")' in source
    assert '(str(p), "models")' in source
    # strip=True breaks numpy's OpenBLAS: every strip= keyword in the spec must be False.
    strips = [k.value for k in ast.walk(ast.parse(source)) if isinstance(k, ast.keyword) and k.arg == "strip"]
    assert strips and all(isinstance(v, ast.Constant) and v.value is False for v in strips)


def test_windows_version_resource_carries_the_package_version(tmp_path: Path) -> None:
    import re

    import voicedesk

    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "windows_version_file")
    namespace: dict[str, Any] = {"re": re, "Path": Path}
    exec(compile(ast.Module([function], []), str(SPEC), "exec"), namespace)
    text = Path(namespace["windows_version_file"]("2.10.3rc1", tmp_path)).read_text(encoding="utf-8")
    assert "filevers=(2, 10, 3, 1)" in text and "'FileVersion', '2.10.3rc1'" in text
    ast.parse(text)  # PyInstaller evaluates it as a Python expression
    current = Path(namespace["windows_version_file"](voicedesk.__version__, tmp_path)).read_text(encoding="utf-8")
    assert f"'ProductVersion', '{voicedesk.__version__}'" in current


def test_every_runtime_data_pattern_matches_installed_files() -> None:
    for package, patterns in spec_constant("RUNTIME_DATA").items():
        root = package_root(package)
        for pattern in patterns:
            assert list(root.glob(pattern)), f"{package}/{pattern} matches nothing: the bundle would lack it"


def test_files_kept_from_dropped_folders_exist() -> None:
    # torch does not import without torch/bin/torch_shm_manager, which sits among torch's test programs.
    torch_root = package_root("torch").parent
    for name in spec_constant("KEEP"):
        assert name.startswith(spec_constant("DROP_PREFIXES")), f"{name} is not in a dropped folder"
        assert (torch_root / name).is_file(), f"{name} is not installed: the spec's keep list is stale"


# Packages whose data PyInstaller's own hooks collect whole (no entry in RUNTIME_DATA needed).
STOCK_HOOK_DATA = {"jieba", "sudachipy", "sudachidict_core", "torch", "transformers", "certifi"}
CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".dll", ".dylib")

# Uses each front end and both speaker encoders once, recording every file opened in site-packages.
_TRACE = textwrap.dedent(
    """
    import json, sys, sysconfig
    from pathlib import Path
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    opened = set()
    def audit(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)):
            path = Path(args[0] if isinstance(args[0], str) else args[0].decode()).resolve()
            if site in path.parents:
                opened.add(str(path.relative_to(site)))
    sys.addaudithook(audit)
    from voicedesk.core.text import phonemize
    for language, line in {"en": "Hello there, Zyxwort.", "ja": "こんにちは。", "zh": "你好。"}.items():
        phonemize(line, language)
    from voicedesk.core.engine import voices
    from voicedesk.core.text import kokoro_vocab
    voices.stock_voice_names(), kokoro_vocab()
    from voicedesk.core.engine import weights
    weights.expected_onnx_sha256()
    from voicedesk.core.clone import ge2e, judge
    import torch
    torch.load(ge2e.weights_path(), map_location="cpu")
    judge.Judge()
    print(json.dumps(sorted(opened)))
    """
)


def test_spec_collects_every_data_file_the_code_opens() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _TRACE], capture_output=True, text=True, timeout=300, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stderr
    opened = [p for p in json.loads(result.stdout.splitlines()[-1]) if not p.endswith(CODE_SUFFIXES)]
    runtime = spec_constant("RUNTIME_DATA")
    uncovered = []
    for rel in opened:
        package, _, inside = rel.partition("/")
        if ".dist-info" in package or package in STOCK_HOOK_DATA:
            continue
        root = package_root(package) if package in runtime else None
        if root is None or not any((root / inside) in set(root.glob(p)) for p in runtime[package]):
            uncovered.append(rel)
    assert not uncovered, f"opened at run time but not collected by the spec: {uncovered}"
    assert any(p.endswith("pretrained.pt") for p in opened)  # the trace itself worked


def load_entry() -> Any:
    spec = importlib.util.spec_from_file_location("voicedesk_entry", PACKAGING / "entry.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_entry_maps_the_self_test_flag_to_the_command() -> None:
    entry = load_entry()
    assert entry.frozen_argv(["--self-test", "--steps", "2"]) == ["self-test", "--steps", "2"]
    assert entry.frozen_argv([]) == []  # a double-click: the window
    assert entry.frozen_argv(["say", "--self-test"]) == ["say", "--self-test"]


def test_desktop_entry_names_the_executable_and_an_existing_icon() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(PACKAGING / "voicedesk.desktop", encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "VoiceDesk"
    assert (ROOT / "resources" / "icons" / f"{entry['Icon']}.svg").is_file()
    assert entry["Categories"].endswith(";")


def test_install_desktop_entry_quotes_a_path_with_spaces(tmp_path: Path) -> None:
    app = tmp_path / "My Apps" / "VoiceDesk"
    (app / "_internal").mkdir(parents=True)
    (app / "_internal" / "resources").symlink_to(ROOT / "resources")
    exe = app / "VoiceDesk"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    for name in ("voicedesk.desktop", "install-desktop-entry.sh"):
        (app / name).write_bytes((PACKAGING / name).read_bytes())
    data = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    subprocess.run(["bash", str(app / "install-desktop-entry.sh")], check=True, env=env, capture_output=True)
    installed = (data / "applications" / "voicedesk.desktop").read_text(encoding="utf-8")
    assert f'Exec="{exe}"' in installed
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / "voicedesk.png").is_file()


def test_sample_prompt_is_short_speech() -> None:
    import soundfile as sf

    info = sf.info(str(ROOT / "resources" / "sample-prompt.flac"))
    assert 2.5 <= info.duration <= 5.0
    assert info.channels == 1


@pytest.mark.slow
def test_self_test_from_source_passes_and_prints_its_summary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "voicedesk", "self-test", "--steps", "1", "--out", str(tmp_path / "out"),
         "--report", str(report), "--device", "cpu"],
        capture_output=True, text=True, timeout=1800, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary == json.loads(report.read_text(encoding="utf-8"))
    assert summary["ok"] is True and summary["frozen"] is False
    assert summary["device"] == "cpu"
    assert set(summary["timings_s"]) >= {"engine", "text", "prompt", "clone", "speak", "export", "window", "total"}
    assert all(summary["phonemes"][language] for language in ("en", "en-gb", "ja", "zh"))
    assert summary["clone"]["steps"] == 1 and summary["clone"]["envelope_map"] is True  # the words were typed
    assert summary["gui"]["platform"] == "offscreen" and summary["gui"]["title"]

    import soundfile as sf

    audio, rate = sf.read(summary["paths"]["wav"])
    assert rate == 24000
    assert abs(len(audio) / rate - summary["speech"]["seconds"]) < 0.02
    assert "self-test: clone" in result.stderr  # progress went to stderr, not into the JSON


def test_self_test_names_the_step_that_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this failure needs a machine without a usable CUDA device")
    from voicedesk.cli import main

    code = main(["self-test", "--device", "cuda", "--out", str(tmp_path), "--no-gui"])
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert code == 1
    assert summary["ok"] is False and summary["failed_step"] == "engine"
    assert "SELF-TEST FAILED at step 'engine'" in err
    assert not list(tmp_path.iterdir())  # nothing written
