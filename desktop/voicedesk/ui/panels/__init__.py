"""The window's panels, one per step of the flow (prompt, clone, speak, takes) plus the voice library."""
