"""The OpenAPI schema as a client meets the API: every refusal in the shape it has.

drf-spectacular describes what a view answers when all goes well. The refusals come
from elsewhere (DRF's exception handler and pixie.core.web.api's, the parser, the permission
check), so PixieAutoSchema adds them to every operation. Every refusal has one shape,
the ``Error`` component (pixie.core.web.api: ``{"code", "detail", "problems"}``, plus ``fields``
when a serializer refused the body).

The public inbox is a plain Django view, which the generator does not see; the
postprocessing hook `inbox_operation` writes its entry.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework.permissions import AllowAny

from pixie.core.errors import ErrorCode
from pixie.core.web.api import StrictSerializer

ERROR = {
    "type": "object",
    "description": "A refusal. Every 4xx answer of the API has this shape.",
    "properties": {
        "code": {"$ref": "#/components/schemas/ErrorCode"},
        "detail": {"type": "string", "description": "What is wrong, for a person to read."},
        "problems": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "Every problem, each naming what is wrong (`name: ...`).",
        },
        "fields": {
            "type": "object",
            "description": (
                "Only when the body broke a serializer's rules: each field that is wrong, "
                "with its messages (`non_field_errors` for the body as a whole). An item of "
                "a list or a key of a map that is wrong nests the same way, under its index "
                "or key."
            ),
            "additionalProperties": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}]
            },
        },
    },
    "required": ["code", "detail", "problems"],
}
ERROR_CODE = {
    "type": "string",
    "enum": [code.value for code in ErrorCode],
    "description": (
        "Stable, for programs: what kind of refusal it is (`invalid`, `not_found`, "
        "`owner_required`, ...). Every code the API answers with is listed here "
        "(pixie.core.errors.ErrorCode); a new one is added to the list before any answer "
        "carries it."
    ),
}
COMPONENTS = {"Error": ERROR, "ErrorCode": ERROR_CODE}

WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def _refusal(description: str) -> dict:
    schema = {"$ref": "#/components/schemas/Error"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


class PixieAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with the refusals every operation can answer, and
    every request body that refuses unknown keys (pixie.core.web.api.StrictSerializer) saying so.

    Only AutoSchema's public methods are overridden (``resolve_serializer``,
    ``get_operation``); a subclass adds its own refusals in ``add_refusals``."""

    def resolve_serializer(self, serializer, direction, bypass_extensions=False):
        component = super().resolve_serializer(serializer, direction, bypass_extensions)
        strict = (
            issubclass(serializer, StrictSerializer)
            if isinstance(serializer, type)
            else isinstance(serializer, StrictSerializer)
        )
        if strict and component.schema is not None:
            component.schema["additionalProperties"] = False
        return component

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        for name, schema in COMPONENTS.items():
            registry.register_on_missing(
                ResolvedComponent(
                    name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
                )
            )
        self.add_refusals(operation["responses"])
        return operation

    def add_refusals(self, responses: dict) -> None:
        """Add to ``responses`` (code -> response) the refusals this operation can answer;
        a response the view declares itself is kept."""
        refusals = {
            "404": _refusal(
                "Not found: no such object, a workspace you are not a member of, or a page "
                "past the end"
            )
        }
        if not any(issubclass(p, AllowAny) for p in self.view.permission_classes):
            refusals["401"] = _refusal("No token, or a token that is not known")
        if self.method in WRITES:
            refusals["400"] = _refusal("The body is not JSON, or it broke a rule")
            refusals["403"] = _refusal("Only an owner of the workspace can do this")
            refusals["409"] = _refusal(
                "The object is not in a state that allows this (e.g. a plan already decided)"
            )
        for code, response in refusals.items():
            responses.setdefault(code, response)


class QueryParametersSchema(PixieAutoSchema):
    """A read whose query parameters can be wrong (pixie.core.errors.ValidationFailed): its
    400 is documented too."""

    def add_refusals(self, responses: dict) -> None:
        super().add_refusals(responses)
        responses.setdefault("400", _refusal("A query parameter is not what it should be"))


class AuditorReadSchema(QueryParametersSchema):
    """A read for auditors and operators only: its 403 is documented too."""

    def add_refusals(self, responses: dict) -> None:
        super().add_refusals(responses)
        responses.setdefault("403", _refusal("Only auditors and operators read this"))


class OperatorSchema(PixieAutoSchema):
    """Operators' endpoints outside any workspace (the sources the catalog follows):
    operators read and change, auditors read; everyone else is refused (403,
    ``operator_required``), a read too."""

    def add_refusals(self, responses: dict) -> None:
        super().add_refusals(responses)
        who = "an operator" if self.method in WRITES else "an operator or an auditor"
        responses["403"] = _refusal(f"Only {who} can do this")


ENVELOPE = {
    "type": "object",
    "description": "A sealed envelope from another Pixie server (pixie/sharing/envelopes.py).",
    "properties": {
        "pixie_envelope": {"type": "integer", "enum": [1]},
        "id": {"type": "string", "format": "uuid", "description": "The message id."},
        "to": {"type": "string", "description": "The recipient workspace's box key (base64)."},
        "sealed": {"type": "string", "description": "The sealed letter (base64)."},
    },
    "required": ["pixie_envelope", "id", "to", "sealed"],
    "additionalProperties": False,
}


def inbox_operation(result, generator, request, public):
    """Postprocessing hook: the public inbox's entry, which no DRF view carries."""
    result["paths"]["/api/inbox/"] = {
        "post": {
            "operationId": "inbox_receive",
            "summary": "Take a sealed envelope for a workspace on this server",
            "description": (
                "Public: no session, token or CSRF token. The envelope's seal and signature "
                "are its credentials; its size is checked before it is read."
            ),
            "tags": ["inbox"],
            "security": [],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ENVELOPE}},
            },
            "responses": {
                "202": {
                    "description": "Kept for its recipient",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"status": {"type": "string", "enum": ["accepted"]}},
                                "required": ["status"],
                            }
                        }
                    },
                },
                "400": _refusal(
                    "Not an envelope, or one this server refuses (seal, signature, recipient)"
                ),
                "409": _refusal("This message id was received before"),
                "413": _refusal("Larger than PIXIE_INBOX_MAX_BYTES"),
                "429": {
                    **_refusal(
                        "Past the recipient's quota of pending messages, or a rate limit on "
                        "senders who are not its contacts; nothing was stored"
                    ),
                    "headers": {
                        "Retry-After": {
                            "description": "Seconds to wait before sending again",
                            "schema": {"type": "integer", "minimum": 1},
                        }
                    },
                },
            },
        }
    }
    return result


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """pixie.core.people.tokens.ApiTokenAuthentication: ``Authorization: Token pixie_…``."""

    target_class = "pixie.core.people.tokens.ApiTokenAuthentication"
    name = "personalTokenAuth"
    priority = 1

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "A person's API token, made at /api/tokens/: `Token pixie_…`.",
        }
