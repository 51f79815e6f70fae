"""Key press to next comparison in the browser: an expert labels comparisons by key on a database of N items.

    .venv/bin/python scripts/bench_labelling.py [--items 100000] [--labels 60] [--think 1.0] [--workers 2]
    DATABASE_URL=postgres://USER@HOST/benchlabel .venv/bin/python scripts/bench_labelling.py --items 100000

Builds the data once (reused when the database already holds it; a database holding items this script did not make
is refused): N items, a quarter of them open prompts with two model responses of realistic length in each language,
one comparison set over them (one comparison per prompt and language) labelled by eleven experts, two per
comparison, about 90% done, except the benchmark's expert's first ``--labels`` + 10 comparisons. Without
DATABASE_URL a throwaway SQLite file is used. Then starts gunicorn (DEBUG off, as ``make serve`` but over plain
HTTP on 127.0.0.1), signs the expert in with Playwright driving /usr/bin/chromium and labels ``--labels``
comparisons with the keys (a side, a margin, Enter), waiting ``--think`` seconds on each comparison as an expert
reads it. It prints p50 and p95 of key press (Enter) to the next comparison painted, measured in the page
(``performance.now()`` from the key event to the frame after the new comparison is in the document, or after the
new page loaded when the browser navigated), how many presses were shown in place, and the server time of the
requests behind them from gunicorn's access log: the label POST (with the page it redirects to) and the page
fetched ahead.
"""

import argparse
import os
import random
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "benchlabel_expert"
PASSWORD = "bench-pass-2026"
CHROMIUM = "/usr/bin/chromium"

# Records, in every document, Enter's time and when the next comparison is painted: in place (a mutation brings a
# new #label-page) or in a new document (the press's time travels in sessionStorage, on the shared time origin).
RECORDER = """
(() => {
  const bench = (window.__bench = { t0: 0, from: "", shown: [] });
  const page = () => document.getElementById("label-page");
  window.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    bench.t0 = event.timeStamp;
    bench.from = page() ? page().dataset.url : "";
    sessionStorage.setItem("bench-press", String(performance.timeOrigin + event.timeStamp));
  }, true);
  const painted = (start, how) => requestAnimationFrame(() => setTimeout(() => {
    bench.shown.push({ ms: performance.now() - start, how });
  }, 0));
  new MutationObserver(() => {
    const now = page();
    if (!bench.t0 || !now || now.dataset.url === bench.from) return;
    const start = bench.t0;
    bench.t0 = 0;
    sessionStorage.removeItem("bench-press");
    painted(start, "in place");
  }).observe(document, { childList: true, subtree: true });
  window.addEventListener("load", () => {
    const pressed = Number(sessionStorage.getItem("bench-press") || 0);
    sessionStorage.removeItem("bench-press");
    if (pressed && page()) painted(pressed - performance.timeOrigin, "new page");
  });
})();
"""


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    if "DATABASE_URL" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="eistudio-bench-labelling-"))
        os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite3'}"
    os.environ.setdefault("DEBUG", "1")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()


SENTENCES = {
    "en": [
        "That sounds really hard, and it makes sense that you feel worn out.",
        "It is okay to be upset about this; anyone would be in your place.",
        "Could you tell me a little more about what happened after that?",
        "You did what you could with what you knew at the time.",
        "Maybe a short walk or a call with a friend would help tonight.",
        "Your feelings are telling you that this matters to you.",
        "Many people in your situation feel both relief and guilt at once.",
        "Try writing down the three things that worry you most, then pick one.",
    ],
    "zh": [
        "这听起来真的很难，你感到疲惫是可以理解的。",
        "为这件事难过是正常的，换作任何人都会这样。",
        "你愿意多说一点之后发生了什么吗？",
        "在当时的情况下，你已经尽力了。",
        "今晚也许可以散散步，或者给朋友打个电话。",
        "你的感受说明这件事对你很重要。",
        "很多人在这种情况下会同时感到轻松和内疚。",
        "试着写下最让你担心的三件事，然后先处理其中一件。",
    ],
}


def reply(rng: random.Random, language: str, model: str) -> str:
    """Return a reply of 6 to 12 sentences in two paragraphs (about 80 to 160 words)."""
    chosen = [rng.choice(SENTENCES[language]) for _ in range(rng.randint(6, 12))]
    cut = len(chosen) // 2
    glue = " " if language == "en" else ""
    return f"{glue.join(chosen[:cut])}\n\n{glue.join(chosen[cut:])} ({model})"


def build(n: int, reserved: int, rng: random.Random) -> None:
    """Write the benchmark's data (see the module docstring) with bulk writes."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation.items import services
    from annotation.items.content import searchable_text
    from annotation.items.models import Benchmark, Dimension, Item, ItemRevision
    from annotation.items.synthetic import scenarios
    from annotation.labelling import services as labelling_services
    from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse

    started = time.perf_counter()
    if not Benchmark.objects.filter(slug="facet").exists():
        services.taxonomy_load_fixture("taxonomy.json")
    users = get_user_model().objects
    researcher = users.create_user("benchlabel_researcher", password=PASSWORD)
    researcher.groups.add(Group.objects.get(name="researcher"))
    team = []
    for i in range(11):
        user = users.create_user(MARKER if i == 0 else f"benchlabel_{i}", password=PASSWORD)
        user.groups.add(Group.objects.get(name="expert"))
        team.append(user)
    benchmark = Benchmark.objects.get(slug="facet")
    dimension = Dimension.objects.filter(benchmark=benchmark, subjective=True, children__isnull=True).first()
    leaves = list(Dimension.objects.filter(benchmark=benchmark, children__isnull=True))
    texts = scenarios(min(n, 5000), seed=rng.randrange(2**31))
    Item.objects.bulk_create(
        [
            Item(
                uid=f"benchlabel-{i:06d}",
                benchmark=benchmark,
                dimension=dimension if i % 4 == 0 else rng.choice(leaves),
                kind="open_prompt" if i % 4 == 0 else "mcq",
                status="accepted",
                has_en=True,
                has_zh=True,
                created_by=researcher,
                updated_by=researcher,
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    items = list(Item.objects.filter(uid__startswith="benchlabel-").order_by("id"))
    revisions = []
    for item in items:
        text = texts[item.pk % len(texts)]
        if item.kind == "open_prompt":
            content = {"en": {"prompt": text["en"]}, "zh": {"prompt": text["zh"]}}
        else:
            content = {
                "en": {"context": text["en"], "question": "How does she feel?", "options": ["a", "b", "c", "d"]},
                "zh": {"context": text["zh"], "question": "她感觉如何？", "options": ["甲", "乙", "丙", "丁"]},
                "answer": 0,
            }
        revisions.append(
            ItemRevision(item=item, number=1, content=content, content_hash=f"bl-{item.pk}", author=researcher)
        )
    ItemRevision.objects.bulk_create(revisions, batch_size=2000)
    current = {r.item_id: r for r in ItemRevision.objects.filter(item__uid__startswith="benchlabel-")}
    for item in items:
        item.current_revision = current[item.pk]
        item.search_text = searchable_text(current[item.pk].content)
    Item.objects.bulk_update(items, ["current_revision", "search_text"], batch_size=2000)
    del revisions, current
    open_prompts = [item for item in items if item.kind == "open_prompt"]
    ModelResponse.objects.bulk_create(
        [
            ModelResponse(item=item, language=lang, model_name=m, text=reply(rng, lang, m))
            for item in open_prompts
            for lang in ("en", "zh")
            for m in ("model-a", "model-b")
        ],
        batch_size=5000,
    )
    pairs: dict[tuple[int, str], list] = {}
    for response in ModelResponse.objects.filter(item__uid__startswith="benchlabel-").order_by("model_name"):
        pairs.setdefault((response.item_id, response.language), []).append(response)
    comparison_set = ComparisonSet.objects.create(name="bench labelling", benchmark=benchmark, created_by=researcher)
    comparison_set.experts.set(team)
    Comparison.objects.bulk_create(
        [
            Comparison(
                comparison_set=comparison_set,
                item_id=item_id,
                language=lang,
                dimension=dimension,
                response_a=responses[0],
                response_b=responses[1],
            )
            for (item_id, lang), responses in pairs.items()
        ],
        batch_size=5000,
    )
    ids = list(Comparison.objects.filter(comparison_set=comparison_set).order_by("pk").values_list("pk", flat=True))
    mine = 0
    for start in range(0, len(ids), 5000):
        chunk = [
            LabelAssignment(
                comparison_id=pk,
                comparison_set=comparison_set,
                expert=team[(k + j * 3) % len(team)],
                shown_order=rng.choice(["AB", "BA"]),
                position=k,
            )
            for k, pk in enumerate(ids[start : start + 5000], start)
            for j in range(2)
        ]
        LabelAssignment.objects.bulk_create(chunk, batch_size=5000)
        labels = []
        for a in chunk:
            if a.expert_id == team[0].pk:
                mine += 1
                if mine <= reserved:
                    continue
            if rng.random() < 0.9:
                labels.append(ExpertLabel(assignment=a, score=rng.randint(-3, 3), shown_order=a.shown_order))
        ExpertLabel.objects.bulk_create(labels, batch_size=5000)
    labelling_services.comparison_set_recount(comparison_set=comparison_set)
    print(
        f"built {n} items, {len(ids)} comparisons, {2 * len(ids)} assignments in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(workers: int, tmp: Path) -> tuple[subprocess.Popen, int, Path]:
    """Start gunicorn with DEBUG off on plain HTTP; return it, its port and its access log."""
    port = free_port()
    test_only = {"DJANGO_SETTINGS_MODULE", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="localhost,127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        STATIC_ROOT=str(tmp / "static"),
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    log = tmp / "access.log"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--config",
            "python:config.gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--access-logfile",
            str(log),
            "--access-logformat",
            "%(m)s %(U)s %(s)s %(D)s purpose=%({purpose}i)s",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return server, port, log
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("gunicorn did not start") from None
            time.sleep(0.3)


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return f"p50 {statistics.median(ordered):7.1f} ms, p95 {p95:7.1f} ms ({len(ordered)})"


def label_by_keys(url: str, set_pk: int, labels: int, think: float, rng: random.Random) -> list[dict]:
    """Sign in and label ``labels`` comparisons with the keys; return the page's measurements."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        page = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 900}).new_page()
        page.set_default_timeout(60000)
        page.goto(f"{url}/login/")
        page.fill("#id_username", MARKER)
        page.fill("#id_password", PASSWORD)
        with page.expect_navigation():
            page.click("button[type=submit]")
        page.add_init_script(RECORDER)
        page.goto(f"{url}/labelling/{set_pk}/next/")
        shown: list[dict] = []
        for _ in range(labels):
            page.wait_for_selector("#label-form")
            time.sleep(think)
            page.keyboard.press(rng.choice(["ArrowLeft", "ArrowRight"]))
            page.keyboard.press(str(rng.randint(1, 5)))
            page.keyboard.press("Enter")
            page.wait_for_function("(n) => window.__bench && window.__bench.shown.length >= n", arg=1)
            shown += page.evaluate("window.__bench.shown.splice(0)")
        page.wait_for_function("() => !document.querySelector('main.page[aria-busy]')")
        browser.close()
    return shown


def server_times(log: Path) -> dict[str, list[float]]:
    """Return gunicorn's request times (ms) of the label POSTs, the pages they redirect to and the pages ahead."""
    times: dict[str, list[float]] = {"POST label": [], "GET label (after POST)": [], "GET label (fetched ahead)": []}
    label = re.compile(r"^/labelling/\d+/\d+/$")
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) < 5 or not label.match(parts[1]):
            continue
        ms = int(parts[3]) / 1000
        if parts[0] == "POST":
            times["POST label"].append(ms)
        elif "prefetch" in parts[4]:
            times["GET label (fetched ahead)"].append(ms)
        else:
            times["GET label (after POST)"].append(ms)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100000)
    parser.add_argument("--labels", type=int, default=60, help="comparisons to label by key")
    parser.add_argument("--think", type=float, default=1.0, help="seconds the expert spends on each comparison")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if shutil.which(CHROMIUM) is None:
        raise SystemExit(f"{CHROMIUM} not found: install chromium")
    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.items.models import Item
    from annotation.labelling.models import ComparisonSet

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    if not get_user_model().objects.filter(username=MARKER).exists():
        if Item.objects.exists():
            raise SystemExit("this database holds items the benchmark did not make: give it an empty database")
        build(args.items, args.labels + 10, random.Random(args.seed))
    set_pk = ComparisonSet.objects.get(name="bench labelling").pk
    items = Item.objects.count()
    from django.db import connections

    connections.close_all()
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-bench-labelling-run-"))
    server, port, log = start_server(args.workers, tmp)
    try:
        shown = label_by_keys(f"http://localhost:{port}", set_pk, args.labels, args.think, random.Random(args.seed))
    finally:
        server.terminate()
        server.wait(timeout=30)
    where = os.environ["DATABASE_URL"].split("@")[-1].split("://")[0]
    print(
        f"labelling: {len(shown)} comparisons by key at {items} items ({where}), {args.think:g} s on each, "
        f"{args.workers} gunicorn workers"
    )
    in_place = [s["ms"] for s in shown if s["how"] == "in place"]
    print(f"labelling: Enter -> next comparison painted: {percentiles([s['ms'] for s in shown])}")
    print(f"labelling:   shown in place (fetched ahead): {percentiles(in_place)}")
    print(f"labelling:   new page (nothing ahead): {percentiles([s['ms'] for s in shown if s['how'] != 'in place'])}")
    for name, values in server_times(log).items():
        print(f"labelling: server {name}: {percentiles(values)}")


if __name__ == "__main__":
    main()
