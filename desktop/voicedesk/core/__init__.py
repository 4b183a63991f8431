"""Qt-free heart of VoiceDesk: audio, engine, cloning, GPU status and the voice library."""
