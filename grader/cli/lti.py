"""``gradeline lti serve | keys | sync-grades | roster``: gradeline as an LTI 1.3 tool
of the courses' LMSs (``adapters.web.lti``; what a site enters in the LMS:
docs/pages/admin/lti.md). Handlers: ``cli.lti_cmds``."""

from __future__ import annotations

from grader.cli.common import Commands, lazy, spool_options


def register(sub: Commands) -> None:
    lt = sub.add_parser("lti", help="gradeline as an LTI 1.3 tool: launches, deep linking, "
                                    "grades back and rosters from the LMS")
    ls = lt.add_subparsers(dest="lti_command", required=True)
    for name, func, helptext in (
            ("serve", "cmd_serve", "the tool's web server (launch, pages, hand-in) and its "
                                   "grade passback"),
            ("keys", "cmd_keys", "the tool's public keys (JWKS) for the LMS; --rotate makes "
                                 "a new signing key"),
            ("sync-grades", "cmd_sync", "post the grades that changed to each LMS gradebook"),
            ("roster", "cmd_roster", "the course's members from the LMS (NRPS) against the "
                                     "roster")):
        p = ls.add_parser(name, help=helptext)
        p.add_argument("--registrations", required=True, metavar="LTI_YAML",
                       help="the platforms the tool is registered with (lti.yaml)")
        spool_options(p)
        p.set_defaults(func=lazy("grader.cli.lti_cmds", func))
        if name == "serve":
            p.add_argument("--host", default="127.0.0.1")
            p.add_argument("--port", type=int, default=8480)
            p.add_argument("--sync-every", type=float, default=60.0, metavar="SECONDS",
                           help="post changed grades this often (0: never; default "
                                "%(default)s)")
        if name == "keys":
            p.add_argument("--rotate", action="store_true")
        if name == "roster":
            p.add_argument("--write", action="store_true",
                           help="write the roster (else only list the changes)")
