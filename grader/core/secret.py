"""Keeping secrets out of what gradeline prints and logs."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs, status, settings).

    >>> redact_url("postgresql://grader:s3cret@db.example:5432/grades")
    'postgresql://grader:***@db.example:5432/grades'
    >>> redact_url("postgresql://grader@127.0.0.1:5432/gradeline?passfile=/x")
    'postgresql://grader@127.0.0.1:5432/gradeline?passfile=/x'
    """
    try:
        parts = urlsplit(url)
        if parts.password is None:
            if "password=" not in parts.query:
                return url
            query = "&".join("password=***" if q.startswith("password=") else q
                             for q in parts.query.split("&"))
            return urlunsplit(parts._replace(query=query))
        host = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    except ValueError:
        return "<a database URL that does not parse>"
