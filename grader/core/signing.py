"""Receipts and links a student can keep but not forge: HMAC-SHA256 over canonical JSON.

A receipt is the service's word that it took a hand-in (id, time, size, SHA-256); a
link is a short-lived capability to one student's page. Both carry their fields in
the clear and a MAC with a key only the grading account reads, so staff can check a
receipt a student shows them (``gradeline receipt verify``), and a link whose fields
were edited, or that expired, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime

from grader.core.errors import RefusedError

KEY_BYTES = 32


def _canonical(fields: Mapping[str, object]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def sign(key: bytes, fields: Mapping[str, object]) -> str:
    """The MAC of ``fields`` (hex)."""
    return hmac.new(key, _canonical(fields), hashlib.sha256).hexdigest()


def signed(key: bytes, fields: Mapping[str, object]) -> dict[str, object]:
    """``fields`` with their ``signature``: a receipt."""
    return {**fields, "signature": sign(key, fields)}


def check(key: bytes, receipt: Mapping[str, object]) -> dict[str, object]:
    """The receipt's fields, if its signature is ours.

    :raises RefusedError: when it was changed or not signed with ``key``.
    """
    fields = {k: v for k, v in receipt.items() if k != "signature"}
    given = receipt.get("signature")
    if not isinstance(given, str) or not hmac.compare_digest(given, sign(key, fields)):
        raise RefusedError("the signature does not match: this receipt was changed or is "
                           "not from this grading service")
    return fields


def token(key: bytes, fields: Mapping[str, object]) -> str:
    """``fields`` and their MAC as one URL-safe string (for a link)."""
    body = base64.urlsafe_b64encode(_canonical(fields)).decode().rstrip("=")
    return f"{body}.{sign(key, fields)}"


def open_token(key: bytes, text: str, now: datetime) -> dict[str, object]:
    """The fields of a token made by :func:`token` whose ``expires`` (ISO) is after now.

    :raises RefusedError: forged, edited, malformed or expired.
    """
    body, _, mac = text.partition(".")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        fields = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise RefusedError("not a link this service made") from None
    if not isinstance(fields, dict) or not hmac.compare_digest(mac, sign(key, fields)):
        raise RefusedError("not a link this service made")
    try:
        expires = datetime.fromisoformat(str(fields["expires"]))
    except (KeyError, ValueError):
        raise RefusedError("a link without an expiry") from None
    if expires <= now:
        raise RefusedError(f"this link expired at {expires.isoformat(timespec='seconds')}: "
                           "ask for a new one with 'gradeline mine --link'")
    return fields
