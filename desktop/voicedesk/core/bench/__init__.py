"""`voicedesk bench`: how fast VoiceDesk speaks, clones and loads on this machine, measured after warm-up.

Modules: `run` (the measurements and their summary), `onnx_kokoro` (the same int8 Kokoro in ONNX
Runtime, the CPU yardstick), `prompt` (a 3 s prompt as raw samples, without soundfile where possible),
`system` (versions, memory peaks). Nothing here imports torch, Qt or the sound libraries at import time.
"""
