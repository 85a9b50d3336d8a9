import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from nacl.signing import SigningKey

from catalog.bundle_files import read_bundle_folder
from catalog.manifest import (
    SIGNATURE_FILE,
    canonical,
    public_key_of,
    sign,
    signature_file_text,
)
from catalog.services.signing import manifest_of_spec
from pixie.core.errors import PixieError
from pixie.core.keys import b64, key_fingerprint, key_from_b64


class Command(BaseCommand):
    help = (
        "For a publisher that signs outside Pixie: write bundle.signature.json into a bundle "
        "folder, signed with the private key in --key-file (base64 of a 32-byte Ed25519 "
        "seed). --new-key-file makes such a key file and prints its public key for the "
        "operator to register. Touches no database."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="The bundle folder to sign.")
        parser.add_argument("--key-file", help="The private key to sign with.")
        parser.add_argument("--new-key-file", help="Make a new private key in this file.")

    def handle(self, *args, path, key_file, new_key_file, **options):
        if new_key_file:
            seed = bytes(SigningKey.generate())
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
            try:
                fd = os.open(new_key_file, flags, 0o600)
            except FileExistsError:
                raise CommandError(
                    f"{new_key_file} exists; a key file is never overwritten."
                ) from None
            with os.fdopen(fd, "w") as out:
                out.write(b64(seed) + "\n")
            public = public_key_of(seed)
            self.stdout.write(
                f"Wrote a new private key to {new_key_file} (keep it secret).\n"
                f"Public key, for the operator: {b64(public)}\n"
                f"Fingerprint: {key_fingerprint(public)}"
            )
            return
        if not path or not key_file:
            raise CommandError("Give the bundle folder and --key-file (or --new-key-file).")
        seed = key_from_b64(Path(key_file).read_text().strip())
        if seed is None:
            raise CommandError(f"{key_file}: not the base64 of a 32-byte private key.")
        try:
            spec = read_bundle_folder(path)
        except PixieError as exc:
            lines = getattr(exc, "problems", [exc.message])
            raise CommandError(
                f"{path}: not signed.\n" + "\n".join(f"  - {p}" for p in lines)
            ) from None
        manifest = manifest_of_spec(spec)
        text = signature_file_text(
            signer=spec.publisher,
            public_key=public_key_of(seed),
            signature=sign(canonical(manifest), seed),
            manifest=manifest,
        )
        (Path(path) / SIGNATURE_FILE).write_text(text)
        self.stdout.write(
            f"Signed {spec.slug} {spec.version} as {spec.publisher} with key "
            f"{key_fingerprint(public_key_of(seed))}: {Path(path) / SIGNATURE_FILE}"
        )
