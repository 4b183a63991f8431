"""Small custom widgets: the waveform with trim handles and the input level meter."""
