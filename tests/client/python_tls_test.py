"""The Python client over TLS and mutual TLS against a live graphsieve-server
(--tls_cert/--tls_key/--tls_client_ca) with self-signed certificates made by
openssl here: with the CA and its own certificate the client is answered;
without its certificate, or in plaintext, the call fails with ServerError
UNAVAILABLE (the handshake is refused). Needs Debian's openssl.
"""
import os
import subprocess
import tempfile
import unittest

import grpc

from graphsieve_client import SamplingRateClient, ServerError
from live_server import LiveServer


def make_certificate(directory, name):
    """A self-signed EC P-256 certificate for localhost / 127.0.0.1: (key, pem) paths."""
    key, pem = os.path.join(directory, name + ".key"), os.path.join(directory, name + ".pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", pem], check=True, capture_output=True, timeout=60)
    return key, pem


def read(path):
    with open(path, "rb") as f:
        return f.read()


class PythonTlsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="graphsieve-py-tls-")
        server_key, cls.server_pem = make_certificate(cls.tmp.name, "server")
        cls.client_key, cls.client_pem = make_certificate(cls.tmp.name, "client")
        cls.server = LiveServer(server_flags=["--tls_cert=" + cls.server_pem,
                                              "--tls_key=" + server_key,
                                              "--tls_client_ca=" + cls.client_pem]).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def client(self, **kwargs):
        return SamplingRateClient(self.server.target, timeout_seconds=10, max_attempts=1,
                                  **kwargs)

    def test_mutual_tls_is_answered(self):
        with self.client(root_certificates=read(self.server_pem),
                         private_key=read(self.client_key),
                         certificate_chain=read(self.client_pem)) as client:
            batch = client.get_rates([1, 999999999], [2, 1])
            self.assertEqual(len(batch), 2)
            self.assertEqual(batch.sources[1], "DEFAULT")
            self.assertTrue(client.status().serving)

    def test_without_the_client_certificate_or_tls_the_call_fails_with_its_code(self):
        for kwargs in [{"root_certificates": read(self.server_pem)}, {}]:
            with self.client(**kwargs) as client:
                with self.assertRaises(ServerError) as caught:
                    client.get_rates([1], [2])
            self.assertEqual(caught.exception.status_code, grpc.StatusCode.UNAVAILABLE, kwargs)

    def test_half_a_client_identity_is_refused(self):
        with self.assertRaisesRegex(ValueError, "go together"):
            self.client(root_certificates=read(self.server_pem), private_key=b"key")
        with self.assertRaisesRegex(ValueError, "need root_certificates"):
            self.client(private_key=b"key", certificate_chain=b"pem")


if __name__ == "__main__":
    unittest.main()
