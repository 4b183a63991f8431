"""`voicedesk doctor`: where VoiceDesk runs (GPU or CPU), why, and what to do about it.

Exits 0 with a report even when there is no GPU or no driver at all: a missing GPU is a finding.
`--summary` prints the one line the start-up script shows; `--json` the whole report as JSON;
`--self-test` adds the benchmark (cuDNN on/off, fp32/fp16 on a GPU; fp32 and threads on the CPU).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("doctor", help="GPU / CUDA / cuDNN report: which device VoiceDesk uses and why")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report as JSON")
    output.add_argument("--summary", action="store_true", help="print one line: GPU / CUDA / cuDNN / device")
    parser.add_argument("--self-test", action="store_true", help="also time the voice model on the chosen device")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per self-test variant (default 5 on a GPU, 3 on the CPU)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed warm-up runs per variant (default 2 on a GPU, 1 on the CPU)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from voicedesk.core.gpu import choose_device
    from voicedesk.core.gpu.summary import format_report, summary_line

    if (args.repeats is not None and args.repeats < 1) or (args.warmup is not None and args.warmup < 0):
        print("Error: --repeats must be at least 1 and --warmup at least 0.", file=sys.stderr)
        return 2
    choice = choose_device("auto")
    report = choice.report
    assert report is not None  # "auto" always probes
    if args.summary:
        print(summary_line(report))
        return 0

    self_test = None
    if args.self_test and report.torch.error:
        print("The self-test needs PyTorch, which could not be loaded; see the report.", file=sys.stderr)
    elif args.self_test:
        from voicedesk.core.gpu.selftest import run_self_test
        from voicedesk.core.gpu.workloads import default_workload

        workload = default_workload()
        self_test = run_self_test(
            workload, choice.device, warmup=args.warmup, repeats=args.repeats, progress=_progress
        )

    if args.json:
        document = {
            "summary": summary_line(report),
            "device": choice.to_dict(),
            "probe": report.to_dict(),
            "self_test": self_test.to_dict() if self_test else None,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0

    print(format_report(report))
    if self_test is not None:
        from voicedesk.core.gpu.selftest import format_self_test

        print()
        print(format_self_test(self_test))
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
