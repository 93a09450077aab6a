"""Ray: join a cluster, run one function over many shards, stream each shard's result back as it finishes.

Ray is imported here, and only when a call chose ``executor="ray"``. Each shard is one Ray task; the function
and what every shard shares travel once (``ray.put``, cloudpickle: closures and lambdas go by value, functions
of an importable module by name, so the workers must be able to import the user's code: docs/scale.md).
A task whose worker died (killed, out of memory, node lost) is submitted again by the caller, counted in the
``Ledger``, and its result is kept once; an exception raised by the function itself is the caller's, raised as
is (Ray's ``RayTaskError`` is also an instance of the original class, with the worker's traceback in it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument, InvalidArgumentType, ScaleError
from whileai_core.scale.shards import Ledger


def import_ray() -> Any:
    """The ``ray`` module, or a ``ScaleError`` that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise ScaleError("executor='ray' needs Ray, which is not installed: pip install 'pytest-whileai[ray]' "
                         "(or pass executor='local')") from None
    return ray


def connect(address: str | None = None) -> Any:
    """Join the Ray cluster at ``address`` ("ray://head:10001", "auto"), or, with None, the one this process
    already joined, else Ray's default (``RAY_ADDRESS``, a running local instance, or a new local one).

    Raises:
        ScaleError: Ray is not installed, or the cluster cannot be reached.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    try:
        ray.init(address=address)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = f"at {address!r}" if address else "(Ray's default: RAY_ADDRESS or a new local instance)"
        raise ScaleError(f"could not join the Ray cluster {where}: {type(exc).__name__}: {exc}. Start one with "
                         "`ray start --head` and pass ray_address='ray://<head>:10001' (or 'auto' on a node of "
                         "it)") from None
    return ray


def check_shippable(ray: Any, named: Mapping[str, Any]) -> None:
    """Refuse, naming the argument, anything the workers cannot receive (cloudpickle cannot serialize it).

    Raises:
        InvalidArgumentType: e.g. a backend object or a ``Cassette`` (each holds a lock and a connection pool);
            the message says what to pass instead.
    """
    for name, value in named.items():
        try:
            ray.cloudpickle.dumps(value)
        except Exception as exc:  # noqa: BLE001 - whatever cloudpickle raises, the fix is the same
            raise InvalidArgumentType(
                f"{name}= cannot be sent to the Ray workers ({type(exc).__name__}: {str(exc)[:160]}); pass what each "
                "worker can build for itself: a model string such as 'openai:gpt-4.1-mini' instead of a backend "
                "object, a function or an object without open connections, locks or files (docs/scale.md)") from None


def cluster_cpus(ray: Any) -> int:
    """The CPUs the cluster offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _call(fn: Callable[..., Any], payload: Any, slot: Any = None) -> Any:
    return fn(payload) if slot is None else fn(payload, slot)


def run_shards(fn: Callable[..., Any], payloads: Sequence[Any], *, address: str | None = None,
               on_result: Callable[[int, Any], None] | None = None, retries: int = D.SHARD_RETRIES,
               slots: Sequence[Any] | None = None) -> Ledger:
    """Run ``fn(payload)`` for every payload as one Ray task each; returns the ledger of their results.

    Args:
        fn: what each shard runs (shipped once to the cluster).
        payloads: one per shard; shard ``i`` is ``payloads[i]``.
        address: the cluster (see ``connect``).
        on_result: called on the caller as ``on_result(i, result)`` when shard ``i`` finishes, once per shard,
            in the order shards finish.
        retries: tries of a shard beyond its first when its worker dies (default ``defaults.SHARD_RETRIES``).
        slots: None (every shard submitted at once, ``fn(payload)``), or the slots shards run in: at most
            ``len(slots)`` shards run at once, each as ``fn(payload, slot)`` with the slot it holds, which passes
            to the next shard when it ends. A run's concurrency split over the slots is a cap that holds across
            the whole cluster (``RayRollouts``).

    Returns:
        The ``Ledger``: ``.in_order()`` gives the results, shard 0 first; ``.retried`` counts the extra tries.

    Raises:
        ScaleError: a shard's worker died on every try, or the cluster cannot be reached.
        InvalidArgument: ``slots`` given and empty.
        Exception: whatever ``fn`` raised on a worker (Ctrl-C cancels the shards still running).

    Example:
        >>> run_shards(len, [[1, 2], [3]]).in_order()  # doctest: +SKIP
        [2, 1]
    """
    if slots is not None and not slots:
        raise InvalidArgument("slots= must hold at least one slot (or be None: every shard at once)")
    ray = connect(address)
    task = ray.remote(max_retries=0)(_call)  # retried here, where each try is counted and kept once
    shared = ray.put(fn)
    ledger = Ledger(len(payloads), retries=retries)
    pending: dict[Any, tuple[int, Any]] = {}
    free = [None] * len(payloads) if slots is None else list(slots)
    waiting = list(range(len(payloads)))[::-1]  # popped from the end: shard 0 first

    def submit(i: int, slot: Any, why: str | None = None) -> None:
        ledger.start(i, why)
        pending[task.remote(shared, payloads[i], slot)] = (i, slot)

    try:
        while waiting and free:
            submit(waiting.pop(), free.pop(0))
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=D.RAY_WAIT_S)  # all that are done
            for ref in ready:
                i, slot = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # fn raised: the caller's error, not the cluster's
                    raise exc.as_instanceof_cause() from None
                except ray.exceptions.RayError as exc:  # the worker or its node died: try the shard again
                    submit(i, slot, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                    continue
                if waiting:  # the slot passes on before the result is handled: the cluster stays busy
                    submit(waiting.pop(), slot)
                if ledger.accept(i, result) and on_result is not None:
                    on_result(i, result)
    except BaseException:
        for ref in pending:  # nothing left running on the cluster for a run that stopped
            ray.cancel(ref, force=True)
        raise
    return ledger
