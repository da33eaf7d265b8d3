"""Which plotly.js the dashboard serves: plotly.js's own cartesian bundle (1.5 MB: scatter, bar
and heatmap, all the page draws) when the set-up fetched it, else the full bundle (4.8 MB) that
Plotly's Python package ships. Both work offline once installed; the cartesian one takes about
half as long to evaluate (benchmarks/dashboard.py), which is most of a cold page load.

``python -m msagent.dashboard.assets`` (run by ``scripts/setup.sh``) fetches the cartesian bundle
once from the npm registry, pinned by version and checked against the registry's sha512
integrity, into ``static/vendor/`` beside the page (git-ignored; never committed).
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

CARTESIAN_VERSION = "4.1.1"
CARTESIAN_URL = ("https://registry.npmjs.org/plotly.js-cartesian-dist-min/-/"
                 f"plotly.js-cartesian-dist-min-{CARTESIAN_VERSION}.tgz")
CARTESIAN_SHA512 = ("o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/"
                    "Z6w4P5O0Jus/Qr5EefHVeg==")
MEMBER = "package/plotly-cartesian.min.js"
VENDOR = Path(__file__).with_name("static") / "vendor"
CARTESIAN_FILE = VENDOR / f"plotly-cartesian-{CARTESIAN_VERSION}.min.js"


def full_bundle() -> Path:
    """The full plotly.js shipped inside Plotly's Python package."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def plotly_js() -> Path:
    """The bundle to serve: the fetched cartesian one if present, else the full one."""
    return CARTESIAN_FILE if CARTESIAN_FILE.is_file() else full_bundle()


def fetch_cartesian(timeout_s: float = 60.0) -> Path:
    """Download, check and unpack the pinned cartesian bundle (a no-op when already there).

    Raises:
        OSError: The registry could not be reached.
        ValueError: The download does not match the pinned integrity.
    """
    if CARTESIAN_FILE.is_file():
        return CARTESIAN_FILE
    with urllib.request.urlopen(CARTESIAN_URL, timeout=timeout_s) as response:  # noqa: S310
        data = response.read()
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != CARTESIAN_SHA512:
        raise ValueError(f"{CARTESIAN_URL} does not match its pinned sha512 integrity")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        script = archive.extractfile(MEMBER)
        if script is None:
            raise ValueError(f"{CARTESIAN_URL} holds no {MEMBER}")
        body = script.read()
    VENDOR.mkdir(exist_ok=True)
    tmp = CARTESIAN_FILE.with_suffix(".tmp")
    tmp.write_bytes(body)
    tmp.replace(CARTESIAN_FILE)
    return CARTESIAN_FILE


if __name__ == "__main__":
    try:
        print(f"[setup] dashboard charts: {fetch_cartesian()}")
    except (OSError, ValueError) as exc:
        print(f"[setup] warning: the dashboard will serve the full plotly.js ({exc})",
              file=sys.stderr)
