"""Open edX's LTI 1.3 platform side, its own code (PyPI's `lti-consumer-xblock`, the
consumer XBlock's Django app: LTI passports and configurations, the OAuth token
endpoint, Assignment and Grade Services), served from a SQLite database by the stdlib's
WSGI server -- no edX platform, so no launches (those go through an XBlock in a course)
and no course gradebook behind the scores, only what a tool calls on its own.

Every passport is a registration with its own client id, its own keys and its own token
URL, all under one issuer (the LMS's): as Open edX makes one per course or per component.
Each gets a configuration in programmatic AGS mode (the tool manages its line items).

Run with the Python of a venv holding lti-consumer-xblock (tests/lti/test_lti_openedx.py
makes one):  python openedx_platform.py --port PORT --dir DIR --config CONFIG.json
CONFIG: {"passports": [{"client_id", "passport_id", "tool_public_key"}]}. Before it
serves, it writes DIR/endpoints.json: per client id its configuration's AGS claim and
resource link id (what a launch of it would carry) and token URL. GET /state lists line
items and scores.
"""

from __future__ import annotations

import argparse
import json
import socketserver
from pathlib import Path
from typing import ClassVar
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import django
from django.conf import settings

USAGE_ID = r"(?P<usage_id>(?:i4x://?[^/]+/[^/]+/[^/]+/[^@]+(?:@[^/]+)?)|(?:[^/]+))"


def configure(base: str, db: Path) -> None:
    settings.configure(
        SECRET_KEY="test", ALLOWED_HOSTS=["*"], USE_TZ=True,
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth",
                        "rest_framework", "config_models", "lti_consumer"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(db)}},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
        USAGE_ID_PATTERN=USAGE_ID, LMS_ROOT_URL=base, LTI_BASE=base, LTI_API_BASE=base,
        PLATFORM_NAME="Open edX (test)", OPENEDX_TELEMETRY=[],
        LOGGING_CONFIG=None)
    django.setup()


def state(_request: object) -> object:
    from django.http import JsonResponse
    from lti_consumer.models import LtiAgsLineItem, LtiAgsScore

    items = [{"config": li.lti_configuration.lti_1p3_client_id, "id": li.id,
              "resourceId": li.resource_id, "tag": li.tag, "label": li.label,
              "resourceLinkId": str(li.resource_link_id), "scoreMaximum": li.score_maximum,
              "scores": {s.user_id: s.score_given for s in
                         LtiAgsScore.objects.filter(line_item=li)}}
             for li in LtiAgsLineItem.objects.select_related("lti_configuration")]
    return JsonResponse({"lineitems": items})


def setup(base: str, config: dict, out: Path) -> None:
    from django.core.management import call_command
    from django.db.models.signals import post_save
    from lti_consumer.models import Lti1p3Passport, LtiAgsScore, LtiConfiguration

    call_command("migrate", verbosity=0)
    # a score is kept (what /state shows); handing it on to the course's gradebook is the
    # edX platform's part, not here
    post_save.disconnect(sender=LtiAgsScore, dispatch_uid="publish_grade_on_score_update")
    endpoints = {}
    for i, p in enumerate(config["passports"]):
        passport = Lti1p3Passport.objects.create(
            name=p["client_id"], passport_id=p["passport_id"],
            lti_1p3_client_id=p["client_id"], lti_1p3_tool_public_key=p["tool_public_key"])
        lti = LtiConfiguration.objects.create(
            version=LtiConfiguration.LTI_1P3, config_store=LtiConfiguration.CONFIG_ON_DB,
            lti_1p3_passport=passport, location=f"block-v1:edX+DemoX+2026+type@lti_consumer"
            f"+block@component{i}", lti_advantage_ags_mode="programmatic",
            lti_1p3_launch_url="http://tool.invalid/launch",
            lti_1p3_oidc_url="http://tool.invalid/login")
        consumer = lti.get_lti_consumer()
        endpoints[p["client_id"]] = {
            "ags": consumer.lti_ags.get_lti_ags_launch_claim()[
                "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"],
            "token_url": f"{base}/api/lti_consumer/v1/token/{passport.passport_id}",
            "resource_link": str(lti.location)}  # a launch's resource link id: the block
    out.write_text(json.dumps(endpoints))


class Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--config", type=Path, required=True)
    a = ap.parse_args()
    base = f"http://127.0.0.1:{a.port}"
    configure(base, a.dir / "openedx.sqlite3")
    setup(base, json.loads(a.config.read_text()), a.dir / "endpoints.json")
    from django.core.wsgi import get_wsgi_application
    from django.urls import include, path

    class Urls:  # the URL configuration: what a module would hold
        urlpatterns: ClassVar = [path("state", state),
                                 path("api/", include("lti_consumer.plugin.urls"))]

    settings.ROOT_URLCONF = Urls

    make_server("127.0.0.1", a.port, get_wsgi_application(), server_class=Server,
                handler_class=Quiet).serve_forever()


if __name__ == "__main__":
    main()

