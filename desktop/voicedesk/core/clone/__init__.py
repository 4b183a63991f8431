"""Voice cloning by style-fit: speaker encoders, the fit itself and its quality report.

Modules: `ge2e` (differentiable encoder the fit optimises), `judge` (independent encoder that scores
it), `fit` (the fit as a cancellable generator), `report` (percentages and verdict), `pitch`, `mel`.
"""
