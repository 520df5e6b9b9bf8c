"""The PEP 517 / PEP 660 build backend of graphsieve-client, standard library only.

pip runs it from this directory (pyproject.toml: backend-path) in its isolated
build environment, which therefore needs nothing from a package index:
`pip install ./client/python` works offline. It builds a pure-Python wheel of
the packages pyproject.toml's [tool.graphsieve] names, with the version read
from project(VERSION) in the repository's CMakeLists.txt (an sdist carries it
in PKG-INFO instead), and an editable wheel that points at this directory.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import tomllib
import zipfile

_HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_PROJECT_VERSION = re.compile(r"^\s*project\s*\(\s*graphsieve\b[^)]*\bVERSION\s+([0-9][0-9.]*)",
                              re.M | re.I)


def _pyproject():
    with open(os.path.join(_HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _version(config):
    """project(VERSION) of the CMakeLists.txt that [tool.graphsieve] version-file
    names, or the Version of an sdist's PKG-INFO; an error naming the file otherwise."""
    path = os.path.normpath(os.path.join(_HERE, config["tool"]["graphsieve"]["version-file"]))
    if os.path.isfile(path):
        with open(path) as f:
            match = _PROJECT_VERSION.search(f.read())
        if match is None:
            raise RuntimeError(f"{path}: no 'project(graphsieve VERSION x.y.z)' line")
        return match.group(1)
    pkg_info = os.path.join(_HERE, "PKG-INFO")
    if os.path.isfile(pkg_info):
        with open(pkg_info) as f:
            match = re.search(r"^Version: (\S+)$", f.read(), re.M)
        if match:
            return match.group(1)
    raise RuntimeError(f"graphsieve-client's version: {path} does not exist (build from a "
                       "checkout of the graphsieve repository, or from its sdist)")


def _metadata(config):
    project = config["project"]
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {_version(config)}", f"Summary: {project['description']}",
             f"Requires-Python: {project['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d}; extra == \"{extra}\"" for d in deps]
    return "\n".join(lines) + "\n"


def _dist_name(config):
    return re.sub(r"[-_.]+", "_", config["project"]["name"]).lower()


def _dist_info(config):
    return f"{_dist_name(config)}-{_version(config)}.dist-info"


def _package_files(config):
    """(archive name, path) of every file of the packages, __pycache__ skipped."""
    out = []
    for package in config["tool"]["graphsieve"]["packages"]:
        directory = os.path.join(_HERE, package)
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            raise RuntimeError(f"{directory}: not a package (no __init__.py)")
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not name.endswith((".pyc", ".pyo")):
                out.append((f"{package}/{name}", path))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, config, entries):
    """A py3-none-any wheel of entries [(archive name, bytes)] plus its dist-info."""
    dist_info = _dist_info(config)
    top_level = sorted({name.split("/")[0] for name, _ in entries if "/" in name})
    entries = list(entries) + [
        (f"{dist_info}/METADATA", _metadata(config).encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: graphsieve_build\n"
                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/top_level.txt", ("\n".join(top_level) + "\n").encode()),
    ]
    record = [_record_line(name, data) for name, data in entries] + [f"{dist_info}/RECORD,,"]
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel_name = f"{_dist_name(config)}-{_version(config)}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    config = _pyproject()
    dist_info = _dist_info(config)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as f:
        f.write(_metadata(config))
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    config = _pyproject()
    return _write_wheel(wheel_directory, config,
                        [(name, _read(path)) for name, path in _package_files(config)])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth file puts this directory on sys.path (PEP 660)."""
    config = _pyproject()
    pth = (_HERE + "\n").encode()
    return _write_wheel(wheel_directory, config, [(f"{_dist_name(config)}.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    """pyproject.toml, the backend, the packages and PKG-INFO (which carries the version)."""
    config = _pyproject()
    base = f"{_dist_name(config)}-{_version(config)}"
    files = [("pyproject.toml", os.path.join(_HERE, "pyproject.toml")),
             ("build_backend/graphsieve_build.py", os.path.abspath(__file__))]
    files += _package_files(config)
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for archive_name, path in files:
            tar.add(path, arcname=f"{base}/{archive_name}", recursive=False)
        pkg_info = _metadata(config).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(pkg_info))
    return name
