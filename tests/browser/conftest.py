"""Browser tests of the dashboard: Debian's chromium driven by Playwright, against the app in
a real process (the e2e `server` fixture: loopback port, scripted model, the real embedded
store). Playwright's own browser download cannot work here, so the system chromium is
launched by path; without it the tests are skipped, saying why (`make test` installs it
through .ci/run on CI).

Each test saves a screenshot of every step under build/screenshots/<test>/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.dashboard import Camera
from tests.conftest import ROOT
from tests.e2e.conftest import http, ranker_cache, server  # noqa: F401  (fixtures reused)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "build" / "screenshots"
WAIT_MS = 60_000
"""How long a locator waits for the page to catch up (an upper bound, not a measure: the
runs behind it share two cores with the rest of the suite)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real browser (chromium) against "
                                       "a real server process")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is missing: install Debian's chromium "
                                   "(apt-get install chromium) to run the browser tests")
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless chromium per test module. Not per session: Playwright's sync API keeps
    an event loop running on the main thread while it is open, and a later test in the same
    worker that calls asyncio.run() then fails ("cannot be called from a running event
    loop"); a module's fixture ends before the worker moves on to another module."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def camera(request: pytest.FixtureRequest) -> Camera:
    """This test's screenshots, in build/screenshots/<test>/ (emptied first)."""
    folder = SCREENSHOTS / re.sub(r"[^\w.-]+", "_", request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    return Camera(folder)
