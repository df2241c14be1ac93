"""Which LMSs gradeline is registered with, and the tool's own keys: the one file staff
or admins edit (``lti.yaml``), read into PyLTI1p3's tool configuration.

    tool:
      base_url: https://grading.example.edu/lti   # what the LMS is told to call
      keys: /var/lib/gradeline/lti/keys           # the tool's private keys (made when missing)
    platforms:
      - issuer: https://canvas.instructure.com
        client_id: "10000000000001"
        deployment_ids: ["1:abc"]
        auth_login_url: https://sso.canvaslms.com/api/lti/authorize_redirect
        auth_token_url: https://sso.canvaslms.com/login/oauth2/token
        key_set_url: https://sso.canvaslms.com/api/lti/security/jwks
        course_file: /srv/courses/cs101/course.yaml   # the course its launches open
        contexts: {"course-v1:X": /srv/courses/cs102/course.yaml}   # or per LMS course

Several platforms and deployments may be listed. The keys directory holds RSA keys named
by the time they were made: the newest signs, every one is published on the tool's JWKS
(so an LMS that cached the previous key still checks what was signed before a rotation:
``gradeline lti keys --rotate``, then remove the old one once LMSs refreshed).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwcrypto import jwk  # type: ignore[import-untyped]
from pylti1p3.tool_config.dict import ToolConfDict

from grader.core.errors import ConfigError

PLATFORM_KEYS = {"issuer", "client_id", "deployment_ids", "auth_login_url", "auth_token_url",
                 "key_set_url", "course_file", "contexts", "auth_audience"}


@dataclass(frozen=True, slots=True)
class Platform:
    """One LMS registration: who it is and which course its launches open."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    course_file: Path | None
    contexts: dict[str, Path] = field(default_factory=dict)

    def course_for(self, context_id: str | None) -> Path | None:
        """The course file a launch from ``context_id`` opens (None: none is set)."""
        return self.contexts.get(context_id or "", self.course_file)


@dataclass(frozen=True)
class Registrations:
    """The tool's configuration for PyLTI1p3, its keys, and the platforms by issuer."""

    base_url: str
    conf: ToolConfDict
    platforms: tuple[Platform, ...]
    key_dir: Path

    def platform(self, issuer: str, client_id: str) -> Platform:
        for p in self.platforms:
            if p.issuer == issuer and p.client_id == client_id:
                return p
        raise ConfigError(f"no registration for issuer {issuer} and client {client_id}")

    def unknown(self, issuer: str, client_id: str, deployment: str = "") -> str:
        """Why a login or launch matches no registration, said so that an admin can add
        it (the usual state right after an LMS admin added a placement)."""
        issuer, client_id, deployment = (_shown(v) for v in (issuer, client_id, deployment))
        dep = f" (deployment id {deployment})" if deployment else ""
        if not any(p.issuer == issuer for p in self.platforms):
            return (f"this LMS is not registered with gradeline: add issuer {issuer or '?'} "
                    f"with client id {client_id or '?'}{dep} to lti.yaml")
        if not client_id:
            return (f"the LMS sent no client id, and lti.yaml has several registrations of "
                    f"issuer {issuer}: the LMS must send client_id with its login")
        return (f"this LMS registration is unknown: add client id {client_id} of issuer "
                f"{issuer}{dep} to lti.yaml")

    def jwks(self) -> dict[str, object]:
        """Every key of the tool, public part: what the LMS checks the tool's JWTs with."""
        return {"keys": [public_jwk(p) for p in key_files(self.key_dir)]}


def _shown(value: object) -> str:
    """A value an LMS (or anyone) sent, fit to repeat in a message: one line, short."""
    return " ".join(str(value or "").split())[:200]


def key_files(key_dir: Path) -> list[Path]:
    """The tool's private keys, oldest first (the last one signs)."""
    return sorted(key_dir.glob("tool-*.pem"))


def public_jwk(path: Path) -> dict[str, object]:
    """A key's public part as the LMS reads it; its ``kid`` is the key's RFC 7638
    thumbprint, as PyLTI1p3 names the key it signs with."""
    out: dict[str, object] = jwk.JWK.from_pem(path.read_bytes()).export_public(as_dict=True)
    out.update(alg="RS256", use="sig")
    return out


def new_key(key_dir: Path) -> Path:
    """Make a new RSA key (mode 0600) that signs from now on; the older ones stay
    published until removed."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    path = key_dir / f"tool-{time.strftime('%Y%m%dT%H%M%S')}-{os.urandom(2).hex()}.pem"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    return path


def _platform(raw: dict[str, Any], i: int, base: Path) -> tuple[Platform, dict[str, Any]]:
    where = f"platforms[{i}]"
    unknown = set(raw) - PLATFORM_KEYS
    missing = {"issuer", "client_id", "deployment_ids", "auth_login_url", "auth_token_url",
               "key_set_url"} - set(raw)
    if unknown or missing:
        raise ConfigError(f"{where}: " + (f"unknown keys {sorted(unknown)}" if unknown else
                                          f"missing {sorted(missing)}"))
    deployments = raw["deployment_ids"]
    if not isinstance(deployments, list) or not deployments:
        raise ConfigError(f"{where}: deployment_ids must list the LMS's deployment ids")
    course = base / raw["course_file"] if raw.get("course_file") else None
    contexts = {str(k): base / v for k, v in (raw.get("contexts") or {}).items()}
    reg = {"client_id": str(raw["client_id"]), "auth_login_url": raw["auth_login_url"],
           "auth_token_url": raw["auth_token_url"], "key_set_url": raw["key_set_url"],
           "deployment_ids": [str(d) for d in deployments], "default": False}
    if raw.get("auth_audience"):
        reg["auth_audience"] = raw["auth_audience"]
    return Platform(str(raw["issuer"]), str(raw["client_id"]),
                    tuple(str(d) for d in deployments), course, contexts), reg


def load_registrations(path: Path) -> Registrations:
    """``lti.yaml`` read and checked, the tool's signing key made when there is none.

    :raises ConfigError: naming the place of a wrong or missing entry.
    """
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot read the LTI registrations: {e}") from None
    tool, raws = data.get("tool") or {}, data.get("platforms") or []
    if not tool.get("base_url") or not raws:
        raise ConfigError(f"{path}: needs tool: base_url: and at least one platform")
    key_dir = path.parent / tool.get("keys", "lti-keys")
    if not key_files(key_dir):
        new_key(key_dir)
    signing = key_files(key_dir)[-1]
    issuers: dict[str, Any] = {}  # issuer -> its registrations (PyLTI1p3's TJsonData)
    platforms = []
    for i, raw in enumerate(raws):
        p, reg = _platform(raw, i, path.parent)
        platforms.append(p)
        issuers.setdefault(p.issuer, []).append(reg)
    conf = ToolConfDict(issuers)
    pem = signing.read_text()
    for p in platforms:
        conf.set_private_key(p.issuer, pem, client_id=p.client_id)
        conf.set_public_key(p.issuer, jwk.JWK.from_pem(signing.read_bytes()).export_to_pem()
                            .decode(), client_id=p.client_id)
    return Registrations(str(tool["base_url"]).rstrip("/"), conf, tuple(platforms), key_dir)
