"""A documented entry point kept where it was: ``import pixie.namespace`` gives the
module pixie.core.namespace.engine itself (the kernel moved into pixie/core/)."""

import sys

from pixie.core.namespace import engine

sys.modules[__name__] = engine
