"""A minimal but real LTI 1.3 platform built on the `lti1p3platform` (0.1.8) core classes,
served by stdlib wsgiref (no Django/FastAPI).

lti1p3platform ships only abstract classes + thin Django/FastAPI adapters, no runnable
platform, so this file supplies: storage (in memory), routing, the WSGI Request adapter,
the OIDC redirect, the launch form, and the AGS/NRPS service subclasses.

Run:  python tests/lti/platform/lms_platform.py --port 9001 --config CONFIG.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import threading
import typing as t
import uuid
from pathlib import Path
from urllib.parse import urlencode

import jwt
from lti1p3platform.exceptions import LineItemNotFoundException, LtiServiceException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as PlatformRequest
from lti1p3platform.request import TRequest
from lti1p3platform.response import Response as ServiceResponse
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService
from wsgi_util import Req, Resp, Router, autosubmit_form, esc, load_config, serve

HERE = os.path.dirname(os.path.abspath(__file__))
ROLE = {
    "Instructor": "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
    "Learner": "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
    # what Open edX sends for its forum roles "Community TA" and "Group Moderator" (beside
    # Learner) and Canvas for a TA (beside Instructor)
    "TeachingAssistant": "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
}
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"


# --------------------------------------------------------------------------- storage
class Store:
    """Everything the platform remembers, in memory. Dumped at GET /api/state."""

    def __init__(self, cfg: dict, issuer: str):
        self.lock = threading.RLock()
        self.issuer = issuer.rstrip("/")
        self.private_key = Path(HERE, cfg["platform_private_key_file"]).read_text()
        self.public_key = Path(HERE, cfg["platform_public_key_file"]).read_text()
        self.tools: dict[str, dict] = {}  # client_id -> tool registration dict
        self.tool_keysets: dict[str, dict] = {}  # client_id -> cached JWKS
        self.course = cfg["course"]  # {context_id,title,label,members:[...]}
        self.resource_links: dict[
            str, dict
        ] = {}  # id -> {id,title,url,custom,client_id,lineitem_id}
        self.lineitems: dict[str, dict] = {}  # id -> AGS line item
        self.scores: dict[str, dict[str, dict]] = {}  # lineitem_id -> user_id -> last score
        self.content_items: list[dict] = []  # raw content items received by deep linking
        self.log: list[dict] = []
        for tool in cfg.get("tools", []):
            self.register_tool(tool)
        for rl in cfg.get("resource_links", []):
            self.resource_links[rl["id"]] = dict(rl)

    def register_tool(self, tool: dict) -> dict:
        required = ["client_id", "deployment_id", "oidc_login_url", "launch_url"]
        missing = [k for k in required if not tool.get(k)]
        if missing:
            raise ValueError(f"missing {missing}")
        if not (tool.get("key_set_url") or tool.get("key_set") or tool.get("public_key")):
            raise ValueError("one of key_set_url / key_set / public_key is required")
        tool = dict(tool)
        tool.setdefault("deeplink_launch_url", tool["launch_url"])
        tool.setdefault("redirect_uris", sorted({tool["launch_url"], tool["deeplink_launch_url"]}))
        with self.lock:
            self.tools[tool["client_id"]] = tool
            self.tool_keysets.pop(tool["client_id"], None)
        return tool

    def member(self, user_id: str) -> dict:
        for m in self.course["members"]:
            if m["user_id"] == user_id:
                return m
        raise KeyError(user_id)

    def url(self, path: str) -> str:
        return self.issuer + path

    def record(self, event: str, **data):
        with self.lock:
            self.log.append({"event": event, "at": dt.datetime.utcnow().isoformat() + "Z", **data})


STORE: Store  # set in main()


# ----------------------------------------------------------------- lti1p3platform adapters
class WsgiPlatformRequest(PlatformRequest):
    """lti1p3platform Request adapter for our WSGI Req (mirrors framework/django/request.py)."""

    def build_metadata(self, request: Req) -> TRequest:
        get_data: dict[str, t.Any] = dict(request.query)
        # WORKAROUND (bug in 0.1.8): service handlers do `page + 1` on raw query values.
        for k in ("page", "limit"):
            if k in get_data and str(get_data[k]).isdigit():
                get_data[k] = int(get_data[k])
        return {
            "method": request.method,
            "form_data": dict(request.form),
            "get_data": get_data,
            "headers": request.headers,
            "content_type": request.content_type,
            "path": request.path,
            "json": request.json,
        }


class PlatformConf(LTI1P3PlatformConfAbstract):
    """One Registration (= one tool) per instance, built from the Store."""

    def init_platform_config(self, client_id: str = "", **kwargs: t.Any) -> None:
        self._registration = self.get_registration_by_params(client_id=client_id)

    def get_registration_by_params(self, client_id: str = "", **kwargs: t.Any) -> Registration:
        tool = STORE.tools.get(client_id)
        if tool is None:
            raise LookupError(f"unknown client_id {client_id!r}")
        reg = (
            Registration()
            .set_iss(STORE.issuer)  # NB: README omits this, but OIDC login asserts it
            .set_client_id(tool["client_id"])
            .set_deployment_id(tool["deployment_id"])
            .set_launch_url(tool["launch_url"])
            .set_deeplink_launch_url(tool["deeplink_launch_url"])
            .set_oidc_login_url(tool["oidc_login_url"])
            .set_platform_public_key(STORE.public_key)
            .set_platform_private_key(STORE.private_key)
        )
        if tool.get("key_set_url"):
            reg.set_tool_key_set_url(tool["key_set_url"])
        keyset = tool.get("key_set") or STORE.tool_keysets.get(client_id)
        if not keyset and tool.get("public_key"):
            keyset = {"keys": [Registration.get_jwk(tool["public_key"])]}
        if keyset:
            reg.set_tool_key_set(keyset)
        return reg

    def remember_keyset(self) -> None:
        ks = self._registration.get_tool_key_set()
        if ks:
            STORE.tool_keysets[self._registration.get_client_id()] = ks


class WsgiOIDCLogin(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
        # Signed, short-lived hint: the platform can trust it again at /auth.
        self._lti_message_hint = self._registration.platform_encode_and_sign(
            dict(kwargs), expiration=600
        )

    def get_redirect(self, url: str) -> Resp:
        return Resp.redirect(url)


class LaunchClaimsMixin:
    """Claims for our launches (shared by the WSGI and Django message launch classes)."""

    user: dict
    hint: dict

    def prepare_launch(self, preflight_response: dict) -> None:
        hint, user, course = self.hint, self.user, STORE.course
        self.set_user_data(
            user["user_id"],
            [ROLE[r] for r in user["roles"]],
            full_name=user.get("name"),
            email_address=user.get("email"),
        )
        self.set_launch_context_claim(
            course["context_id"],
            ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
            course["title"],
            course["label"],
        )
        self.set_launch_presentation_claim("window", return_url=STORE.url("/"))
        ctx = course["context_id"]
        self.set_nrps(STORE.url(f"/api/nrps/{ctx}/memberships"))
        if hint["kind"] == "deeplink":
            self.set_dl(
                STORE.url(f"/deep_link_return/{ctx}"),
                title=course["title"],
                accept_types={"ltiResourceLink"},
                extra_data={"ctx": ctx, "nonce": uuid.uuid4().hex},
            )
            self.set_ags(STORE.url(f"/api/ags/{ctx}/lineitems"))
        else:
            rl = STORE.resource_links[hint["resource_link_id"]]
            self.set_resource_link_claim(rl["id"], title=rl.get("title"))
            if rl.get("custom"):
                self.set_custom_parameters_claim(rl["custom"])
            if rl.get("url") and rl["url"] in STORE.tools[rl["client_id"]]["redirect_uris"]:
                # ltiResourceLink from deep linking may point at its own URL
                self.set_launch_url(rl["url"])
            lineitem_url = (
                STORE.url(f"/api/ags/{ctx}/lineitems/{rl['lineitem_id']}")
                if rl.get("lineitem_id")
                else None
            )
            tool = STORE.tools[rl["client_id"]]
            self.set_ags(STORE.url(f"/api/ags/{ctx}/lineitems"), lineitem_url,
                         allow_creating_lineitems=tool.get("lineitems") != "readonly")


class WsgiMessageLaunch(LaunchClaimsMixin, LTIAdvantageMessageLaunchAbstract):
    def __init__(self, request, platform_config, user: dict, hint: dict):
        super().__init__(request, platform_config)
        self.user, self.hint = user, hint

    def render_launch_form(self, launch_data: dict, **kwargs: t.Any) -> Resp:
        STORE.record(
            "id_token_issued",
            kind=self.hint["kind"],
            user=self.user["user_id"],
            launch_url=launch_data["launch_url"],
        )
        return Resp(
            autosubmit_form(
                launch_data["launch_url"],
                {"id_token": launch_data["id_token"], "state": launch_data["state"]},
                form_id="lti-launch",
            )
        )


class AGS(AssignmentsGradesService):
    """AGS storage for lti1p3platform's AssignmentsGradesService (lineitems/scores/results)."""

    def __init__(self, request, platform_config, context_id: str, token: dict | None = None):
        self.ctx = context_id
        self.client = platform_config._registration.get_client_id()
        self.token_scopes = str((token or {}).get("scopes", "")).split()
        super().__init__(request, platform_config, STORE.url(f"/api/ags/{context_id}/lineitems"))

    def _li_url(self, li_id: str) -> str:
        return STORE.url(f"/api/ags/{self.ctx}/lineitems/{li_id}")

    def _out(self, li: dict) -> dict:
        out = {k: v for k, v in li.items() if not k.startswith("_")}
        out["id"] = self._li_url(li["_id"])
        return out

    def _get(self, line_item_id: str) -> dict:
        li = STORE.lineitems.get(str(line_item_id).rstrip("/").rsplit("/", 1)[-1])
        if li is None or li["_ctx"] != self.ctx:
            raise LineItemNotFoundException(line_item_id)
        if li.get("_client") != self.client:
            raise LtiServiceException("Invalid token: the line item is another tool's", 401)
        return li

    def find_lineitems(
        self,
        page=1,
        limit=None,
        line_item_id=None,
        resource_link_id=None,
        resource_id=None,
        tag=None,
        **_ignored,
    ):
        items = [li for li in STORE.lineitems.values()
                 if li["_ctx"] == self.ctx and li.get("_client") == self.client]
        for key, val in (
            ("resourceLinkId", resource_link_id),
            ("resourceId", resource_id),
            ("tag", tag),
        ):
            if val is not None:
                items = [li for li in items if li.get(key) == val]
        items = [self._out(li) for li in items]
        if limit:
            start = (int(page) - 1) * int(limit)
            return {
                "content": items[start : start + int(limit)],
                "has_next": start + int(limit) < len(items),
            }
        return {"content": items, "has_next": False}

    def find_lineitem(self, line_item_id: str):
        return self._out(self._get(line_item_id))

    def create_lineitem(self, creation_data):
        if LINEITEM_SCOPE not in self.token_scopes:
            raise LtiServiceException("the token lacks the scope lineitem", 403)
        li_id = uuid.uuid4().hex[:12]
        li = {k: v for k, v in dict(creation_data).items() if k != "id"}
        li.update({"_id": li_id, "_ctx": self.ctx, "_client": self.client})
        STORE.lineitems[li_id] = li
        STORE.record("lineitem_created", id=li_id, label=li.get("label"))
        return self._out(li)

    def update_lineitem(self, update_data):
        li = self._get(update_data["id"])
        li.update({k: v for k, v in dict(update_data).items() if k != "id"})
        return self._out(li)

    def delete_lineitem(self, line_item_id: str) -> None:
        li = self._get(line_item_id)
        STORE.lineitems.pop(li["_id"], None)

    def update_score(self, line_item_id: str, score) -> UpdateScoreStatus:
        li = self._get(line_item_id)
        for req in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if req not in score:
                raise LtiServiceException(f"score missing {req}", 400)
        per_user = STORE.scores.setdefault(li["_id"], {})
        prev = per_user.get(score["userId"])
        if prev and prev["timestamp"] > score["timestamp"]:
            return UpdateScoreStatus.OLD_TIMESTAMP
        per_user[score["userId"]] = dict(score)
        STORE.record("score", lineitem=li["_id"], **score)
        return UpdateScoreStatus.SUCCESS if prev else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id: str, page=1, limit=None, user_id=None, **_ignored):
        li = self._get(line_item_id)
        results = []
        for uid, s in STORE.scores.get(li["_id"], {}).items():
            if user_id and uid != user_id:
                continue
            if s.get("gradingProgress") != "FullyGraded" or s.get("scoreGiven") is None:
                continue
            max_ = li.get("scoreMaximum", 1)
            results.append(
                {
                    "id": f"{self._li_url(li['_id'])}/results/{uid}",
                    "scoreOf": self._li_url(li["_id"]),
                    "userId": uid,
                    "resultScore": s["scoreGiven"] * max_ / s.get("scoreMaximum", max_),
                    "resultMaximum": max_,
                    "comment": s.get("comment"),
                }
            )
        return {"content": results, "has_next": False}


class NRPS(NamesRoleProvisioningService):
    def __init__(self, request, platform_config, context_id: str):
        self.ctx = context_id
        super().__init__(request, platform_config, STORE.url(f"/api/nrps/{context_id}/memberships"))

    def get_context_by_id(self) -> Context:
        c = STORE.course
        return Context(id=c["context_id"], label=c["label"], title=c["title"])

    def is_resource_link_valid(self, context_id: str, resource_link_id: str) -> bool:
        return resource_link_id in STORE.resource_links

    def get_member_data_page(self, page=1, limit=None, role=None, since=None, **_ignored):
        # NB: 0.1.8 passes *all* query params here (e.g. rlid), hence **_ignored
        members = []
        for m in STORE.course["members"]:
            roles = [ROLE[r] for r in m["roles"]]
            if role and role not in roles and not any(r.endswith("#" + role) for r in roles):
                continue
            members.append(
                {
                    "user_id": m["user_id"],
                    "roles": roles,
                    "name": m.get("name"),
                    "email": m.get("email"),
                    "status": "Active",
                }
            )
        if limit:
            start = (int(page) - 1) * int(limit)
            return {
                "content": members[start : start + int(limit)],
                "has_next": start + int(limit) < len(members),
            }
        return {"content": members, "has_next": False}


def wrap_service_response(resp: ServiceResponse) -> Resp:
    """Same as framework/django/response.py::wrap_json_resp, but the Link header quotes rel="next"
    (0.1.8 emits `rel=next` unquoted, which pylti1p3's regex does not match)."""
    if 200 <= resp.code < 300:
        data = (
            resp.result["content"]
            if isinstance(resp.result, dict) and "content" in resp.result
            else resp.result
        )
        headers = []
        if isinstance(resp.result, dict) and resp.result.get("next"):
            headers.append(("Link", f'<{resp.result["next"]}>; rel="next"'))
        if resp.code == 204 or data is None:
            return Resp(b"", resp.code, resp.media_type, headers)
        return Resp.json(data, resp.code, resp.media_type, headers)
    return Resp.json({"error": resp.message}, resp.code)


def conf_from_bearer(authorization: str) -> tuple[PlatformConf, dict]:
    """Pick the registration from the (platform-signed) access token's `sub`."""
    auth = (authorization or "").split()
    if len(auth) != 2:
        raise LtiServiceException("Missing LTI 1.3 authentication token", 401)
    try:
        claims = jwt.decode(auth[1], STORE.public_key, algorithms=["RS256"])
    except jwt.InvalidTokenError as exc:
        raise LtiServiceException(f"Invalid token: {exc}", 401) from exc
    return PlatformConf(client_id=claims.get("sub", "")), claims


def service_call(req: Req, build, method_name: str, *args) -> Resp:
    try:
        conf, claims = conf_from_bearer(req.headers.get("Authorization", ""))
        service = build(WsgiPlatformRequest(req), conf, claims)
        with STORE.lock:
            return wrap_service_response(
                service.handle_resp(getattr(service, method_name), **dict(args))
            )
    except (LtiServiceException, LookupError) as exc:
        return Resp.json({"error": str(exc)}, getattr(exc, "status_code", 401))


# --------------------------------------------------------------------------- routes
app = Router()


@app.route("/")
def home(req: Req) -> Resp:
    rows = []
    for rl in STORE.resource_links.values():
        links = " ".join(
            f'<a class="launch" data-user="{esc(m["user_id"])}" data-rl="{esc(rl["id"])}" '
            f'href="/launch?{urlencode({"resource_link_id": rl["id"], "user_id": m["user_id"]})}">'
            f"launch as {esc(m['name'])}</a>"
            for m in STORE.course["members"]
        )
        rows.append(
            f"<li>{esc(rl.get('title'))} [{esc(rl['id'])}] "
            f"lineitem={esc(rl.get('lineitem_id'))} {links}</li>"
        )
    dl = " ".join(
        f'<a class="deeplink" '
        f'href="/deeplink?{urlencode({"client_id": c, "user_id": m["user_id"]})}">'
        f"deep link into {esc(c)} as {esc(m['name'])}</a>"
        for c in STORE.tools
        for m in STORE.course["members"]
        if "Instructor" in m["roles"]
    )
    return Resp(
        f"<h1>Test platform {esc(STORE.issuer)}</h1><p>{dl}</p><ul>{''.join(rows)}</ul>"
        f'<p><a href="/api/state">state (json)</a></p>'
    )


@app.route(r"/(?:jwks|\.well-known/jwks\.json)")
def jwks(req: Req) -> Resp:
    return Resp.json({"keys": [Registration.get_jwk(STORE.public_key)]})


# ---- framework-neutral steps (shared with platform_django.py) ----
class FlowError(Exception):
    def __init__(self, payload: t.Any, code: int = 400):
        super().__init__(str(payload))
        self.payload, self.code = payload, code


def prepare_login(
    login: OIDCLoginAbstract, kind: str, client_id: str, user_id: str, resource_link_id: str | None
) -> None:
    login.set_lti_message_hint(
        kind=kind, client_id=client_id, user_id=user_id, resource_link_id=resource_link_id
    )
    if kind == "deeplink":
        login.set_deeplinking_launch_url()
    else:
        rl = STORE.resource_links[resource_link_id]
        if rl.get("url") and rl["url"] in STORE.tools[client_id]["redirect_uris"]:
            login.set_launch_url(rl["url"])
    STORE.record("oidc_initiated", kind=kind, client_id=client_id, user=user_id)


def check_auth(
    p: t.Mapping[str, str], platform_user: str | None
) -> tuple[PlatformConf, dict, dict]:
    """Validate the tool's OIDC auth request. lti1p3platform only checks that nonce, state
    and redirect_uri are there and the client_id; it does NOT check redirect_uri against
    the registration or login_hint."""
    errors = []
    if p.get("scope") != "openid" or p.get("response_type") != "id_token":
        errors.append("scope/response_type")
    tool = STORE.tools.get(p.get("client_id", ""))
    if tool is None:
        raise FlowError({"error": "unknown client_id"})
    try:
        hint = Registration.decode_and_verify(p.get("lti_message_hint", ""), STORE.public_key)
    except jwt.InvalidTokenError as exc:
        raise FlowError({"error": f"bad lti_message_hint: {exc}"}) from exc
    if p.get("login_hint") != hint["user_id"] or platform_user != hint["user_id"]:
        errors.append("login_hint does not match the logged-in platform user")
    if p.get("redirect_uri") not in tool["redirect_uris"]:
        errors.append("redirect_uri not registered")
    if hint["client_id"] != tool["client_id"]:
        errors.append("client_id mismatch")
    if errors:
        raise FlowError({"error": errors})
    return PlatformConf(client_id=tool["client_id"]), hint, STORE.member(hint["user_id"])


def issue_token(form: t.Mapping[str, str]) -> tuple[int, dict]:
    """OAuth2 client_credentials with a JWT client assertion (IMS Security Framework)."""
    assertion = form.get("client_assertion", "")
    try:
        unverified = jwt.decode(assertion, options={"verify_signature": False})
        conf = PlatformConf(client_id=unverified.get("sub", ""))
    except Exception as exc:  # noqa: BLE001 -- any bad request is the tool's error, told
        return 401, {"error": "invalid_client", "detail": str(exc)}
    # lti1p3platform does not check aud/iss/sub of the assertion (verify_aud=False) -> do it here
    aud = unverified.get("aud")
    aud = aud if isinstance(aud, list) else [aud]
    if STORE.url("/token") not in aud or unverified.get("iss") != unverified.get("sub"):
        return 401, {"error": "invalid_client", "detail": "bad aud/iss"}
    tool = STORE.tools.get(unverified.get("sub", ""), {})
    if tool.get("lineitems") == "readonly" and LINEITEM_SCOPE in form.get("scope", "").split():
        # as Canvas answers a scope its developer key does not enable
        return 400, {"error": "invalid_scope", "detail": "lineitem is not granted to this tool"}
    try:
        out = conf.get_access_token(dict(form))
    except Exception as exc:  # noqa: BLE001 -- any bad request is the tool's error, told
        return 400, {"error": "invalid_request", "detail": f"{type(exc).__name__}: {exc}"}
    conf.remember_keyset()
    STORE.record("token_issued", client_id=unverified["sub"], scope=out["scope"])
    return 200, dict(out)


def accept_deep_link(ctx: str, form: t.Mapping[str, str]) -> tuple[int, str | dict]:
    token_ = form.get("JWT", "")
    try:
        unverified = jwt.decode(token_, options={"verify_signature": False})
        conf = PlatformConf(client_id=unverified.get("iss", ""))
        items = conf.validate_deeplinking_resp({"JWT": token_})
    except Exception as exc:  # noqa: BLE001 -- any bad request is the tool's error, told
        return 400, {"error": f"{type(exc).__name__}: {exc}"}
    conf.remember_keyset()
    # checks lti1p3platform leaves to us
    claims = unverified
    if STORE.issuer not in (claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]):
        return 400, {"error": "aud must be the platform issuer"}
    if (
        claims.get("https://purl.imsglobal.org/spec/lti/claim/deployment_id")
        != STORE.tools[claims["iss"]]["deployment_id"]
    ):
        return 400, {"error": "deployment_id mismatch"}
    created = []
    with STORE.lock:
        for item in items:
            STORE.content_items.append({"client_id": claims["iss"], "context_id": ctx, **item})
            if item["type"] != "ltiResourceLink":
                continue
            rl_id = "rl-" + uuid.uuid4().hex[:8]
            rl = {
                "id": rl_id,
                "title": item.get("title"),
                "url": item.get("url"),
                "custom": item.get("custom"),
                "client_id": claims["iss"],
                "lineitem_id": None,
            }
            if item.get("lineItem"):
                li_id = uuid.uuid4().hex[:12]
                STORE.lineitems[li_id] = {
                    **item["lineItem"],
                    "resourceLinkId": rl_id,
                    "label": item["lineItem"].get("label", item.get("title")),
                    "_id": li_id,
                    "_ctx": ctx,
                    "_client": claims["iss"],
                }
                rl["lineitem_id"] = li_id
            STORE.resource_links[rl_id] = rl
            created.append(rl)
    STORE.record(
        "deep_link_response",
        client_id=claims["iss"],
        items=len(items),
        data=claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/data"),
    )
    lis = "".join(
        f'<li class="created" data-rl="{esc(r["id"])}">{esc(r["title"])} ({esc(r["id"])}, '
        f"lineitem {esc(r['lineitem_id'])})</li>"
        for r in created
    )
    return 200, (
        f'<h1 id="dl-done">Deep linking: {len(items)} item(s) received</h1><ul>{lis}</ul>'
        f'<p><a href="/">back to course</a></p>'
    )


# ---- WSGI routes for those steps ----
def _start(req: Req, kind: str, client_id: str, user_id: str, resource_link_id: str | None) -> Resp:
    login = WsgiOIDCLogin(WsgiPlatformRequest(req), PlatformConf(client_id=client_id))
    prepare_login(login, kind, client_id, user_id, resource_link_id)
    resp = login.initiate_login(user_id)
    # "log the user in" on the platform: the /auth step checks login_hint against this cookie
    resp.set_cookie("plat_user", user_id, samesite="Lax")
    return resp


@app.route("/launch")
def launch(req: Req) -> Resp:
    """Step 1, resource link launch: third-party initiated login -> tool's OIDC login URL."""
    rl = STORE.resource_links[req.query["resource_link_id"]]
    return _start(req, "resource", rl["client_id"], req.query["user_id"], rl["id"])


@app.route("/deeplink")
def deeplink(req: Req) -> Resp:
    return _start(req, "deeplink", req.query["client_id"], req.query["user_id"], None)


@app.route("/auth", methods=("GET", "POST"))
def auth(req: Req) -> Resp:
    """Step 3: OIDC authentication request from the tool -> auto-posted id_token."""
    try:
        conf, hint, user = check_auth(
            req.query if req.method == "GET" else req.form, req.cookies.get("plat_user")
        )
    except FlowError as exc:
        return Resp.json(exc.payload, exc.code)
    return WsgiMessageLaunch(WsgiPlatformRequest(req), conf, user, hint).lti_launch()


@app.route("/token", methods=("POST",))
def token(req: Req) -> Resp:
    code, body = issue_token(req.form)
    return Resp.json(body, code)


@app.route(r"/deep_link_return/(?P<ctx>[^/]+)", methods=("POST",))
def deep_link_return(req: Req, ctx: str) -> Resp:
    code, body = accept_deep_link(ctx, req.form)
    return Resp(body, code) if isinstance(body, str) else Resp.json(body, code)


@app.route(r"/api/ags/(?P<ctx>[^/]+)/lineitems/?", methods=("GET", "POST"))
def ags_lineitems(req: Req, ctx: str) -> Resp:
    def build(r, c, t):
        return AGS(r, c, ctx, t)
    return service_call(
        req, build, "handle_get_lineitems" if req.method == "GET" else "handle_create_lineitem"
    )


@app.route(r"/api/ags/(?P<ctx>[^/]+)/lineitems/(?P<li>[^/]+)/?", methods=("GET", "PUT", "DELETE"))
def ags_lineitem(req: Req, ctx: str, li: str) -> Resp:
    name = {
        "GET": "handle_get_lineitem",
        "PUT": "handle_update_lineitem",
        "DELETE": "handle_delete_lineitem",
    }[req.method]
    return service_call(req, lambda r, c, t: AGS(r, c, ctx, t), name, ("line_item_id", li))


@app.route(r"/api/ags/(?P<ctx>[^/]+)/lineitems/(?P<li>[^/]+)/scores", methods=("POST",))
def ags_scores(req: Req, ctx: str, li: str) -> Resp:
    return service_call(
        req, lambda r, c, t: AGS(r, c, ctx, t), "handle_update_score", ("line_item_id", li)
    )


@app.route(r"/api/ags/(?P<ctx>[^/]+)/lineitems/(?P<li>[^/]+)/results", methods=("GET",))
def ags_results(req: Req, ctx: str, li: str) -> Resp:
    return service_call(
        req, lambda r, c, t: AGS(r, c, ctx, t), "handle_get_results", ("line_item_id", li)
    )


@app.route(r"/api/nrps/(?P<ctx>[^/]+)/memberships", methods=("GET",))
def nrps(req: Req, ctx: str) -> Resp:
    return service_call(req, lambda r, c, t: NRPS(r, c, ctx), "handle_get_members")


@app.route("/api/state")
def state(req: Req) -> Resp:
    with STORE.lock:
        return Resp.json(
            {
                "issuer": STORE.issuer,
                "tools": STORE.tools,
                "resource_links": STORE.resource_links,
                "lineitems": STORE.lineitems,
                "scores": STORE.scores,
                "content_items": STORE.content_items,
                "log": STORE.log,
            }
        )


@app.route("/admin/tools", methods=("GET", "POST"))
def admin_tools(req: Req) -> Resp:
    """Configuration API: POST a JSON tool registration (see REPORT.md)."""
    if req.method == "GET":
        return Resp.json(STORE.tools)
    try:
        return Resp.json(STORE.register_tool(req.json or {}), 201)
    except ValueError as exc:
        return Resp.json({"error": str(exc)}, 400)


@app.route("/admin/lineitems", methods=("POST",))
def admin_lineitem(req: Req) -> Resp:
    """A gradebook column made by hand in the LMS: JSON with `context_id`, `client_id`
    (whose it is) and the line item's fields."""
    body = dict(req.json or {})
    li_id = uuid.uuid4().hex[:12]
    li = {k: v for k, v in body.items() if k not in ("context_id", "client_id")}
    li.update({"_id": li_id, "_ctx": body["context_id"], "_client": body["client_id"]})
    STORE.lineitems[li_id] = li
    return Resp.json({**li, "id": STORE.url(f"/api/ags/{body['context_id']}/lineitems/{li_id}")},
                     201)


@app.route("/admin/resource_links", methods=("POST",))
def admin_rl(req: Req) -> Resp:
    rl = dict(req.json or {})
    rl.setdefault("id", "rl-" + uuid.uuid4().hex[:8])
    rl.setdefault("lineitem_id", None)
    STORE.resource_links[rl["id"]] = rl
    return Resp.json(rl, 201)


def main():
    global STORE
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9001)
    ap.add_argument("--issuer", default=None, help="default http://HOST:PORT")
    ap.add_argument("--config", default=os.path.join(HERE, "platform_config.json"))
    ap.add_argument("-v", action="store_true", help="log requests")
    a = ap.parse_args()
    cfg = load_config(a.config)
    STORE = Store(cfg, a.issuer or os.environ.get("PLATFORM_URL") or f"http://{a.host}:{a.port}")
    serve(app.wsgi, a.host, a.port)


if __name__ == "__main__":
    main()
