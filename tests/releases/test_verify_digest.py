"""Verification that trusts no database copy (issue 28, item 4): ``verify_release --manifest-sha256 HEX`` checks
``manifest.json`` against the digest recorded out of band at freeze (printed by ``freeze_release`` and
``export_release``, shown on the release page), so that with the directory's own manifest every file is checked
without the database; every tampering case fails naming its check, with and without the database."""

import hashlib
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.export import MANIFEST
from tests.releases.test_frozen import TAMPERING, _rewrite_consistently

pytestmark = pytest.mark.django_db


def export(frozen, tmp_path):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    return out


def recorded_digest(frozen) -> str:
    return release_selectors.release_manifest_sha256(release=frozen)


def test_the_recorded_digest_is_the_exported_manifests_and_the_release_page_shows_it(
    frozen, tmp_path, researcher, login
):
    out = export(frozen, tmp_path)
    digest = recorded_digest(frozen)

    assert digest == hashlib.sha256((out / MANIFEST).read_bytes()).hexdigest()
    html = login(researcher).get(f"/releases/facet/{frozen.version}/").content.decode()
    shown = html.split('id="manifest-digest"', 1)[1].split("</p>", 1)[0]
    assert f"verify_release DIR --manifest-sha256 {digest}" in shown


def test_export_release_prints_the_digest_to_keep(frozen, tmp_path, capsys):
    call_command("export_release", "facet", frozen.version, "--out", str(tmp_path / "out"))

    digest = recorded_digest(frozen)
    assert f"manifest.json SHA-256 {digest} (recorded at freeze)" in capsys.readouterr().out


def test_freeze_release_prints_the_digest_to_keep(accepted_items, capsys):
    call_command("freeze_release", "facet", "2.0.0", "--override-reason", "test subset")

    output = capsys.readouterr().out
    digest = re.search(r"manifest\.json SHA-256 ([0-9a-f]{64}): keep it outside this database", output).group(1)
    from annotation.releases.models import Release

    assert digest == recorded_digest(Release.objects.get(version="2.0.0"))


def test_with_the_digest_and_no_database_every_file_is_checked_and_the_output_says_so(frozen, tmp_path, capsys):
    out = export(frozen, tmp_path)

    call_command("verify_release", str(out), "--offline", "--manifest-sha256", recorded_digest(frozen).upper())

    output = capsys.readouterr().out
    assert "  own-manifest: passed: " in output
    assert "  manifest-digest: passed: manifest.json against the SHA-256 given with --manifest-sha256" in output
    assert "  recorded-manifest: not run (--offline was given)" in output
    assert output.rstrip().endswith(
        "passed own-manifest, manifest-digest; not run: recorded-manifest (--offline was given)"
    )


def test_with_the_digest_and_the_database_all_three_checks_run(frozen, tmp_path, capsys):
    out = export(frozen, tmp_path)

    call_command("verify_release", str(out), "--manifest-sha256", recorded_digest(frozen))

    assert capsys.readouterr().out.rstrip().endswith("passed own-manifest, recorded-manifest, manifest-digest")


# Without the database, the digest catches what own-manifest alone cannot (files and manifest changed together).
OFFLINE_FAILING = {
    "content only": {"own-manifest": "items.csv: SHA-256"},
    "content and its digest": {"manifest-digest": "manifest.json: SHA-256"},
    "manifest only": {"manifest-digest": "manifest.json: SHA-256"},
    "a file added": {"own-manifest": "notes.txt: not listed in the manifest"},
    "a file removed": {"own-manifest": "items.parquet: missing"},
}


@pytest.mark.parametrize("offline", [True, False], ids=["offline", "with the database"])
@pytest.mark.parametrize("case", list(TAMPERING))
def test_every_tampering_fails_with_the_digest_naming_the_checks_that_failed(frozen, tmp_path, capsys, case, offline):
    tamper, with_database = TAMPERING[case]
    failing = dict(OFFLINE_FAILING[case])
    if not offline:
        failing.update(with_database)
    out = export(frozen, tmp_path)
    digest = recorded_digest(frozen)
    tamper(out)

    with pytest.raises(CommandError) as raised:
        call_command("verify_release", str(out), "--manifest-sha256", digest, *(["--offline"] if offline else []))

    message = str(raised.value)
    captured = capsys.readouterr()
    for name in ("own-manifest", "recorded-manifest", "manifest-digest"):
        if name in failing:
            assert f"{name} (" in message
            assert f"  {name}: FAILED, " in captured.out
            assert f"  {name}: {failing[name]}" in captured.err
        else:
            assert f"{name} (" not in message
    assert ("  recorded-manifest: not run (--offline was given)" in captured.out) is offline


def test_a_database_copy_rewritten_with_its_digest_fails_the_given_digest(frozen, tmp_path, capsys, monkeypatch):
    """The owner rewrote the stored manifest and its digest with forged files: the directory then agrees with itself
    and with the database, and only the digest kept outside the database refuses it."""
    out = export(frozen, tmp_path)
    digest = recorded_digest(frozen)
    _rewrite_consistently(out, "items.csv", b"uid\nforged\n")
    rewritten = [
        (name, (out / name).stat().st_size, hashlib.sha256((out / name).read_bytes()).hexdigest())
        for name, _size, _sha in release_selectors.release_export_checksums(release=frozen)
    ]
    monkeypatch.setattr(release_selectors, "release_export_checksums", lambda *, release: rewritten)

    with pytest.raises(CommandError, match=r"failed manifest-digest \(1 problem\(s\)\)$"):
        call_command("verify_release", str(out), "--manifest-sha256", digest)

    captured = capsys.readouterr()
    assert "  recorded-manifest: passed: " in captured.out
    forged_digest = hashlib.sha256((out / MANIFEST).read_bytes()).hexdigest()
    assert f"  manifest-digest: manifest.json: SHA-256 {forged_digest} is not the {digest} given" in captured.err


@pytest.mark.parametrize("bad", ["abc", "g" * 64, "0" * 63])
def test_a_digest_that_is_not_64_hex_digits_is_refused(frozen, tmp_path, bad):
    out = export(frozen, tmp_path)

    with pytest.raises(CommandError, match="--manifest-sha256 expects 64 hexadecimal digits"):
        call_command("verify_release", str(out), "--manifest-sha256", bad)


def test_a_missing_manifest_fails_the_given_digest(frozen, tmp_path, capsys):
    out = export(frozen, tmp_path)
    digest = recorded_digest(frozen)
    (out / MANIFEST).unlink()

    with pytest.raises(CommandError, match=r"manifest-digest \(1 problem\(s\)\)"):
        call_command("verify_release", str(out), "--offline", "--manifest-sha256", digest)

    assert "  manifest-digest: manifest.json: missing" in capsys.readouterr().err
