"""Frozen means frozen, down to the byte: the export files are kept at freeze, so no later change of a live row
(item, taxonomy, screening, user) alters them; the database refuses to change or remove what a frozen release
holds, by any path; ``verify_release`` checks against the manifest recorded at freeze."""

import filecmp
import hashlib
import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F, ProtectedError, Value
from django.db.models.functions import Concat

from annotation.items import services
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemRevision,
    Scenario,
    ScenarioDomain,
)
from annotation.releases import record
from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.export import MANIFEST, layout_files
from annotation.releases.models import FrozenReleaseError, Release, ReleaseFile, ReleaseItem
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, RoundItem, ScreeningRound
from demo.base import DEMO_RELEASE, demo_seed
from tests.factories import make_frozen_release, make_item, make_review, make_screening_round, mcq_content

pytestmark = pytest.mark.django_db

FILES = layout_files(2)


def classified(n: int, dimension: Dimension | None = None) -> services.ItemState:
    """An item with every attribute the export writes: scenario (and its domain), emotions, crisis level,
    difficulty and metadata."""
    content = mcq_content()
    content["en"]["context"] = f"Scenario {n}: the night before moving abroad, you pack alone."
    content["zh"]["context"] = f"情境{n}：出国前一晚，你独自收拾行李。"
    return services.ItemState(
        dimension=dimension or Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        content=content,
        scenario=Scenario.objects.order_by("code")[n],
        emotions=list(EmotionCategory.objects.order_by("code")[n : n + 2]),
        crisis_level=CrisisLevel.objects.get(level=2),
        difficulty="hard",
        metadata={"source": "hand-written", "note": n},
    )


@pytest.fixture
def rich(taxonomy, lead, make_user, admin_user, fixed_clock):
    """Three fully classified items, accepted in a screening round (with agreement), then frozen."""
    default_criteria_create(Criterion)
    for n in range(3):
        services.item_create(
            benchmark=Benchmark.objects.get(slug="facet"), uid=f"rich-{n}", kind="mcq", state=classified(n), user=lead
        )
    reviewers = [make_user("expert", username=f"reviewer{i}") for i in range(2)]
    round = make_screening_round(user=lead, reviewers=reviewers, title="Before freeze")
    for ri in RoundItem.objects.filter(round=round).select_related("item"):
        for assignment in ri.assignments.all():
            make_review(round=round, uid=ri.item.uid, reviewer=assignment.reviewer, decision="accept")
    screening.round_close(round=round, user=lead)
    return make_frozen_release(version="1.0.0", title="Rich", user=admin_user, override_reason="three items")


def _dimension() -> Dimension:
    return Item.objects.get(uid="rich-0").dimension


def change_status_by_decision(lead):
    services.item_status_decide(
        item=Item.objects.get(uid="rich-0"),
        status="rejected",
        user=lead,
        reason="second thoughts",
        source="lead_decision",
    )


def change_status_by_reimport(lead):
    line = next(
        json.loads(line)
        for line in release_selectors.release_export_files(release=Release.objects.get())[
            "items.bilingual.jsonl"
        ].splitlines()
        if json.loads(line)["uid"] == "rich-1"
    )
    services.items_import(data=json.dumps({**line, "status": "draft"}).encode(), user=lead)
    assert Item.objects.get(uid="rich-1").status == "draft"


def screen_again(lead):
    services.item_status_decide(
        item=Item.objects.get(uid="rich-2"), status="draft", user=lead, reason="look again", source="lead_decision"
    )
    reviewers = list(get_user_model().objects.filter(username__startswith="reviewer"))
    benchmark = Item.objects.get(uid="rich-2").benchmark.slug
    round = make_screening_round(user=lead, reviewers=reviewers, title="After freeze", benchmark=benchmark)
    for assignment in RoundItem.objects.get(round=round, item__uid="rich-2").assignments.all():
        make_review(round=round, uid="rich-2", reviewer=assignment.reviewer, decision="reject", comment="no")
    screening.round_close(round=round, user=lead, unreviewed="return_to_authors")


def revise_content(lead):
    item = Item.objects.get(uid="rich-0")
    state = classified(0, dimension=item.dimension)
    state.content["en"]["question"] = "A later wording of the question?"
    state.metadata = {"source": "rewritten"}
    services.item_revise(item=item, state=state, user=lead, message="after the freeze")


# Each change, and whether the export reads the changed field (written from the live rows now, the files would
# differ); the others show that the export never depended on them.
LIVE_CHANGES = {
    "item status (lead decision)": (change_status_by_decision, True),
    "item status (re-import)": (change_status_by_reimport, True),
    "item origin": (lambda lead: Item.objects.filter(uid="rich-0").update(origin="llm_draft"), True),
    "item uid": (lambda lead: Item.objects.filter(uid="rich-1").update(uid="rich-1-renamed"), True),
    "item kind": (lambda lead: Item.objects.filter(uid="rich-2").update(kind="multi_turn_choice"), True),
    "item metadata": (lambda lead: Item.objects.update(metadata={"changed": True}), False),
    "item difficulty": (lambda lead: Item.objects.update(difficulty="easy"), False),
    "benchmark slug and names": (
        lambda lead: Benchmark.objects.filter(slug="facet").update(slug="facet-renamed", name_en="R", name_zh="改"),
        True,
    ),
    "dimension code, names and definitions": (
        lambda lead: Dimension.objects.filter(pk=_dimension().pk).update(
            code="renamed_dimension", name_en="Renamed", name_zh="改名", definition_en="New.", definition_zh="新。"
        ),
        True,
    ),
    "dimension names only": (
        lambda lead: Dimension.objects.filter(pk=_dimension().pk).update(name_en="Renamed", name_zh="改名"),
        True,
    ),
    "module code and names": (
        lambda lead: Dimension.objects.filter(pk=_dimension().parent_id).update(
            code="renamed_module", name_en="Renamed module", name_zh="改名模块"
        ),
        True,
    ),
    "dimension target": (lambda lead: Dimension.objects.filter(pk=_dimension().pk).update(target_items=3), False),
    "scenario code": (lambda lead: Scenario.objects.filter(items__uid="rich-0").update(code="renamed"), True),
    "scenario domain": (
        lambda lead: Scenario.objects.filter(items__uid="rich-0").update(
            domain=ScenarioDomain.objects.exclude(scenarios__items__uid="rich-0").order_by("code").first()
        ),
        True,
    ),
    "domain code": (
        lambda lead: ScenarioDomain.objects.filter(scenarios__items__uid="rich-1").update(code="renamed_domain"),
        True,
    ),
    "domain names": (lambda lead: ScenarioDomain.objects.update(name_en="Renamed", name_zh="改名"), False),
    "emotion names and valence": (
        lambda lead: EmotionCategory.objects.update(name_en="Renamed", name_zh="改名", valence="neutral"),
        False,
    ),
    "crisis level names": (
        lambda lead: CrisisLevel.objects.filter(level=2).update(name_en="Renamed", name_zh="改名"),
        False,
    ),
    "criterion names": (lambda lead: Criterion.objects.update(name_en="Renamed", name_zh="改名"), True),
    "round title": (lambda lead: ScreeningRound.objects.update(title="Renamed round"), True),
    "usernames": (
        lambda lead: get_user_model().objects.update(username=Concat(F("username"), Value("-renamed"))),
        True,
    ),
    # A new revision of an accepted item also returns it to draft, and the status is what a rebuild reads.
    "new revision": (revise_content, True),
    "screened again": (screen_again, True),
}


@pytest.mark.parametrize("change", list(LIVE_CHANGES), ids=list(LIVE_CHANGES))
def test_export_is_byte_identical_after_a_live_change(rich, lead, change):
    before = release_selectors.release_export_files(release=rich)
    archive = release_selectors.release_export_zip(release=rich)
    assert "#### Round 1: Before freeze" in before["README.md"].decode()
    mutate, read_by_export = LIVE_CHANGES[change]
    mutate(lead)
    release = Release.objects.get(pk=rich.pk)
    assert release_selectors.release_export_files(release=release) == before
    assert release_selectors.release_export_zip(release=release) == archive
    rewritten = release_selectors.release_files_build(
        release=release, entries=release_selectors.release_entries(release)
    )
    assert (rewritten != before) is read_by_export


def test_every_live_change_together_leaves_the_export_and_its_verification_intact(rich, lead, tmp_path):
    first = tmp_path / "first"
    releases.release_export_to_directory(release=rich, out=first)
    for mutate, _read_by_export in LIVE_CHANGES.values():
        mutate(lead)
    second = tmp_path / "second"
    releases.release_export_to_directory(release=Release.objects.get(pk=rich.pk), out=second)
    comparison = filecmp.dircmp(first, second)
    assert sorted(comparison.same_files) == FILES and not comparison.diff_files
    assert all(filecmp.cmp(first / name, second / name, shallow=False) for name in FILES)
    call_command("verify_release", str(second))


def test_demo_release_export_does_not_change_when_an_item_changes_status(db, tmp_path, capsys):
    demo_seed()
    release = Release.objects.get(benchmark__slug="facet", version=DEMO_RELEASE)
    call_command("export_release", "facet", DEMO_RELEASE, "--out", str(tmp_path / "before"))
    entry = release.entries.select_related("item").order_by("item__uid").first()
    line = next(
        json.loads(line)
        for line in (services.FIXTURES / "demo_items.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["uid"] == entry.item.uid
    )
    lead = get_user_model().objects.get(username="lead")
    services.items_import(data=json.dumps({**line, "status": "rejected"}).encode(), user=lead)
    assert Item.objects.get(pk=entry.item_id).status == "rejected"
    call_command("export_release", "facet", DEMO_RELEASE, "--out", str(tmp_path / "after"))
    comparison = filecmp.dircmp(tmp_path / "before", tmp_path / "after")
    assert not (comparison.left_only or comparison.right_only or comparison.diff_files)
    for name in comparison.same_files:
        assert (tmp_path / "before" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()
    capsys.readouterr()
    call_command("verify_release", str(tmp_path / "after"))
    output = capsys.readouterr().out
    assert (
        "recorded-manifest: passed: every file, manifest.json included, against the manifest recorded in the "
        "database when facet 0.1.0 was frozen"
    ) in output
    assert "passed own-manifest, recorded-manifest" in output


# --- the manifest recorded at freeze ----------------------------------------------------------------------


def test_files_and_their_manifest_are_recorded_at_freeze(frozen):
    rows = list(ReleaseFile.objects.filter(release=frozen).order_by("name"))
    assert [f.name for f in rows] == FILES
    for f in rows:
        assert f.size == len(bytes(f.content)) and f.sha256 == hashlib.sha256(bytes(f.content)).hexdigest()
    manifest = json.loads(bytes(rows[-1].content))
    assert manifest["files"] == {f.name: {"bytes": f.size, "sha256": f.sha256} for f in rows if f.name != MANIFEST}
    assert release_selectors.release_export_checksums(release=frozen) == [(f.name, f.size, f.sha256) for f in rows]


def test_a_draft_has_no_files_and_a_refused_freeze_writes_none(accepted_items):
    release = releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="9.0.0", title="Draft", user=None
    )
    with pytest.raises(ValidationError, match="Validation failed"):
        releases.release_freeze(release=release, user=None)
    assert not ReleaseFile.objects.exists()


def test_release_page_shows_the_recorded_checksums_without_exporting(frozen, admin_user, login, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the page wrote the export again")

    monkeypatch.setattr(release_selectors, "export_files", refuse)
    monkeypatch.setattr(record, "export_records", refuse)
    monkeypatch.setattr(record, "card_facts", refuse)
    page = login(admin_user).get(f"/releases/facet/{frozen.version}/").content.decode()
    for name, _size, digest in release_selectors.release_export_checksums(release=frozen):
        assert digest in page and name in page
    archive = zipfile.ZipFile(
        io.BytesIO(login(admin_user).get(f"/releases/facet/{frozen.version}/download.zip").content)
    )
    assert archive.read(f"facet-{frozen.version}/README.md") == bytes(frozen.files.get(name="README.md").content)


# --- verify_release ---------------------------------------------------------------------------------------


def _rewrite_consistently(out, name: str, data: bytes) -> None:
    """Change a file and its line in the directory's manifest, so that the directory agrees with itself."""
    (out / name).write_bytes(data)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def test_verify_runs_both_checks_and_names_them(frozen, tmp_path, capsys):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)

    call_command("verify_release", str(out))

    output = capsys.readouterr().out
    assert "  own-manifest: passed: every file against the directory's own manifest.json" in output
    assert (
        "  recorded-manifest: passed: every file, manifest.json included, against the manifest recorded in the "
        "database when facet 1.0.0 was frozen (2026-01-02T03:04:05Z)"
    ) in output
    assert output.rstrip().endswith(f"{out}: passed own-manifest, recorded-manifest")


def _tamper_content(out) -> None:
    data = bytearray((out / "items.csv").read_bytes())
    data[100] ^= 1
    (out / "items.csv").write_bytes(bytes(data))


def _tamper_content_and_digest(out) -> None:
    _rewrite_consistently(out, "items.csv", b"uid\nforged\n")


def _tamper_manifest(out) -> None:
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["release"]["title"] = "A better title"
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _add_a_file(out) -> None:
    (out / "notes.txt").write_text("added later")


def _remove_a_file(out) -> None:
    (out / "items.parquet").unlink()


# tampering: which checks fail, and a problem each names
TAMPERING = {
    "content only": (
        _tamper_content,
        {"own-manifest": "items.csv: SHA-256", "recorded-manifest": "items.csv: SHA-256"},
    ),
    "content and its digest": (
        _tamper_content_and_digest,
        {"recorded-manifest": "manifest.json: SHA-256"},
    ),
    "manifest only": (_tamper_manifest, {"recorded-manifest": "manifest.json: SHA-256"}),
    "a file added": (
        _add_a_file,
        {"own-manifest": "notes.txt: not listed in the manifest", "recorded-manifest": "notes.txt: not listed"},
    ),
    "a file removed": (
        _remove_a_file,
        {"own-manifest": "items.parquet: missing", "recorded-manifest": "items.parquet: missing"},
    ),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_verify_fails_on_every_tampering_naming_the_checks_that_failed(frozen, tmp_path, capsys, case):
    tamper, failing = TAMPERING[case]
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    tamper(out)

    with pytest.raises(CommandError) as raised:
        call_command("verify_release", str(out))

    message = str(raised.value)
    assert message.startswith(f"{out}: failed ")
    captured = capsys.readouterr()
    for name in ("own-manifest", "recorded-manifest"):
        if name in failing:
            assert f"{name} (" in message
            assert f"  {name}: FAILED, " in captured.out
            assert f"  {name}: {failing[name]}" in captured.err
        else:
            assert f"{name} (" not in message
            assert f"  {name}: passed: " in captured.out


def test_verify_fails_when_the_database_copy_was_rewritten_with_its_digest(frozen, tmp_path, capsys, monkeypatch):
    """The table owner can rewrite a stored file's bytes and SHA-256 together: the directory exported from it then
    matches the database, and only its own manifest (written at freeze, listing the old digest) catches it."""
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    forged = b"uid\nforged\n"
    (out / "items.csv").write_bytes(forged)
    recorded = release_selectors.release_export_checksums(release=frozen)
    rewritten = [
        (name, len(forged), hashlib.sha256(forged).hexdigest()) if name == "items.csv" else (name, size, digest)
        for name, size, digest in recorded
    ]
    monkeypatch.setattr(release_selectors, "release_export_checksums", lambda *, release: rewritten)

    with pytest.raises(CommandError, match=r": failed own-manifest \(1 problem\(s\)\)$"):
        call_command("verify_release", str(out))

    captured = capsys.readouterr()
    assert "  recorded-manifest: passed: " in captured.out
    assert "  own-manifest: items.csv: SHA-256" in captured.err


def test_verify_offline_runs_only_the_directory_check_and_says_so(frozen, tmp_path, capsys):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    _tamper_content_and_digest(out)

    call_command("verify_release", str(out), "--offline")

    output = capsys.readouterr().out
    assert "  own-manifest: passed: " in output
    assert "  recorded-manifest: not run (--offline was given)" in output
    assert output.rstrip().endswith("passed own-manifest; not run: recorded-manifest (--offline was given)")


def test_verify_falls_back_to_the_directory_manifest_and_says_why(frozen, tmp_path, capsys, monkeypatch):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["release"]["version"] = "9.9.9"
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    call_command("verify_release", str(out))
    assert "recorded-manifest: not run (this database holds no frozen release by that name)" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"failed recorded-manifest \(1 problem\(s\)\)"):
        call_command("verify_release", str(out), "--release", "facet", "1.0.0")
    assert "recorded-manifest: manifest.json: SHA-256" in capsys.readouterr().err

    def unreadable(*args, **kwargs):
        raise DatabaseError("no such table: releases_release")

    monkeypatch.setattr(Release.objects, "filter", unreadable)
    call_command("verify_release", str(out))
    assert "recorded-manifest: not run (the database could not be read)" in capsys.readouterr().out


def test_verify_without_a_manifest_needs_the_release_named(frozen, tmp_path, capsys):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    (out / MANIFEST).unlink()
    with pytest.raises(CommandError, match=r"failed own-manifest \(1 problem\(s\)\)$"):
        call_command("verify_release", str(out))
    assert "own-manifest: manifest.json is missing" in capsys.readouterr().err
    with pytest.raises(CommandError, match=r"failed own-manifest \(1 problem\(s\)\), recorded-manifest \(1 "):
        call_command("verify_release", str(out), "--release", "facet", "1.0.0")
    assert "recorded-manifest: manifest.json: missing" in capsys.readouterr().err


# --- guards -----------------------------------------------------------------------------------------------


def _refused(sql: str, params: tuple = ()) -> None:
    with (
        pytest.raises(IntegrityError, match="frozen release cannot change|pinned by a frozen release"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)


def test_database_refuses_deleting_a_frozen_release_its_items_and_its_files(frozen):
    _refused("DELETE FROM releases_releaseitem WHERE release_id = %s", (frozen.pk,))
    _refused("DELETE FROM releases_releaseitem")
    _refused("DELETE FROM releases_release WHERE id = %s", (frozen.pk,))
    _refused("DELETE FROM releases_releasefile WHERE release_id = %s", (frozen.pk,))
    _refused("UPDATE releases_releasefile SET content = %s", (b"forged",))
    _refused(
        "INSERT INTO releases_releasefile (release_id, name, content, size, sha256) VALUES (%s, 'x', %s, 0, '')",
        (frozen.pk, b""),
    )
    assert frozen.entries.count() == 4 and frozen.files.count() == len(FILES)


def test_the_orm_refuses_changing_a_frozen_release_files(frozen):
    file = frozen.files.get(name="README.md")
    attempts = [
        lambda: ReleaseFile.objects.filter(release=frozen).update(content=b"forged"),
        lambda: ReleaseFile.objects.filter(release=frozen).delete(),
        lambda: file.delete(),
        lambda: ReleaseFile(release=frozen, name="extra.txt", content=b"", size=0, sha256="").save(),
        lambda: ReleaseFile.objects.bulk_create(
            [ReleaseFile(release=frozen, name="x", content=b"", size=0, sha256="")]
        ),
    ]
    for attempt in attempts:
        with pytest.raises(FrozenReleaseError, match="The files of a frozen release cannot change."):
            attempt()


def test_revisions_pinned_by_a_frozen_release_cannot_be_deleted(frozen, lead):
    item = Item.objects.get(uid="rel-0")
    pinned = ReleaseItem.objects.get(release=frozen, item=item).revision
    services.item_revise(
        item=item, state=services.ItemState(dimension=item.dimension, content=mcq_content()), user=lead
    )
    assert Item.objects.get(pk=item.pk).current_revision_id != pinned.pk
    with pytest.raises((ProtectedError, ValidationError)):
        ItemRevision.objects.filter(pk=pinned.pk).delete()
    with pytest.raises(IntegrityError, match="pinned by a frozen release"), transaction.atomic():
        ItemRevision.objects.filter(pk=pinned.pk)._raw_delete(connection.alias)
    _refused("DELETE FROM items_itemrevision WHERE id = %s", (pinned.pk,))
    assert ItemRevision.objects.filter(pk=pinned.pk).exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
def test_postgresql_refuses_truncating_what_a_frozen_release_holds(transactional_db, frozen):
    # Committed rows (TRUNCATE refuses tables with pending deferred checks); the flush after the test truncates
    # every table, which the guard allows.
    for sql in (
        "TRUNCATE releases_releaseitem",
        "TRUNCATE releases_releasefile",
        "TRUNCATE releases_release CASCADE",
        "TRUNCATE items_itemrevision CASCADE",
    ):
        _refused(sql)
    assert frozen.entries.count() == 4 and frozen.files.count() == len(FILES)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
def test_postgresql_allows_truncating_release_tables_without_a_frozen_release(transactional_db, accepted_items):
    releases.release_create(benchmark=Benchmark.objects.get(slug="facet"), version="8.0.0", title="Draft", user=None)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE releases_releaseitem, releases_releasefile")
    assert not ReleaseItem.objects.exists()


def test_flush_still_empties_a_database_holding_a_frozen_release(transactional_db, taxonomy):
    make_item(uid="flush-me")
    release = make_frozen_release(version="1.0.0", filters={"status": "draft"}, override_reason="flush test")
    assert release.files.exists()
    call_command("flush", interactive=False, verbosity=0)
    assert not Release.objects.exists() and not ReleaseItem.objects.exists() and not ItemRevision.objects.exists()
    # The guards are on again afterwards.
    services.taxonomy_load_fixture("taxonomy.json")
    make_item(uid="after-flush")
    frozen = make_frozen_release(version="1.0.1", filters={"status": "draft"}, override_reason="after flush")
    _refused("DELETE FROM releases_releaseitem WHERE release_id = %s", (frozen.pk,))
