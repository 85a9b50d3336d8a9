"""The API's JSON parser: strict JSON (pixie.core.web.strict_json), refusals as 400 with a message,
and bodies over DATA_UPLOAD_MAX_MEMORY_SIZE refused before a byte is parsed."""

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from pixie.core.web.strict_json import StrictJSONError, loads
from pixie.core.web.whole_numbers import whole_number


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        context = parser_context or {}
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = context.get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        length = whole_number(declared or "", digits=30)  # longer: far past the limit
        if length is not None and length > limit:
            raise ParseError(f"The body is larger than {limit} bytes.")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise ParseError(f"The body is larger than {limit} bytes.")
        encoding = context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            return loads(raw.decode(encoding))
        except UnicodeDecodeError:
            raise ParseError(f"The body is not {encoding} text.") from None
        except StrictJSONError as exc:
            raise ParseError(f"The JSON body was refused: {exc}.") from None
