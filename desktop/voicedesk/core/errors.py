"""Errors meant for the user: one sentence that says what happened and what to do."""


class VoiceDeskError(Exception):
    """A failure the user can act on. `str(err)` is shown as is, so write it as advice."""


class InputError(VoiceDeskError):
    """The user's input (audio, text, a file) cannot be used."""


class ModelError(VoiceDeskError):
    """Model weights are missing, damaged or cannot be loaded."""


class Cancelled(VoiceDeskError):
    """A job was cancelled by the user; nothing was saved."""

    def __init__(self, message: str = "Cancelled; nothing was saved.") -> None:
        super().__init__(message)
