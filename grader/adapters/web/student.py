"""A student's pages: their own results (what ``course.studentview`` allows, nothing
more) and the hand-in form with its receipt. Renderers only: the routes (a signed link
here, an LTI launch or an Open OnDemand app elsewhere) decide who the student is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.adapters.web.design import (
    esc,
    layout,
    muted,
    notice,
    num,
    pre,
    receipt_box,
    reload_links,
    score_bar,
    table,
    upload_form,
    verdict_badge,
)
from grader.adapters.web.forms import field, post_form
from grader.adapters.web.hand_shown import hand_grade_html
from grader.adapters.web.perfchart import on_demand_section, performance_section
from grader.course.shown import (
    AssignmentView,
    LimitsLeft,
    Measuring,
    Receipt,
    RequestView,
    StudentView,
    SubmissionView,
    TeamView,
)

MINE_RELOAD_S = 30
FOOTER = "gradeline · this page shows only your own submissions"


def limits_note(lim: LimitsLeft) -> str:
    """What an assignment's hand-in limits leave: used and left, and why (and until
    when) a hand-in now would be refused or deferred ("" when there are no limits)."""
    out = ""
    if lim.left is not None:
        out += f"<p>Hand-ins used: {lim.used}, left: {lim.left}.</p>"
    if lim.why:
        when = f" The next one within the limits: {esc(lim.next_at[:16])}." \
            if lim.next_at else ""
        later = "taken but deferred (graded after the others, feedback after your " \
            "deadline)" if lim.deferring else "refused"
        out += notice("warn", f"<p>A hand-in now would be {later}: {esc(lim.why)}."
                              f"{when}</p>")
    return out


@dataclass(frozen=True, slots=True)
class Actions:
    """Where a front end that takes a student's posts (the Open OnDemand app, an LMS
    launch) takes a team's change and a regrade request, and the form token it made."""

    team: str
    ask: str
    csrf: str
    measure: str = ""  # a performance measurement on demand ("": not taken here)


def team_said(team: TeamView | None, assignment: str) -> str:
    """What a page says after a team's change."""
    return f"You are in team {team.name} of {assignment}." if team and team.name else \
        f"You are in no team of {assignment}."


def request_said(r: RequestView) -> str:
    """What a page says when the desk took a regrade request."""
    return f"Your request {r.id} about {r.target} is with your course staff."


def measuring_said(m: Measuring) -> str:
    """What a page says when the desk took a request for a measurement."""
    return (f"Your submission {m.submission[:19]} of {m.assignment} waits to be measured "
            f"({m.used} of {m.tokens} measurements used); its curve appears here when it is "
            "done.")


def team_note(t: TeamView | None, assignment: str, i: int, act: Actions | None) -> str:
    """A team assignment's team (or that there is none yet), and with ``act`` the forms
    that create, join or leave one while the students may."""
    if t is None:
        return ""
    until = f" Teams change until {esc(t.lock[:16])}." if t.changes and t.lock else ""
    if t.name:
        code = (f" Your teammates join with the code <code>{esc(t.code)}</code>."
                if t.code and t.changes else "")
        out = (f"<p>Team <strong>{esc(t.name)}</strong>: {esc(', '.join(t.members))}."
               f"{code}{until}</p>")
    else:
        out = (f"<p>Team work ({t.min} to {t.max} members): you are in no team yet."
               f"{until}</p>")
    if act is None or not t.changes:
        return out
    hidden = {"assignment": assignment}
    if t.name:
        return out + post_form(act.team, "Leave the team", csrf_token=act.csrf,
                               hidden={**hidden, "action": "leave"},
                               label=f"Leave team {t.name}")
    make = post_form(act.team, "Create the team", csrf_token=act.csrf,
                     hidden={**hidden, "action": "create"}, label="Create a team",
                     fields=field("value", "New team's name", field_id=f"team-name-{i}",
                                  hint="Letters, digits, spaces; at most 40."))
    join = post_form(act.team, "Join the team", csrf_token=act.csrf,
                     hidden={**hidden, "action": "join"}, label="Join a team",
                     fields=field("value", "Team's join code", field_id=f"team-code-{i}",
                                  hint="Your teammate sees it on their page."))
    return out + f'<div class="gl-side">{make}{join}</div>'


def requests_note(a: AssignmentView, i: int, act: Actions | None) -> str:
    """The student's regrade requests with staff's answers, when they may ask, and with
    ``act`` the form that asks about a group of the submission that counts (or a
    question of the released hand-grade)."""
    w, out = a.regrades, ""
    if a.requests:
        rows = [[esc(r.id), f"{esc(r.target_kind)} {esc(r.target)} of {esc(r.submission[:19])}",
                 esc(r.status), esc(r.reason),
                 (esc(r.answer) + f" <small>({esc(r.answered_by)})</small>") if r.answer
                 else muted("waiting for staff"),
                 f"{num(r.before)} → {num(r.after)}" if r.after is not None else muted()]
                for r in a.requests]
        out += table(f"Your regrade requests about {a.name}",
                     ["Request", "About", "Status", "Your reason", "Answer", "Points"], rows,
                     wrap=(3, 4), table_id=f"requests-{i}")
    if w is None:
        return out
    if w.why:
        return out + f'<p class="gl-muted">Regrade requests: {esc(w.why)}.</p>'
    left = f" ({w.left} left)" if w.left is not None else ""
    out += f"<p>You may ask for a regrade until {esc((w.closes or '')[:16])}{left}.</p>"
    sub = next((s for s in a.submissions if s.counts and s.groups), None)
    if act is None or sub is None:
        return out
    groups = [(g.name, f"{g.name} ({num(g.points)} of {num(g.max_points)})")
              for g in sub.groups]
    groups += [(f"question:{q.id}", f"graded by hand: {q.title} ({num(q.points)} of "
                                    f"{num(q.max_points)})")
               for q in (a.hand.questions if a.hand else ())]
    fields = (field("group", "Test group or question", field_id=f"ask-group-{i}",
                    kind="select", options=groups) +
              field("reason", "Why it should be graded again", field_id=f"ask-reason-{i}",
                    kind="area", hint="Staff read this; say what you expected and why."))
    return out + post_form(act.ask, "Ask for a regrade", csrf_token=act.csrf,
                           hidden={"assignment": a.name, "submission": sub.id},
                           fields=fields, label=f"Ask for a regrade of {a.name}")


def mine_page(view: StudentView, *, auto_refresh_s: int | None = None) -> str:
    """A student's own page.

    :param auto_refresh_s: reload every so many seconds (None: only when asked, by the
        page's own link).
    """
    body = reload_links(auto_refresh_s or MINE_RELOAD_S, on=auto_refresh_s is not None)
    return layout(f"{view.student} in {view.course}", body + _results(view),
                  site_href=None, footer_html=FOOTER, refresh_s=auto_refresh_s)


def _results(view: StudentView, act: Actions | None = None) -> str:
    """Each assignment (an h2) with the deadline, limits, team, submissions and
    regrade requests."""
    parts = []
    for i, a in enumerate(view.assignments):
        rel = f"; results released {esc(a.released[:16])}" if a.released else ""
        parts.append(f"<h2>{esc(a.name)}</h2><p class=\"gl-lead\">your "
                     f"deadline {esc(a.deadline[:16])}{rel}</p>{limits_note(a.limits)}"
                     + team_note(a.team, a.name, i, act))
        if a.on_demand is not None:
            ask = post_form(act.measure, "Measure my latest submission", csrf_token=act.csrf,
                            hidden={"assignment": a.name},
                            label=f"Measure the performance of my latest submission of "
                                  f"{a.name}") \
                if act is not None and act.measure and a.on_demand.used < a.on_demand.tokens \
                else ""
            parts.append(on_demand_section(a.on_demand, f"m-{i}", ask))
        if a.hand is not None:
            parts.append(hand_grade_html(a.hand, f"hand-{i}"))
        parts += [_submission(s, f"g-{i}-{j}") for j, s in enumerate(a.submissions)]
        if not a.submissions:
            parts.append(f"<p>{muted('nothing handed in')}</p>")
        parts.append(requests_note(a, i, act))
    return "".join(parts)


def _head(s: SubmissionView) -> str:
    late = f", {num(s.late_hours)} h late" if s.late_hours else ""
    counts = ' <span class="gl-tag">counts</span>' if s.counts else ""
    if s.by or s.team:
        late += f", by {esc(s.by or 'you')}" + (f" for team {esc(s.team)}" if s.team else "")
    sha = f'<p class="gl-muted">sha256 {esc(s.sha256)}</p>' if s.sha256 else ""
    return f"<h3>{esc(s.id[:19])}: {esc(s.submitted_at[:19])}{late}{counts}</h3>{sha}"


def _submission(s: SubmissionView, tid: str) -> str:
    """One submission in a card: refused, deferred, waiting, or graded with the groups
    and the failed tests the course shows."""
    out = [_head(s)]
    if s.state == "quarantined":
        out.append(notice("error", f"<p>refused: {esc(s.reason)}</p>"))
    elif s.deferred:
        out.append(notice("info", f"<p><span class=\"gl-tag\">deferred</span> "
                                  f"{esc(s.message)}</p>"))
    elif s.verdict is None:
        out.append(f"<p>{verdict_badge(None)} waiting to be graded</p>")
    else:
        out += _graded(s, tid)
    return f'<div class="gl-card">{"".join(out)}</div>'


def _graded(s: SubmissionView, tid: str) -> list[str]:
    total = score_bar(s.score, s.max_score or 0.0) if s.score is not None else ""
    more = "" if s.complete else \
        " <small>(more groups after the deadline or when staff release)</small>"
    out = [f"<p>{verdict_badge(s.verdict)} {total}{more}</p>"]
    if s.message:
        out.append(f"<p>{esc(s.message)}</p>")
    if s.compile_output:
        out.append(f"<h4>Compiler output</h4>{pre(s.compile_output)}")
    groups = [[esc(g.name), verdict_badge(g.verdict), f"{g.passed}/{g.total}",
               f"{num(g.points)} of {num(g.max_points)}"] for g in s.groups]
    if groups:
        out.append(table(f"Test groups of {s.id[:19]}",
                         ["Group", "Verdict", "Passed", "Points"], groups, numeric=(2, 3),
                         table_id=tid))
    if s.performance is not None:
        out.append(performance_section(s.performance, f"{tid}-p"))
    for t in s.tests:
        if t.verdict == "AC":
            continue
        sides = "".join(f'<div><strong class="gl-label">{label}</strong>'
                        f"{pre(text or '')}</div>"
                        for text, label in ((t.input, "input"), (t.expected, "expected"),
                                            (t.output, "your output")))
        out.append(f"<h4>{esc(t.name)}: {verdict_badge(t.verdict)}</h4>"
                   f"<p>{esc(t.feedback) or muted('no feedback')}</p>"
                   f'<div class="gl-side">{sides}</div>')
    return out


def _deadlines(view: StudentView) -> str:
    rows = []
    for a in view.assignments:
        lim = a.limits
        left = muted("no limit") if lim.left is None else str(lim.left)
        nxt = esc(lim.next_at[:16]) if lim.next_at else muted()
        rows.append([esc(a.name), esc(a.deadline[:16]), left, nxt, esc(lim.why) or muted()])
    return table("Your deadlines and hand-in limits",
                 ["Assignment", "Your deadline", "Hand-ins left", "Next allowed at",
                  "Limit met"], rows, numeric=(2,), wrap=(4,))


def handin_page(view: StudentView, assignments: Sequence[str], *, action: str,
                csrf_token: str, max_mib: int, receipt: Receipt | None = None,
                error: str | None = None, selected: str | None = None,
                results: bool = False, actions: Actions | None = None,
                done: str = "", refused: str = "") -> str:
    """Handing in through a browser: the form, and after a hand-in its receipt (shown,
    and downloadable as JSON); with ``results``, the student's own submissions below
    (a front end's one page, in an LMS or the cluster's portal).

    :param view: the student's view (``course.studentview``): who, the course, each
        assignment's deadline and limits.
    :param assignments: those the form offers.
    :param action: where the form posts (the front end's route).
    :param error: why the last try handed nothing in (plain text).
    :param selected: the assignment the form starts at (a receipt's, else this).
    :param actions: where the team and regrade forms post (None: no such forms).
    :param done: what the last post did (plain text: "You joined team red").
    :param refused: why the last team change or regrade request was refused.
    """
    selected = receipt.assignment if receipt else selected
    parts = [f'<p class="gl-lead">{esc(view.student)} in {esc(view.course)}</p>']
    if error:
        parts.append(notice("error", f"<p>Nothing was handed in: {esc(error)} "
                                     '<a href="#handin-file">Choose the file again</a>.</p>'))
    if done:
        parts.append(notice("info", f"<p>{esc(done)}</p>"))
    if refused:
        parts.append(notice("error", f"<p>Refused: {esc(refused)}</p>"))
    if receipt:
        late = " after your deadline" if receipt.late else ""
        parts.append(notice("info", f"<p>Handed in {esc(receipt.file)} for "
                                    f"{esc(receipt.assignment)}{late}.</p>"))
        if receipt.deferred:
            parts.append(notice("warn", "<p>Past the assignment's hand-in limit "
                                        f"({esc(receipt.limit)}): it is graded "
                                        "after everyone else's, and its feedback comes "
                                        "after your deadline.</p>"))
        parts.append(receipt_box(receipt.to_json()))
    note = ('<p class="gl-hint">You may hand in again until your deadline; your results '
            "page says which submission counts.</p>")
    form = upload_form(action, assignments, csrf_token=csrf_token, max_mib=max_mib,
                       note_html=note, error=error or "", selected=selected)
    parts.append(f'<h2>Hand in a file</h2><div class="gl-card">{form}</div>{_deadlines(view)}')
    if results:
        parts.append(_results(view, actions))
    return layout("Hand in", "".join(parts), site_href=None, footer_html=FOOTER)
