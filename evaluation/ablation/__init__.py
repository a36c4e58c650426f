"""Ablation studies: experimental designs (``design``) and their statistics (``analysis``), pure functions."""
