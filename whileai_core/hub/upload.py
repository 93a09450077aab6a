"""The Hugging Face Hub: push a training file, rows or an adapter folder (the SDK's ``wai.hub`` and
``export(push_to=)``).

``push(source, repo_id)`` sends a file or a list of rows (written as ``train.jsonl``) to a dataset repo, and a
folder holding ``adapter_config.json`` (a PEFT adapter) to a model repo. It calls ``huggingface_hub``'s
``create_repo(exist_ok=True)`` then ``upload_file`` or ``upload_folder``, and never contacts the While platform.
The token is ``token=``, else ``HF_TOKEN``, else huggingface_hub's cached login. The Hub's address is
huggingface_hub's (``HF_ENDPOINT``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType, MissingExtra

INSTALL_HINT = "pip install 'pytest-whileai[hf]'  (huggingface_hub)"
ADAPTER_MARKER = "adapter_config.json"  # a folder holding it is a PEFT adapter: a model repo


def repo_type_of(source: Any) -> str:
    """``"model"`` for a folder holding ``adapter_config.json`` (an adapter), ``"dataset"`` for anything else."""
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return "model" if (Path(source) / ADAPTER_MARKER).is_file() else "dataset"
    return "dataset"


def _api() -> Any:
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise MissingExtra(f"pushing to the Hugging Face Hub needs huggingface_hub, which is not installed: "
                           f"{INSTALL_HINT}") from None
    return HfApi()


def _checked_source(source: Any) -> Path | list[Any]:
    """The source as a path that exists, or as a list of rows; errors before any call to the Hub."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"hub.push: {str(path)!r} does not exist (a file, a folder, or a list of rows)")
        return path
    rows = getattr(source, "rows", source)
    if isinstance(rows, (list, tuple)) and all(isinstance(r, dict) for r in rows):
        return list(rows)
    raise InvalidArgumentType(f"hub.push: source is a file, a folder or a list of rows; got {type(source).__name__}")


def push(source: Any, repo_id: str, *, token: str | None = None, private: bool = True) -> dict[str, Any]:
    """Push a file, rows or an adapter folder to the Hugging Face Hub.

    Args:
        source: a file (a dataset repo gets it under its name), a list of rows (written as ``train.jsonl``), or a
            folder (an adapter folder, with ``adapter_config.json``, goes to a model repo; another folder to a
            dataset repo).
        repo_id: ``"namespace/name"``.
        token: a Hub token; default ``HF_TOKEN``, else huggingface_hub's cached login.
        private: create the repo private (default True); an existing repo is kept as it is.

    Returns:
        ``{repo_id, repo_type, url, commit, files, private}``.

    Raises:
        InvalidArgument: a ``repo_id`` without a slash (before any call).
        FileNotFoundError: a path that does not exist (before any call).
        MissingExtra: huggingface_hub is not installed (an ``ImportError`` naming the install line).

    Example:
        ```python
        wai.hub.push("train.jsonl", "me/orders-sft")
        ```
    """
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise InvalidArgument(f"hub.push: repo_id is 'namespace/name' (one slash); got {repo_id!r}")
    checked = _checked_source(source)
    api = _api()
    token = token if token is not None else os.environ.get("HF_TOKEN")
    repo_type = repo_type_of(checked) if isinstance(checked, Path) else "dataset"
    url = api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True, token=token)
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(checked, list):
            path = Path(tmp) / "train.jsonl"
            path.write_text("".join(json.dumps(r, default=str) + "\n" for r in checked), encoding="utf-8")
        else:
            path = checked
        if path.is_dir():
            files = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
            info = api.upload_folder(folder_path=str(path), repo_id=repo_id, repo_type=repo_type, token=token,
                                     commit_message="whileai: push")
        else:
            files = [path.name]
            info = api.upload_file(path_or_fileobj=str(path), path_in_repo=path.name, repo_id=repo_id,
                                   repo_type=repo_type, token=token, commit_message="whileai: push")
    return {"repo_id": repo_id, "repo_type": repo_type, "url": str(url), "commit": getattr(info, "oid", None),
            "files": files, "private": private}
