"""Access to the `kokoro` package's model code without running `kokoro/__init__.py`.

That `__init__` imports Kokoro's text pipeline (misaki, spaCy, hub downloads), none of which VoiceDesk
installs or wants. The model code lives in `kokoro.modules` and `kokoro.istftnet`, which only need torch
and transformers; registering a bare package object for `kokoro` lets Python import them directly.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

from voicedesk.core.errors import ModelError

INSTALL_HINT = "pip install --no-deps kokoro==0.9.4"


def _ensure_bare_package() -> None:
    if "kokoro" in sys.modules:
        return
    spec = importlib.util.find_spec("kokoro")  # locates the package without executing it
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"The Kokoro model code is missing; install it with `{INSTALL_HINT}`.")
    package = types.ModuleType("kokoro")
    package.__path__ = list(spec.submodule_search_locations)
    package.__package__ = "kokoro"
    sys.modules["kokoro"] = package


def load() -> tuple[Any, Any]:
    """Return the `kokoro.modules` and `kokoro.istftnet` modules."""
    _ensure_bare_package()
    try:
        modules = importlib.import_module("kokoro.modules")
        istftnet = importlib.import_module("kokoro.istftnet")
    except ImportError as exc:
        raise ModelError(
            f"The Kokoro model code could not be imported ({exc}); reinstall it with `{INSTALL_HINT}` "
            "and make sure `transformers` and `attrs` are installed."
        ) from exc
    return modules, istftnet
