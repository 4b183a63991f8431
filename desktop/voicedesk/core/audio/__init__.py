"""Audio without Qt: prompt intake and validation, resampling, atomic export, devices, recorder, player.

Nothing here imports sounddevice at module import time, so the core stays importable on machines
without PortAudio (servers, the GPU box); the device modules import it when first used.
"""
