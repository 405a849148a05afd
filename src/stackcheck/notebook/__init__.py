"""Jupyter kernels: register one that runs this environment, check what kernels really run."""
