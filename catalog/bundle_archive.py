"""A bundle version as a .zip in the bundle folder format (what the API serves)."""

from __future__ import annotations

import zipfile

from catalog.bundle_files import SKILL_FILE, BundleSpec, manifest_text, skill_md_text
from catalog.manifest import SIGNATURE_FILE

# A fixed date: the same version always gives the same bytes.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def bundle_zip_entries(spec: BundleSpec):
    """(path, bytes, executable) of every file write_bundle_folder writes, in order."""
    yield "bundle.toml", manifest_text(spec).encode("utf-8"), False
    if spec.signature is not None:
        yield SIGNATURE_FILE, spec.signature.as_json().encode("utf-8"), False
    for skill in spec.skills:
        yield f"skills/{skill.slug}/{SKILL_FILE}", skill_md_text(skill).encode("utf-8"), False
        for file in skill.files:
            yield f"skills/{skill.slug}/{file.path}", file.data, file.executable


def write_bundle_zip(spec: BundleSpec, fileobj) -> None:
    """Write the bundle folder, bundle.toml at the archive's root, into a binary file
    object; each entry carries its unix mode (0755 for executables, else 0644)."""
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data, executable in bundle_zip_entries(spec):
            info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            info.create_system = 3  # unix, so unzip and Python read the mode below
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
