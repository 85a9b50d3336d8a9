"""A documented entry point kept where it was: ``import pixie.skillshare`` gives the
module pixie.core.skillshare itself (the kernel moved into pixie/core/)."""

import sys

from pixie.core import skillshare

sys.modules[__name__] = skillshare
