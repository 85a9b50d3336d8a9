"""Django's "json" serialization format, the same text written faster: what
django-reversion stores for every object a revision records (and what dumpdata
writes), registered in its place through SERIALIZATION_MODULES.

Django's JSON serializer writes each object with ``json.dump`` to its stream, which
runs the standard library's encoder in Python; ``json.dumps`` of the same object, with
the same options, runs its C encoder and gives the same text. Recording an apply's
history serializes every row it wrote, so this is an eighth of the apply's time
(benchmarks/ANALYSIS.md). Reading is Django's own: the Deserializer is Django's.
"""

import json

from django.core.serializers import json as django_json

Deserializer = django_json.Deserializer


class Serializer(django_json.Serializer):
    def end_object(self, obj):
        indent = self.options.get("indent")
        if not self.first:
            self.stream.write("," if indent else ", ")
        if indent:
            self.stream.write("\n")
        self.stream.write(json.dumps(self.get_dump_object(obj), **self.json_kwargs))
