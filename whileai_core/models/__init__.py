"""Models: the backends that reach a model, their configuration, the record/replay cache, a local model.
"""
