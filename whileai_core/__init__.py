"""The whileai engine: simulate, grade, measure, select, guard, export, train.

Never imports pytest. Modules are imported on demand; ``whileai`` is the public facade.
"""

import functools

#: the distribution name on the package index (the import names are whileai, whileai_core, pytest_whileai)
DISTRIBUTION = "pytest-whileai"
#: the name this project was installed under before it took the pytest convention (an editable install made
#: then still reports it); trusted only if that distribution is this one (it registers the pytest_whileai plugin)
_FORMER_DISTRIBUTION = "whileai"


@functools.lru_cache(maxsize=None)
def distribution_version(names: tuple[str, ...] = (DISTRIBUTION, _FORMER_DISTRIBUTION)) -> str:
    """The installed version of this project, or ``"0.0.0"`` for an uninstalled source tree.

    An unrelated distribution that happens to share a former name (``whileai`` on the public index is another
    project) is never taken for this one: a former name counts only if it registers ``pytest_whileai``.
    Read from the installed metadata once per process (every run document and simulated row stamps it).
    """
    from importlib.metadata import PackageNotFoundError, distribution

    for name in names:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        if name == DISTRIBUTION or any(ep.group == "pytest11" and ep.value.startswith("pytest_whileai")
                                       for ep in dist.entry_points):
            return str(dist.version)
    return "0.0.0"
