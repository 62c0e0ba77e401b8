"""How the fleet reaches Temporal: the ``temporal:`` block's (and ``fleet worker``'s)
TLS, mTLS and API key become ``Client.connect``'s arguments; every mistake is exit 2
naming the file, the key and the fix; a real mTLS handshake against a TLS server
with certificates made by ``openssl``.

The Temporal dev server (``temporal server start-dev``) has no TLS flags, so the
handshake is held against a Python ``ssl`` server that checks both sides'
certificates (it speaks no gRPC: the connection then fails, exit 3)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.service import TLSConfig

from prompt_runner.api_fleet import plan_fleet
from prompt_runner.errors import InfrastructureError, UserError
from prompt_runner.fleet import load_fleet
from prompt_runner.fleet.model import TemporalSettings
from prompt_runner.fleet.temporal.connect import connect, connect_options
from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace


def _fleet(tmp_path: Path, temporal: dict[str, Any]) -> Path:
    ws = make_workspace(tmp_path / "a", manifest={"id": "ws-a"})
    here = tmp_path / "ops"
    here.mkdir(exist_ok=True)
    (here / "certs").mkdir(exist_ok=True)
    for name in ("ca.pem", "client.pem", "client.key"):
        (here / "certs" / name).write_bytes(f"PEM of {name}\n".encode())
    doc = {
        "schema": "prompt_runner.fleet/v1",
        "id": "tls",
        "engine": "temporal",
        "workspaces": [os.path.relpath(ws, here)],
        "temporal": {"address": "127.0.0.1:1", **temporal},
    }
    path = here / "fleet.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _options(path: Path, environ: dict[str, str] | None = None) -> dict[str, Any]:
    fleet = load_fleet(path)
    return connect_options(
        fleet.temporal, base=path.parent, file=path, environ=environ if environ else {}
    )


def test_no_tls_keys_connect_in_plain_text_without_a_key(tmp_path: Path) -> None:
    options = _options(_fleet(tmp_path, {"namespace": "ns"}))
    assert options == {
        "target_host": "127.0.0.1:1",
        "namespace": "ns",
        "tls": False,
        "api_key": None,
    }


def test_mtls_files_are_read_relative_to_the_fleet_file(tmp_path: Path) -> None:
    path = _fleet(
        tmp_path,
        {"tls_ca": "certs/ca.pem", "tls_cert": "certs/client.pem", "tls_key": "certs/client.key"},
    )
    tls = _options(path)["tls"]
    assert isinstance(tls, TLSConfig)
    assert tls.server_root_ca_cert == b"PEM of ca.pem\n"
    assert tls.client_cert == b"PEM of client.pem\n"
    assert tls.client_private_key == b"PEM of client.key\n"


def test_the_api_key_comes_from_its_variable_and_turns_tls_on(tmp_path: Path) -> None:
    path = _fleet(tmp_path, {"api_key_env": "MY_TEMPORAL_KEY"})
    options = _options(path, {"MY_TEMPORAL_KEY": "sekrit-123"})
    assert (options["api_key"], options["tls"]) == ("sekrit-123", True)
    # tls: false is kept (a TLS-terminating proxy on this host, say)
    doc = yaml.safe_load(path.read_text())
    doc["temporal"]["tls"] = False
    path.write_text(yaml.safe_dump(doc))
    assert _options(path, {"MY_TEMPORAL_KEY": "k"})["tls"] is False
    doc["temporal"] = {"tls": True}
    path.write_text(yaml.safe_dump(doc))
    assert _options(path)["tls"] is True
    # the key is in no document the fleet writes or prints
    assert "sekrit" not in str(plan_fleet(path).to_dict())


MANIFEST_BAD: list[tuple[dict[str, Any], str]] = [
    ({"tls_cert": "certs/client.pem"}, "tls_cert is given without tls_key"),
    ({"tls_key": "certs/client.key"}, "tls_key is given without tls_cert"),
    ({"tls": False, "tls_ca": "certs/ca.pem"}, "tls is false but tls_ca or tls_cert is given"),
    ({"tls": "yes"}, "temporal.tls:"),
    ({"api_key_env": "NOT A NAME"}, "temporal.api_key_env: 'NOT A NAME' does not match"),
]


@pytest.mark.parametrize(("temporal", "said"), MANIFEST_BAD)
def test_a_bad_tls_key_is_refused_when_the_fleet_loads(
    tmp_path: Path, temporal: dict[str, Any], said: str
) -> None:
    path = _fleet(tmp_path, temporal)
    with pytest.raises(UserError, match=said):
        load_fleet(path)
    done = cli("fleet", "plan", path)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {path}: ") and done.stderr.count("\n") == 1


def test_a_missing_pem_file_names_the_key_and_the_path(tmp_path: Path) -> None:
    path = _fleet(tmp_path, {"tls_ca": "certs/nope.pem"})
    with pytest.raises(UserError) as caught:
        _options(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: temporal.tls_ca: 'certs/nope.pem' cannot be read"), said
    assert str(path.parent / "certs" / "nope.pem") in said and "relative to the fleet file" in said


def test_an_unset_api_key_variable_is_exit_2_naming_it(tmp_path: Path) -> None:
    path = _fleet(tmp_path, {"api_key_env": "PR_TEST_UNSET_KEY"})
    with pytest.raises(UserError, match="PR_TEST_UNSET_KEY, which is not set"):
        _options(path, {"PR_TEST_UNSET_KEY": ""})
    done = cli("fleet", "status", path)  # refused before any connection is tried
    assert done.returncode == 2, done.stderr
    assert "temporal.api_key_env: names the environment variable PR_TEST_UNSET_KEY" in (done.stderr)
    assert "export PR_TEST_UNSET_KEY" in done.stderr and "Traceback" not in done.stderr


def test_the_worker_flags_are_checked_the_same_way(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("x")
    done = cli("fleet", "worker", "--address", "127.0.0.1:1", "--tls-cert", "c.pem", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--tls-cert: is given without --tls-key" in done.stderr
    done = cli("fleet", "worker", "--address", "127.0.0.1:1", "--api-key-env", "PR_TEST_UNSET_KEY")
    assert done.returncode == 2, done.stderr
    assert "--api-key-env: names the environment variable PR_TEST_UNSET_KEY" in done.stderr
    done = cli("fleet", "worker", "--address", "127.0.0.1:1", "--tls-ca", "gone.pem", cwd=tmp_path)
    assert done.returncode == 2 and "--tls-ca: 'gone.pem' cannot be read" in done.stderr


# -- a real handshake ---------------------------------------------------------


def _openssl(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True)


def _certificates(d: Path) -> None:
    """A CA, a server certificate for 127.0.0.1 and a client certificate (CN
    fleet-worker), P-256 keys, all signed by the CA."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=test-ca", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)  # fmt: skip
    for name, cn, ext in (
        ("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
        ("client", "fleet-worker", "extendedKeyUsage=clientAuth\n"),
    ):
        (d / f"{name}.ext").write_text(ext)
        _openssl("req", "-new", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={cn}", cwd=d)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
                 "-extfile", f"{name}.ext", cwd=d)  # fmt: skip


class _TlsServer:
    """Accepts connections on 127.0.0.1, does the TLS handshake requiring a client
    certificate from the CA, records what it saw, and hangs up."""

    def __init__(self, d: Path) -> None:
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(d / "server.pem", d / "server.key")
        self.ctx.load_verify_locations(d / "ca.pem")
        self.ctx.verify_mode = ssl.CERT_REQUIRED
        self.ctx.set_alpn_protocols(["h2"])
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.seen: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            try:
                with self.ctx.wrap_socket(conn, server_side=True) as tls:
                    cert: Any = tls.getpeercert() or {}
                    names = [
                        v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"
                    ]
                    self.seen.append(f"ok {names[0] if names else None}")
            except (ssl.SSLError, OSError) as exc:
                self.seen.append(f"refused {type(exc).__name__}")
                conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()

    def settled(self, within_s: float = 10.0) -> list[str]:
        """What it saw, once it has seen something: the client's error can reach the
        test before this thread has recorded its side of the same handshake."""
        deadline = time.monotonic() + within_s
        while not self.seen and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.seen


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_real_mtls_handshake_with_the_fleet_files(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    _certificates(certs)
    server = _TlsServer(certs)
    try:
        mtls = TemporalSettings(
            address=f"127.0.0.1:{server.port}",
            tls_ca="certs/ca.pem",
            tls_cert="certs/client.pem",
            tls_key="certs/client.key",
        )
        with pytest.raises(InfrastructureError, match=r"\(namespace default, mTLS\)"):
            asyncio.run(connect(mtls, base=tmp_path, file=None))
        assert server.settled() and all(s == "ok fleet-worker" for s in server.seen), server.seen
        # without the client certificate the server refuses the handshake
        server.seen.clear()
        tls_only = TemporalSettings(address=mtls.address, tls_ca="certs/ca.pem")
        with pytest.raises(InfrastructureError, match=r"\(namespace default, TLS\)"):
            asyncio.run(connect(tls_only, base=tmp_path, file=None))
        assert server.settled() and all(s.startswith("refused") for s in server.seen), server.seen
        # in plain text no handshake is even tried
        server.seen.clear()
        plain = TemporalSettings(address=mtls.address)
        with pytest.raises(InfrastructureError, match=r"\(namespace default, plain\)"):
            asyncio.run(connect(plain, base=tmp_path, file=None))
        assert server.settled() and all(s.startswith("refused") for s in server.seen), server.seen
    finally:
        server.close()
