"""`make serve`: the production server refuses to start half-configured, and serves pages and static files with
DEBUG off, collected and compressed static files, the shared cache and a clean `check --deploy`."""

import gzip
import http.client
import os
import re
import secrets
import socket
import subprocess
import sys
import time

import pytest
from django.contrib.auth.models import User
from django.core.cache import caches
from django.core.management import call_command
from django.test import override_settings

from tests.simulator import ROOT
from tests.workers import database_url_for_workers

SERVE = ROOT / "scripts" / "serve.sh"


def production_env(**extra: str) -> dict:
    """The environment of a production process: config.settings, not the test settings, and no DEBUG."""
    test_only = {"DJANGO_SETTINGS_MODULE", "DEBUG", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update({"PY": sys.executable, "PYTHONUNBUFFERED": "1", **extra})
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "unset", [["SECRET_KEY"], ["DATABASE_URL"], ["ALLOWED_HOSTS"], ["SECRET_KEY", "ALLOWED_HOSTS"]]
)
def test_serve_refuses_to_start_without_each_required_setting(unset):
    env = production_env(SECRET_KEY="k" * 60, DATABASE_URL="sqlite:////nonexistent/db", ALLOWED_HOSTS="example.org")
    for name in unset:
        env.pop(name)
    result = subprocess.run([str(SERVE)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    first_line = result.stderr.splitlines()[0]
    assert f"set {' '.join(unset)} in the environment first" in first_line
    for name in unset:
        assert f"  {name}: " in result.stderr  # says what each one needs
    assert "gunicorn" not in result.stdout


def test_serve_refuses_debug():
    env = production_env(SECRET_KEY="k" * 60, DATABASE_URL="sqlite:////x", ALLOWED_HOSTS="example.org", DEBUG="1")
    result = subprocess.run([str(SERVE)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "DEBUG must be off in production" in result.stderr


def _get(port: int, path: str, headers: dict | None = None, timeout: float = 10) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", path, headers={"Host": "127.0.0.1", **(headers or {})})
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_make_serve_serves_pages_and_compressed_static_files_with_debug_off(tmp_path):
    User.objects.create_user("serve-user", password="a-long-enough-password-2026")
    port = free_port()
    env = production_env(
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=database_url_for_workers(),
        ALLOWED_HOSTS="127.0.0.1",
        STATIC_ROOT=str(tmp_path / "static"),
        WEB_CONCURRENCY="2",
        PORT=str(port),
    )
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(["make", "-s", "serve"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240  # migrate, collectstatic and check first
        while True:
            assert process.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        https = {"X-Forwarded-Proto": "https"}  # what the TLS proxy in front sends

        # The first answer waits for a worker to load the application (slow on a busy machine).
        plain = _get(port, "/login/", timeout=120)
        assert plain.status == 301 and plain.getheader("Location") == "https://127.0.0.1/login/"

        page = _get(port, "/login/", https)
        assert page.status == 200, page.body[:500]
        html = page.body.decode()
        assert "Traceback" not in html and "DEBUG = True" not in html
        policy = page.getheader("Content-Security-Policy")
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert page.getheader("Strict-Transport-Security")
        css = re.search(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', html)
        assert css, "the stylesheet has a hashed (collected) name"

        styles = _get(port, css.group(1), {**https, "Accept-Encoding": "gzip"})
        assert styles.status == 200
        assert styles.getheader("Content-Encoding") == "gzip"
        assert "immutable" in styles.getheader("Cache-Control")
        assert b".topbar" in gzip.decompress(styles.body)

        # No "Server: gunicorn" (config/gunicorn.py), and the manifest of static names is not served.
        assert page.getheader("Server") is None and styles.getheader("Server") is None
        assert (tmp_path / "static" / "staticfiles.json").is_file()
        manifest = _get(port, "/static/staticfiles.json", https)
        assert manifest.status in (302, 404) and b'"paths"' not in manifest.body
        assert _get(port, "/static/staticfiles.json", {**https, "Accept-Encoding": "gzip, br"}).status in (302, 404)

        missing = _get(port, "/no-such-page/", https)
        assert missing.status in (302, 404) and b"Traceback" not in missing.body

        check = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr
        assert "System check identified no issues (0 silenced)." in check.stdout
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    assert "Booting worker" in log.read_text()


def test_check_deploy_warns_before_static_files_are_collected(tmp_path):
    env = production_env(
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL="sqlite:///" + str(tmp_path / "db.sqlite3"),
        ALLOWED_HOSTS="example.org",
        STATIC_ROOT=str(tmp_path / "never-collected"),
    )
    command = [sys.executable, "manage.py", "check", "--deploy"]
    check = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert "core.W001" in check.stderr + check.stdout
    assert "collectstatic" in check.stderr + check.stdout


def test_pages_work_with_debug_off_before_collectstatic(client, db, tmp_path):
    """DEBUG off, no collectstatic: pages render with plain static names instead of answering 500."""
    with override_settings(
        DEBUG=False,
        STATIC_ROOT=tmp_path / "never-collected",
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "core.storage.CollectedStaticStorage"},
        },
    ):
        response = client.get("/login/")
    assert response.status_code == 200
    assert 'href="/static/css/app.css"' in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_production_cache_is_shared_through_the_database():
    """The API throttles count in the cache: in production it is the database, shared by every process."""
    database_cache = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "eistudio_cache_test"}
    with override_settings(CACHES={"default": database_cache, "other": database_cache}):
        call_command("createcachetable", verbosity=0)
        caches["default"].set("throttle-key", [1, 2, 3])
        # A second cache object (as another process would have) sees the same value.
        assert caches["other"].get("throttle-key") == [1, 2, 3]
        caches["default"].clear()


def _settings_load(env: dict) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "DATABASE_URL")}
    base["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_local_commands_need_no_secret_but_a_server_database_does(tmp_path):
    # The README's commands after `make run`: the local SQLite database, no DEBUG, no SECRET_KEY.
    local = _settings_load({})
    assert local.returncode == 0 and local.stdout.strip() == "False", local.stderr
    # A named database is a server's: without SECRET_KEY it is refused, saying what to set.
    server = _settings_load({"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"})
    assert server.returncode != 0 and "SECRET_KEY must be set" in server.stderr


def test_the_static_files_middleware_serves_collected_files_but_not_the_manifest(tmp_path):
    from django.http import HttpResponse
    from django.test import RequestFactory

    from core.storage import StaticFilesMiddleware

    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "app.0123456789ab.css").write_text(".topbar {}")
    (tmp_path / "staticfiles.json").write_text('{"paths": {"css/app.css": "css/app.0123456789ab.css"}}')
    (tmp_path / "staticfiles.json.gz").write_bytes(gzip.compress(b'{"paths": {}}'))
    with override_settings(STATIC_ROOT=tmp_path, WHITENOISE_USE_FINDERS=False, WHITENOISE_AUTOREFRESH=False):
        middleware = StaticFilesMiddleware(lambda request: HttpResponse("not found", status=404))
        css = middleware(RequestFactory().get("/static/css/app.0123456789ab.css"))
        manifest = middleware(RequestFactory().get("/static/staticfiles.json", HTTP_ACCEPT_ENCODING="gzip"))
    with override_settings(STATIC_ROOT=tmp_path, WHITENOISE_USE_FINDERS=False, WHITENOISE_AUTOREFRESH=True):
        refreshing = StaticFilesMiddleware(lambda request: HttpResponse("not found", status=404))
        manifest_autorefresh = refreshing(RequestFactory().get("/static/staticfiles.json"))

    assert css.status_code == 200
    assert (manifest.status_code, manifest.content) == (404, b"not found")
    assert manifest_autorefresh.status_code == 404


def test_the_gunicorn_configuration_drops_the_server_header():
    from gunicorn.http import wsgi

    import config.gunicorn  # noqa: F401  (patches gunicorn's response)

    class Request:
        version = (1, 1)
        method = "GET"

        def should_close(self) -> bool:
            return False

    class Config:
        keepalive = 2

    response = wsgi.Response(Request(), sock=None, cfg=Config())
    response.status, response.status_code = "200 OK", 200
    headers = response.default_headers()

    assert headers[0] == "HTTP/1.1 200 OK\r\n"
    assert not any(line.lower().startswith("server:") for line in headers)
    assert any(line.startswith("Date: ") for line in headers)


def test_the_csrf_cookie_is_http_only(client, db):
    response = client.get("/login/")

    assert response.cookies["csrftoken"]["httponly"] is True
