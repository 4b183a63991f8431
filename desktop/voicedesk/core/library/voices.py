"""The voice library: saved voices as `.vdvoice` files, one per voice, in the user's voices folder.

The file name is the voice's identity (`NAME.vdvoice`); names are unique regardless of letter case,
because Windows and macOS file systems are case-insensitive. Every write replaces a whole file
atomically; deleted voices move to `.trash/` rather than vanishing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes
from voicedesk.core.audio.export import explain_write_error
from voicedesk.core.errors import InputError
from voicedesk.core.library import voicefile
from voicedesk.core.library.names import MAX_NAME_LENGTH, check_name
from voicedesk.core.library.scan import Problem, Scan, remove_stale_temp_files
from voicedesk.core.library.voicefile import SUFFIX, SavedVoice

TRASH = ".trash"


class VoiceLibrary:
    """Saved voices under `root` (default: the user's voices folder).

    `reserved_names` (the stock voices) cannot be taken by saved voices, so a name always means one voice.
    """

    def __init__(self, root: Path | None = None, reserved_names: Iterable[str] = ()) -> None:
        self.root = Path(root) if root is not None else paths.voices_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        self.reserved = {name.lower() for name in reserved_names}
        remove_stale_temp_files(self.root)

    # -- reading -------------------------------------------------------------------------------
    def scan(self) -> Scan[SavedVoice]:
        """All readable voices sorted by name; damaged files are reported in `problems`, never raised."""
        result: Scan[SavedVoice] = Scan()
        for path in sorted(self.root.glob(f"*{SUFFIX}"), key=lambda p: p.stem.lower()):
            if path.name.startswith("."):
                continue
            try:
                name = check_name(path.stem)
                result.items.append(replace(voicefile.read_file(path), name=name))
            except InputError as exc:
                result.problems.append(Problem(path, f"{exc} (skipped; move or delete {path.name})"))
        return result

    def names(self) -> list[str]:
        return [voice.name for voice in self.scan().items]

    def exists(self, name: str) -> bool:
        return self._find(name) is not None

    def load(self, name: str) -> SavedVoice:
        path = self._find(name)
        if path is None:
            raise InputError(f"There is no saved voice named {name!r}; `voicedesk voices` lists them.")
        return replace(voicefile.read_file(path), name=path.stem)

    # -- writing -------------------------------------------------------------------------------
    def save(self, voice: SavedVoice, *, overwrite: bool = False) -> SavedVoice:
        """Store `voice` under its name; refuses to replace another voice unless `overwrite`."""
        voice = voicefile.check_voice(voice)
        self._check_free(voice.name, allow_existing=overwrite)
        existing = self._find(voice.name)
        self._write(existing or self._path(voice.name), voice)
        return voice

    def rename(self, old: str, new: str) -> SavedVoice:
        voice = self.load(old)
        old_path = self._path(voice.name)
        check_name(new)
        same_voice = new.lower() == voice.name.lower()
        if not same_voice:
            self._check_free(new)
        renamed = replace(voice, name=new)
        if same_voice:  # only the letter case changes: rewrite in place, then rename the file
            self._write(old_path, renamed)
            os.replace(old_path, self._path(new))
            return renamed
        # New file first, old one second: a crash in between leaves two copies, never none.
        self._write(self._path(new), renamed)
        old_path.unlink()
        return renamed

    def delete(self, name: str) -> Path:
        """Move the voice to the trash folder; returns where it went."""
        path = self._find(name)
        if path is None:
            raise InputError(f"There is no saved voice named {name!r}; `voicedesk voices` lists them.")
        trash = self.root / TRASH
        trash.mkdir(exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        target = trash / f"{path.stem}-{stamp}{SUFFIX}"
        os.replace(path, target)
        return target

    def export(self, name: str, destination: str | os.PathLike[str]) -> Path:
        """Write the voice to one `.vdvoice` file (suffix added when missing), atomically."""
        voice = self.load(name)
        target = Path(destination)
        if target.is_dir():
            target = target / f"{voice.name}{SUFFIX}"
        elif target.suffix.lower() != SUFFIX:
            target = target.with_name(target.name + SUFFIX)
        data = voicefile.encode(voice)
        try:
            atomic_write_bytes(target, data)
        except OSError as exc:
            raise explain_write_error(exc, target) from exc
        return target

    def import_file(
        self, source: str | os.PathLike[str], *, name: str | None = None, rename_on_clash: bool = False
    ) -> SavedVoice:
        """Add a voice from a `.vdvoice` file; a damaged file raises and leaves the library untouched.

        The voice keeps its stored name unless `name` is given. On a name clash, `rename_on_clash`
        picks `NAME-2`, `NAME-3`, … instead of raising.
        """
        voice = voicefile.read_file(Path(source))
        wanted = check_name(name) if name is not None else voice.name
        if rename_on_clash:
            wanted = self._free_variant(wanted)
        else:
            self._check_free(wanted, hint_import=True)
        voice = replace(voice, name=wanted)
        self._write(self._path(wanted), voice)
        return voice

    # -- helpers -------------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.root / f"{name}{SUFFIX}"

    def _find(self, name: str) -> Path | None:
        """The file of voice `name`, matched regardless of letter case."""
        if not isinstance(name, str) or not name:
            return None
        matches = [p for p in self.root.glob(f"*{SUFFIX}") if p.stem.lower() == name.lower()]
        exact = [p for p in matches if p.stem == name]
        found = exact or matches
        return found[0] if found else None

    def _check_free(self, name: str, *, allow_existing: bool = False, hint_import: bool = False) -> None:
        check_name(name)
        if name.lower() in self.reserved:
            raise InputError(f"{name!r} is the name of a stock voice; choose another, e.g. {self._free_variant(name)!r}.")
        if not allow_existing and self._find(name) is not None:
            how = " (import with --name to pick another)" if hint_import else ""
            raise InputError(
                f"A voice named {name!r} already exists{how}; choose another name, e.g. {self._free_variant(name)!r}."
            )

    def _free_variant(self, name: str) -> str:
        taken = {p.stem.lower() for p in self.root.glob(f"*{SUFFIX}")} | self.reserved
        if name.lower() not in taken:
            return name
        for number in range(2, 10_000):
            candidate = f"{name[: MAX_NAME_LENGTH - 5]}-{number}"
            if candidate.lower() not in taken:
                return candidate
        raise InputError(f"Too many voices named like {name!r}; choose another name.")

    def _write(self, path: Path, voice: SavedVoice) -> None:
        data = voicefile.encode(voice)
        try:
            atomic_write_bytes(path, data)
        except OSError as exc:
            raise explain_write_error(exc, path) from exc

