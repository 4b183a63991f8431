"""Real faults on a real GPU, each in a fresh process, and what the probe makes of them (JSON on stdout).

Run on a GPU machine from the repository root with PYTHONPATH=desktop. The drills: every GPU hidden by
CUDA_VISIBLE_DEVICES, a per-process memory limit so small the check runs out of memory, cuDNN off.
"""

import json
import subprocess
import sys

DRILLS = {
    "hidden": "import os; os.environ['CUDA_VISIBLE_DEVICES'] = ''",
    "oom": "import torch; torch.cuda.set_per_process_memory_fraction(1e-7)",
    "cudnn_off": "import torch; torch.backends.cudnn.enabled = False",
}
BODY = """
from voicedesk.core.gpu.probe import probe
from voicedesk.core.gpu.summary import summary_line
import json
r = probe()
print(json.dumps({"summary": summary_line(r), "check": r.check.to_dict(),
  "findings": [d.to_dict() for d in r.diagnoses if d.state.value != "ok"]}))
"""
out = {}
for name, setup in DRILLS.items():
    p = subprocess.run([sys.executable, "-c", setup + "\n" + BODY], capture_output=True, text=True, timeout=120)
    try:
        out[name] = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out[name] = {"rc": p.returncode, "stdout": p.stdout[-2000:], "stderr": p.stderr[-2000:]}
print(json.dumps(out, indent=2, ensure_ascii=False))
