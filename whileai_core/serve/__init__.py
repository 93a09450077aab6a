"""Serve: a trained checkpoint behind an OpenAI-compatible server (``transformers serve`` or vLLM), as a handle.
"""
