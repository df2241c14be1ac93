"""Assignment formats, one sub-package each, and the one entry that reads any package
(``formats.load.load_problem``) into the model the judge grades by
(``formats.problem.Problem``): ``kattis/`` (ICPC/Kattis problem packages), ``gradescope/``
(Gradescope autograders, Otter-Grader's notebooks among them), ``unittests/`` (the
course's unit tests and their JUnit report). Shared here: the test-group tree, the
package file reader, gradeline's own ``gradeline.yaml`` additions, what example
submissions must do, and scoring. Pure: it reads a package's files and runs nothing."""
