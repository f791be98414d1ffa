"""Schemathesis hooks for the conformance run: a request valid under the real platform's
document must not be refused for a reason of shape.

Ferry may still refuse a valid request for a rule no schema states (an account that is not
imported, a document that is not in the file store, a transaction dated in the future, a
blank string or a decimal string without a digit: the real platform's REST framework
refuses those by default, which its document does not state; a number beyond what can be
stored), and those answers are the right ones; but a refusal whose field
errors are shape errors (`required`, `invalid`, `invalid_choice`, `null`, `max_length`,
`unknown_field`, ...) means Ferry is stricter than the real platform, which this check
reports.
"""

import schemathesis
import hypothesis_lambdas  # noqa: F401  (see that file)

SHAPE_CODES = {
    "required",
    "null",
    "invalid",
    "invalid_choice",
    "max_length",
    "min_length",
    "max_decimal_places",
    "unknown_field",
    "parse_error",
    "unsupported_media_type",
}


def sent_at(body, attr):
    """The value the request sent at the dot path `attr` (None when there is none)."""
    value = body
    for part in (attr or "").split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def no_number_at_all(value):
    """A decimal string the real document's pattern allows that holds no digit (`""`, `"-"`,
    `"."`, `"-."`): its REST framework refuses those too ("A valid number is required.")."""
    return isinstance(value, str) and not any(character.isdigit() for character in value)


@schemathesis.check
def not_refused_for_its_shape(ctx, response, case):
    """A request valid under the real document is never refused for a shape error."""
    if response.status_code not in (400, 413, 415, 422):
        return
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"{response.status_code} without a JSON body")
    errors = body.get("errors") or []
    codes = {body.get("code"), body.get("error_code")}
    shape = [
        f"{error.get('attr')}: {error.get('code')} ({error.get('detail')})"
        for error in errors
        if isinstance(error, dict)
        and error.get("code") in SHAPE_CODES
        and not (
            error.get("code") == "invalid"
            and no_number_at_all(sent_at(case.body, error.get("attr")))
        )
    ]
    if shape or codes & {"parse_error", "unsupported_media_type"}:
        raise AssertionError(
            "a request valid under the real document was refused for its shape: "
            + "; ".join(shape or [str(body.get("detail"))])
        )
    if response.status_code == 413:
        raise AssertionError("a request valid under the real document was too large")
