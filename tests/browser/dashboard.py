"""The dashboard as one person sees it: a browser context of their own, signed in by the
page's `#token=` link (or as a visitor), with a screenshot of each step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role
from tests.e2e.app_process import AppServer

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


class Camera:
    """Numbered screenshots of one test, in the order taken."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def take(self, page: Any, who: str, step: str) -> None:
        self.count += 1
        page.screenshot(path=str(self.folder / f"{self.count:02d}-{who}-{step}.png"),
                        full_page=True)


def token_for(role: str, user: str, tenant: str = "demo") -> str:
    return issue_token(Principal(tenant, user, frozenset({Role(role)}), Channel.DASHBOARD))


class Dashboard:
    """One person's page. `role=None` is a visitor (no token)."""

    def __init__(self, browser: Any, server: AppServer, camera: Camera, who: str,
                 role: str | None, user: str | None = None, viewport: dict[str, int] | None = None,
                 ) -> None:
        self.who = who
        self.camera = camera
        self.context = browser.new_context(viewport=viewport or DESKTOP)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", self._console)
        if role is None:
            self.page.goto(f"{server.url}/")
        else:
            self.page.goto(f"{server.url}/#token={token_for(role, user or who)}")

    def _console(self, message: Any) -> None:
        # an API answering 4xx is logged by the browser itself; the page shows those kindly
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(message.text)

    def shot(self, step: str) -> None:
        self.camera.take(self.page, self.who, step)

    def ask(self, message: str) -> None:
        self.page.get_by_label("Message").fill(message)
        self.page.get_by_role("button", name="Send", exact=True).click()

    @property
    def turns(self) -> Any:
        return self.page.locator(".turn")

    def card(self, text: str) -> Any:
        """The inbox card whose summary mentions `text`."""
        return self.page.locator(".card", has_text=text)

    def close(self) -> list[str]:
        """Close the browser context; the page's script errors, if any."""
        self.context.close()
        return self.errors
