"""The While platform client: everything that talks to the hosted While service lives here and nowhere else.

Sign in (``login``, the RFC 8628 device flow), push and pull datasets (``push``, ``pull``, ``datasets``), train
on the platform after a pre-flight selection check (``train``, ``runs``, ``run``), serve a trained run
(``serve``), and track your own agent (``track``). Checked against a loopback fake of the routes
(tests/platform/fake_platform.py), not against the live service.
"""

from whileai_core.platform.auth import Login, account, login, logout
from whileai_core.platform.client import Client
from whileai_core.platform.credentials import credentials_path
from whileai_core.platform.datasets import Dataset, datasets, pull, push
from whileai_core.platform.track import Tracked, TrackedRun, track
from whileai_core.platform.training import Run, ServedModel, preflight, run, runs, serve, train

__all__ = ["Client", "Dataset", "Login", "Run", "ServedModel", "Tracked", "TrackedRun", "account",
           "credentials_path", "datasets", "login", "logout", "preflight", "pull", "push", "run", "runs", "serve",
           "track", "train"]
