"""VoiceDesk: clone a voice locally and speak any line in it."""

__version__ = "0.1.0"
