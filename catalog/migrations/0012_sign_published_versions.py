"""Every publisher gets its signing key, and every version published before signing
existed is signed over its content as it stands now (so no published version is left
unsigned, and an apply can refuse any version that carries no signature)."""

from django.db import migrations
from nacl.signing import SigningKey

from catalog.manifest import ManifestFile, ManifestSkill, canonical, digest_of, manifest_of, sign
from catalog.skill_content import skill_digest
from pixie.core.keys import b64, server_tag, unwrap_private, wrap_private


def sign_published(apps, schema_editor):
    Publisher = apps.get_model("catalog", "Publisher")
    PublisherKey = apps.get_model("catalog", "PublisherKey")
    BundleVersion = apps.get_model("catalog", "BundleVersion")
    BundleSkill = apps.get_model("catalog", "BundleSkill")
    SkillFile = apps.get_model("catalog", "SkillFile")

    seeds = {}
    for publisher in Publisher.objects.all():
        key = PublisherKey.objects.filter(publisher=publisher, retired_at=None).first()
        if key is None:
            seed = bytes(SigningKey.generate())
            public = bytes(SigningKey(seed).verify_key)
            key = PublisherKey.objects.create(
                publisher=publisher,
                public_key=b64(public),
                private_wrapped=wrap_private(seed),
                tag=server_tag(f"{publisher.pk}:".encode() + public, person=b"pixie-pub-key"),
            )
        if key.private_wrapped is not None:
            seeds[publisher.pk] = (key, unwrap_private(key.private_wrapped))

    unsigned = BundleVersion.objects.exclude(status="draft").filter(signature="")
    for version in unsigned.select_related("bundle__publisher"):
        if version.bundle.publisher_id not in seeds:
            continue
        key, seed = seeds[version.bundle.publisher_id]
        entries = BundleSkill.objects.filter(bundle_version=version).order_by("position", "id")
        skills = []
        for entry in entries.select_related("skill_version__package"):
            skill_version = entry.skill_version
            files = tuple(
                ManifestFile(f.path, f.executable, f.size, f.blob_id)
                for f in SkillFile.objects.filter(skill_version=skill_version).order_by("path")
            )
            digest = skill_digest(
                name=skill_version.name,
                description=skill_version.description,
                body=skill_version.body,
                approvals=skill_version.approvals,
                frontmatter=skill_version.frontmatter,
                files=((f.path, f.executable, f.sha256) for f in files),
            )
            skills.append(ManifestSkill(skill_version.package.slug, digest, files))
        manifest = manifest_of(
            publisher=version.bundle.publisher.slug,
            bundle=version.bundle.slug,
            version=version.version,
            description=version.description,
            notes=version.notes,
            hosts=version.hosts.values_list("host", "port", "purpose"),
            credentials=version.credentials.values_list("name", "host", "purpose"),
            skills=skills,
        )
        data = canonical(manifest)
        # The historical model has no immutability guard: a queryset update, once.
        BundleVersion.objects.filter(pk=version.pk).update(
            manifest=data.decode("utf-8"),
            manifest_sha256=digest_of(data),
            signature=b64(sign(data, seed)),
            signing_key=key,
        )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0011_signing")]

    operations = [migrations.RunPython(sign_published, migrations.RunPython.noop)]
