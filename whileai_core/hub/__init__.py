"""The Hugging Face Hub (the SDK's ``wai.hub``): ``push`` a training file, rows or an adapter folder
(``hub/upload.py``; ``export(push_to=)`` calls it). It never contacts the While platform (that is ``platform/``)."""

from whileai_core.hub.upload import ADAPTER_MARKER, INSTALL_HINT, push, repo_type_of

__all__ = ["ADAPTER_MARKER", "INSTALL_HINT", "push", "repo_type_of"]
