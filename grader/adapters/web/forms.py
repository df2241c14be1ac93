"""Small forms in the pages' one design (``design``): a team's create, join and leave, a
regrade request, staff's answer to one. Each posts to its own page's site (the pages'
policy allows no other: ``form-action 'self'``) with a token the front end made for
whoever was shown it; the front end that serves the page checks both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from grader.adapters.web.design import esc


def field(name: str, label: str, *, field_id: str, kind: str = "text", value: str = "",
          hint: str = "", required: bool = True, options: Sequence[tuple[str, str]] = (),
          extra: str = "") -> str:
    """A labelled field: a text (``kind``: text, number), a text area (``area``) or a
    choice of ``options`` ((value, label) pairs: ``select``), with a hint tied to it."""
    hint_id = f"{field_id}-hint"
    described = f' aria-describedby="{esc(hint_id)}"' if hint else ""
    req = " required" if required else ""
    if kind == "area":
        control = (f'<textarea id="{esc(field_id)}" name="{esc(name)}" rows="4"{req}'
                   f'{described}{extra}>{esc(value)}</textarea>')
    elif kind == "select":
        opts = "".join(f'<option value="{esc(v)}"{" selected" if v == value else ""}>'
                       f"{esc(text)}</option>" for v, text in options)
        control = (f'<select id="{esc(field_id)}" name="{esc(name)}"{req}{described}>'
                   f"{opts}</select>")
    else:
        control = (f'<input type="{esc(kind)}" id="{esc(field_id)}" name="{esc(name)}" '
                   f'value="{esc(value)}"{req}{described}{extra}>')
    note = f'<p class="gl-hint" id="{esc(hint_id)}">{esc(hint)}</p>' if hint else ""
    return (f'<div class="gl-field"><label for="{esc(field_id)}">{esc(label)}</label>'
            f"{control}{note}</div>")


def post_form(action: str, button: str, *, csrf_token: str,
              hidden: Mapping[str, str] | None = None, fields: str = "",
              label: str = "") -> str:
    """A form posted to ``action`` with hidden values (the token as ``csrf``), the
    ``fields`` given and one button; ``label`` names it for screen readers."""
    values = {"csrf": csrf_token, **(hidden or {})}
    inputs = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">'
                     for k, v in values.items())
    name = f' aria-label="{esc(label)}"' if label else ""
    return (f'<form class="gl-form" method="post" action="{esc(action)}"{name}>{inputs}'
            f'{fields}<button class="gl-button" type="submit">{esc(button)}</button></form>')
