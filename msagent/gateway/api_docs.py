"""The gateway's interactive API docs (``[gateway] docs = true``): Swagger UI at ``/docs``,
its scripts and styles served by the gateway itself from the ``swagger-ui-bundle`` package.

FastAPI's default page loads them from a CDN: a page of the gateway would then run scripts
from a third party, and break where the gateway runs offline.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS = "/docs/assets"
"""Where Swagger UI's files are served."""


def add_api_docs(app: FastAPI) -> None:
    """``GET /docs`` (the page) and its assets, all from this server."""
    from swagger_ui_bundle import swagger_ui_path

    app.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        """Swagger UI over the gateway's OpenAPI document."""
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png")
