"""client/python as a pip package: the shipped stubs are what protoc makes from
proto/ now, and `pip install ./client/python` into a fresh venv made with
Debian's /usr/bin/python3 -m venv --system-site-packages works with no index
(PIP_NO_INDEX: anything pip would download fails the test), installs the
typed package at graphsieve's version, and satisfies its dependencies with
Debian's python3-grpcio / python3-protobuf / python3-xxhash. An sdist builds
the same wheel as the checkout.

GRAPHSIEVE_PYTHON_STUBS: the stubs the CMake target graphsieve_python_stubs
made from proto/ in this build.
"""
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

SOURCE_DIR = os.environ.get("GRAPHSIEVE_SOURCE_DIR", "")
STUBS = os.environ.get("GRAPHSIEVE_PYTHON_STUBS", "")
PACKAGE = os.path.join(SOURCE_DIR, "client", "python")
GENERATED = ["sampling_pb2.py", "sampling_pb2.pyi", "sampling_pb2_grpc.py"]


def offline_env():
    """The environment of pip and the venv's python: no index, no extra wheel
    directory, no PYTHONPATH (the installed package must be the one imported)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    return env


def checked(args, **kwargs):
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, env=offline_env(),
                       **kwargs)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def cmake_version():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        return re.search(r"^project\(graphsieve VERSION (\S+?)[ )]", f.read(), re.M).group(1)


def wheel_files(path):
    with zipfile.ZipFile(path) as wheel:
        return {name: wheel.read(name) for name in wheel.namelist()}


class PythonPackageTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="graphsieve-pip-")
        cls.venv = os.path.join(cls.tmp.name, ".venv")
        checked(["/usr/bin/python3", "-m", "venv", "--system-site-packages", cls.venv])
        cls.pip_output = checked([os.path.join(cls.venv, "bin", "pip"), "install", PACKAGE])
        cls.python = os.path.join(cls.venv, "bin", "python")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_shipped_stubs_are_what_protoc_makes_from_proto(self):
        for name in GENERATED:
            made = os.path.join(STUBS, "graphsieve", "v1", name)
            shipped = os.path.join(PACKAGE, "graphsieve", "v1", name)
            with open(made, "rb") as a, open(shipped, "rb") as b:
                self.assertTrue(a.read() == b.read(),
                                f"{shipped} differs from what protoc made from "
                                f"proto/ ({made}): copy it over")

    def test_pip_installs_offline_at_the_projects_version(self):
        self.assertIn("Successfully installed graphsieve-client-" + cmake_version(),
                      self.pip_output)
        out = checked([self.python, "-c",
                       "import graphsieve_client, graphsieve.v1.sampling_pb2 as pb\n"
                       "from importlib import metadata\n"
                       "print(graphsieve_client.__version__)\n"
                       "print(metadata.version('graphsieve-client'))\n"
                       "print(graphsieve_client.__file__)\n"
                       "print(pb.__file__)"], cwd=self.tmp.name).split("\n")
        self.assertEqual(out[0], cmake_version())
        self.assertEqual(out[1], cmake_version())
        for path in out[2:4]:
            self.assertTrue(path.startswith(self.venv + "/lib/"), path)

    def test_the_installed_package_is_typed_and_its_dependencies_are_debians(self):
        site = checked([self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
        for name in ["graphsieve_client/py.typed", "graphsieve/v1/sampling_pb2.pyi"]:
            self.assertTrue(os.path.isfile(os.path.join(site.strip(), name)), name)
        # pip check: every Requires-Dist (grpcio, protobuf, xxhash) is met, here by
        # the Debian packages the venv sees (other packages' lines are not ours).
        r = subprocess.run([os.path.join(self.venv, "bin", "pip"), "check"], capture_output=True,
                           text=True, timeout=300, env=offline_env())
        self.assertNotIn("graphsieve-client", r.stdout + r.stderr)
        requires = checked([self.python, "-c", "from importlib import metadata\n"
                            "print(*metadata.requires('graphsieve-client'), sep='\\n')"])
        for dependency in ["grpcio", "protobuf", "xxhash"]:
            self.assertRegex(requires, rf"(?m)^{dependency}\b")

    def test_an_sdist_builds_the_same_wheel_as_the_checkout(self):
        backend = os.path.join(PACKAGE, "build_backend")
        build = ("import sys, graphsieve_build as b\n"
                 "print(getattr(b, sys.argv[1])(sys.argv[2]))")
        out = os.path.join(self.tmp.name, "dist")
        os.makedirs(out)
        wheel = checked([sys.executable, "-c", build, "build_wheel", out], cwd=backend).strip()
        sdist = checked([sys.executable, "-c", build, "build_sdist", out], cwd=backend).strip()
        with tarfile.open(os.path.join(out, sdist)) as tar:
            tar.extractall(self.tmp.name)
        unpacked = os.path.join(self.tmp.name, sdist[:-len(".tar.gz")])
        again = os.path.join(self.tmp.name, "again")
        os.makedirs(again)
        wheel2 = checked([sys.executable, "-c", build, "build_wheel", again],
                         cwd=os.path.join(unpacked, "build_backend")).strip()
        self.assertEqual(wheel, wheel2)
        self.assertEqual(wheel_files(os.path.join(out, wheel)),
                         wheel_files(os.path.join(again, wheel2)))


if __name__ == "__main__":
    unittest.main()
