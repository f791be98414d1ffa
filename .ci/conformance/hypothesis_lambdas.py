"""Schemathesis hook module loaded by both runs of .ci/schemathesis: a workaround in hypothesis.

Hypothesis describes the lambdas in the strategies it builds by parsing their source. When
that happens deep in a recursive generation (the real account document nests deeply, and
schemathesis' coverage phase recurses through every schema), CPython 3.11's parser can fail
("SystemError: AST constructor recursion depth mismatch"); hypothesis then reports a
`FlakyFailure` and the run fails for a reason of its own. Seen in the coverage and examples
phases of the conformance run and, once in CI, in the coverage phase of the run against
Ferry's own document (on historical statements). The description is only text in
hypothesis' reports (and a hint its filter rewriting falls back from when it cannot read
one): give every lambda the form hypothesis itself uses when it cannot read a lambda.

The private function that does the parsing is replaced, not `lambda_description`: other
modules (`hypothesis.internal.filtering`) import that one by name before this file runs,
and every caller reaches the private one through this module's globals.
"""

from hypothesis.internal import lambda_sources


def _unknown_lambda(f, *args, **kwargs):
    return "lambda: <unknown>"


lambda_sources._lambda_description = _unknown_lambda
