"""A pytest plugin that runs scipy's own filter tests against memhier.ndimage: every function the
two modules share is replaced in scipy.ndimage by memhier's before scipy's test file is imported.

    python -m pytest -p scipy_swap --pyargs scipy.ndimage.tests.test_filters

(with python/tests on sys.path). Each test's outcome is classed, and with MEMHIER_SCIPY_SWAP_OUT
set the classes and the tests are written there as JSON:
  untouched  the test called no memhier function
  passed     it called one and passed (or failed as scipy's own marks expect: xfail)
  refused    it failed on memhier's refusal of what it was given: memhier.Unsupported, or the
             TypeError memhier raises for an input kind it does not take (a list)
  failed     it failed otherwise: a wrong answer, or another exception than scipy's
Where hypothesis (scipy's test dependency) is not installed, or MEMHIER_SCIPY_SWAP_NO_HYPOTHESIS
is set, its property tests are skipped.
"""
import functools
import json
import os
import sys
import types

import pytest

_calls = {"count": 0}
_outcomes = {}


def _counted(function):
    @functools.wraps(function)
    def call(*args, **kwargs):
        _calls["count"] += 1
        return function(*args, **kwargs)

    return call


def _swap():
    """scipy.ndimage's names that memhier.ndimage also defines, memhier's put in their place
    (counted); the names swapped."""
    import scipy.ndimage
    import memhier.ndimage as mnd
    names = sorted(n for n in dir(mnd)
                   if not n.startswith("_") and callable(getattr(mnd, n)) and hasattr(scipy.ndimage, n)
                   and not isinstance(getattr(mnd, n), type))
    try:  # scipy's array-API test marks look each tested function up in this table
        from scipy._lib._array_api import xp_capabilities_table as table
    except ImportError:
        table = {}
    for name in names:
        original, swapped = getattr(scipy.ndimage, name), _counted(getattr(mnd, name))
        if original in table:
            table[swapped] = table[original]
        setattr(scipy.ndimage, name, swapped)
    return names


class _Placeholder:
    """Any attribute, any call; as a decorator of a function, that function unchanged."""

    def __getattr__(self, name):
        return _Placeholder()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], types.FunctionType):
            return args[0]
        return _Placeholder()

    def __iter__(self):
        return iter(())


def _stub_hypothesis():
    """Stand-ins for hypothesis where it is not installed: @given marks the test skipped; the rest
    (strategies, settings, the profiles scipy's conftest registers) are placeholders."""
    def given(*args, **kwargs):
        return pytest.mark.skip(reason="hypothesis is not installed")

    modules = {name: types.ModuleType(name)
               for name in ("hypothesis", "hypothesis.strategies", "hypothesis.extra", "hypothesis.extra.numpy")}
    for module in modules.values():
        module.__getattr__ = lambda attr: _Placeholder()
    modules["hypothesis"].given = given
    modules["hypothesis"].strategies = modules["hypothesis.strategies"]
    modules["hypothesis"].extra = modules["hypothesis.extra"]
    modules["hypothesis.extra"].numpy = modules["hypothesis.extra.numpy"]
    sys.modules.update(modules)


def pytest_configure(config):
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        _stub_hypothesis()
    config._memhier_swapped = _swap()


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("MEMHIER_SCIPY_SWAP_NO_HYPOTHESIS"):
        return
    skip = pytest.mark.skip(reason="MEMHIER_SCIPY_SWAP_NO_HYPOTHESIS: the same tests wherever it runs")
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(skip)


def _refusal(excinfo):
    """Whether the exception is memhier refusing its input: Unsupported, or a TypeError raised in
    memhier's own code."""
    from memhier import Unsupported
    if excinfo.errisinstance(Unsupported):
        return True
    if not excinfo.errisinstance(TypeError):
        return False
    return "memhier" in str(excinfo.traceback[-1].path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _calls["count"] = 0
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if call.when != "call":
        if report.failed:  # a setup or teardown error
            _outcomes[item.nodeid] = ("failed", f"{call.when}: {report.longreprtext.splitlines()[-1:]}")
        return
    if _calls["count"] == 0:
        _outcomes[item.nodeid] = ("untouched", "")
    elif report.passed or hasattr(report, "wasxfail"):
        _outcomes[item.nodeid] = ("passed", "")
    elif report.skipped:
        _outcomes[item.nodeid] = ("untouched", "skipped")
    else:
        message = str(call.excinfo.value).splitlines()[0][:300] if call.excinfo else report.longreprtext[-300:]
        kind = "refused" if call.excinfo and _refusal(call.excinfo) else "failed"
        _outcomes[item.nodeid] = (kind, f"{call.excinfo.typename if call.excinfo else ''}: {message}")


def pytest_sessionfinish(session, exitstatus):
    counts = {}
    for kind, _ in _outcomes.values():
        counts[kind] = counts.get(kind, 0) + 1
    path = os.environ.get("MEMHIER_SCIPY_SWAP_OUT")
    if path:
        with open(path, "w") as f:
            json.dump({"swapped": session.config._memhier_swapped, "counts": counts,
                       "tests": {k: list(v) for k, v in sorted(_outcomes.items())}}, f, indent=1)


def pytest_terminal_summary(terminalreporter):
    counts = {}
    for kind, _ in _outcomes.values():
        counts[kind] = counts.get(kind, 0) + 1
    terminalreporter.write_line("memhier.ndimage in scipy's tests: " +
                                ", ".join(f"{k} {counts.get(k, 0)}" for k in ("passed", "refused", "failed", "untouched")))
