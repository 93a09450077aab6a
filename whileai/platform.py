"""``whileai.platform``: the client of the hosted While service (engine: ``whileai_core.platform``).

Imported on its own (``from whileai import platform``), so ``import whileai`` never loads httpx for it.
"""

from whileai_core.errors import LoginError, PlatformError, TrainingSelectionError
from whileai_core.platform import (
    Client,
    Dataset,
    Login,
    Run,
    ServedModel,
    Tracked,
    TrackedRun,
    account,
    credentials_path,
    datasets,
    login,
    logout,
    preflight,
    pull,
    push,
    run,
    runs,
    serve,
    track,
    train,
)

__all__ = ["Client", "Dataset", "Login", "LoginError", "PlatformError", "Run", "ServedModel", "Tracked",
           "TrackedRun", "TrainingSelectionError", "account", "credentials_path", "datasets", "login", "logout",
           "preflight", "pull", "push", "run", "runs", "serve", "track", "train"]
