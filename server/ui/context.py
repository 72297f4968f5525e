"""What the UI's pages share: its own in-process tool session over the served engine and model,
the CSRF secret, the ingest jobs and the templates."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel

from scoperag.server.profiles import declarations
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES
from scoperag.server.ui.words import install

if TYPE_CHECKING:
    from fastmcp.tools import Tool

    from scoperag.core.config.settings import Settings
    from scoperag.server.profiles.declaration import Profile
    from scoperag.server.tool_session import ProgressHandler, ToolSession

UPLOADS = "ui-uploads"  # the data dir's folder that uploads are written to


def ui_settings(settings: Settings) -> Settings:
    """The settings the UI's tools run under: SCOPERAG_ALLOWED_DIRS plus the upload folder and
    the bundled samples (what the UI itself offers to ingest)."""
    extra = [settings.data_dir / UPLOADS, SAMPLES]
    return settings.model_copy(update={"allowed_dirs": [*settings.allowed_dirs, *extra]})


class SharedRuntime(Runtime):
    """The UI's runtime: the engine and model of `base` (never closed here), its own settings."""

    def __init__(self, base: Runtime, settings: Settings) -> None:
        super().__init__(settings)
        self._base = base

    @property
    def backend(self) -> Any:  # type: ignore[override]
        return self._base.backend

    @property
    def embedder(self) -> Any:  # type: ignore[override]
        return self._base.embedder

    def close(self) -> None:
        """The engine is `base`'s: its owner closes it."""


class UiContext:
    """One UI: tools called through an in-process MCP session (same validation and errors as
    any client), opened on first use."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = SharedRuntime(runtime, ui_settings(runtime.settings))
        self.settings = runtime.settings
        self.csrf = secrets.token_urlsafe(32)
        self.templates = Environment(
            loader=PackageLoader("scoperag.server.ui", "templates"),
            autoescape=select_autoescape(["html"]),
        )
        install(self.templates)
        self._session: ToolSession | None = None
        self._lock = threading.Lock()
        self.uploads = self.settings.data_dir / UPLOADS

    @property
    def session(self) -> ToolSession:
        with self._lock:
            if self._session is None:
                from scoperag.server.mcp.app import build_server
                from scoperag.server.tool_session import ToolSession

                self._session = ToolSession(build_server(self.runtime), progress=False)
            return self._session

    @property
    def tools(self) -> dict[str, Tool]:
        return self.session.tools

    def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressHandler | None = None
    ) -> Any:
        """Call `tool` as an MCP client would: its result as JSON-ready data, or
        `ToolCallError` with the tool's message."""
        result = self.session.call(tool, arguments, progress)
        return result.model_dump(mode="json") if isinstance(result, BaseModel) else result

    def profiles(self) -> list[Profile]:
        return declarations(self.settings.profiles)

    def profile(self, name: str) -> Profile:
        """An enabled profile, or `InvalidParameterError` naming those served."""
        from scoperag.core.errors import InvalidParameterError

        for profile in self.profiles():
            if profile.name == name:
                return profile
        served = ", ".join(p.name for p in self.profiles())
        raise InvalidParameterError("profile", name, served)

    def profile_tools(self, profile: Profile) -> dict[str, Tool]:
        """Tool name -> tool, for the tools the profile's declaration names that are served."""
        tools = self.tools
        return {name: tools[name] for name in profile.methods.values() if name in tools}

    def render(self, template: str, **values: Any) -> str:
        page = self.templates.get_template(template)
        return page.render(csrf=self.csrf, profiles=self.profiles(), **values)

    def allowed_dirs(self) -> list[Path]:
        return list(self.runtime.settings.allowed_dirs)

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None
