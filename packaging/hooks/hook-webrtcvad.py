"""webrtcvad comes from the `webrtcvad-wheels` distribution, whose metadata the stock hook cannot find."""

from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("webrtcvad-wheels")
