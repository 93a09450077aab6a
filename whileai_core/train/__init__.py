"""Train: trainer-ready exports, TRL formats, environments, training, the holdout and the proof.
"""
