"""gradeline: batch-scheduled grading of programming assignments.

The package is layered; each folder is one layer and imports only go down
(``make lint`` checks it with import-linter; docs/pages/reference/architecture.md
draws it):

    cli/       the commands, thin: parse flags, call the library, print
    compose/   the wiring as a library: the context, a command's pipelines and
               server, the read side's desk and pages, the LTI tool's course side
    measure/   scaling campaigns;  planning/  capacity planning
    pipeline/  the write path: spool -> intake -> dedupe -> executor -> journal -> store
    views/     the read side: the desk, staff pages' data, status, the live snapshot
    adapters/  one package per outside system (sandbox, scheduler, store, web, desk, ...)
    judge/     grades one submission through the Sandbox port, a runner per format
    formats/   pure: assignment formats (Kattis, Gradescope, unit tests) into one model
    course/    pure: the course file, its policy, what students and staff are shown
               (typed values), what goes to the LMS
    core/      pure: limits, verdicts, results, jobs, records, submissions, CPU lists

Beside them: ``settings`` (the only reader of the environment, read by the command
line and the composition, handed down as values) and ``faults`` (named crash points
for tests).
"""

__version__ = "0.1.0"
