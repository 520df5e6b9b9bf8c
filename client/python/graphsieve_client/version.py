"""graphsieve-client's version: graphsieve's one version string, project(VERSION)
in the repository's CMakeLists.txt. Installed, it is the version the build
backend read from there into the package's metadata; run from a checkout
(PYTHONPATH=client/python), it is read from the checkout's CMakeLists.txt."""
import os
import re
from importlib import metadata


def _version() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    cmake = os.path.join(here, "..", "..", "..", "CMakeLists.txt")
    if os.path.isfile(cmake):  # a checkout: client/python/graphsieve_client
        with open(cmake) as f:
            match = re.search(r"^\s*project\s*\(\s*graphsieve\b[^)]*\bVERSION\s+([0-9][0-9.]*)",
                              f.read(), re.M | re.I)
        if match:
            return match.group(1)
    try:
        return metadata.version("graphsieve-client")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__: str = _version()
