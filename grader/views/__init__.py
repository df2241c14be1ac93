"""The read side: what gradeline answers people, shared by every front end (the
student desk, ``gradeline web``, the LTI launch pages, the Open OnDemand app):
``student_desk`` (a student's hand-in, own results and links), ``staff_pages`` (the
staff pages' data), ``similarity_report``, ``status`` (where a course's submissions
are), ``snapshot`` (what staff watch at a deadline) and ``observe`` (what a running
server reports to Prometheus), giving the values of ``grader.course``.
They read the store through ``views.ports`` (never a concrete adapter: the
composition hands one in) and never import the write path (``pipeline``)."""
