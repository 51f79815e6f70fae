#!/usr/bin/env bash
# The production web server (`make serve`): gunicorn with DEBUG off, static files collected and compressed, the
# shared database cache, migrations applied and `check --deploy` passed first. Workers run separately
# (`make worker`, or `manage.py db_worker` under a service manager): see docs/deploy.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

missing=()
for name in SECRET_KEY DATABASE_URL ALLOWED_HOSTS; do
  [ -n "${!name:-}" ] || missing+=("$name")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "make serve: set ${missing[*]} in the environment first (docs/deploy.md says what each needs)." >&2
  for name in "${missing[@]}"; do
    case $name in
      SECRET_KEY) echo "  SECRET_KEY: a long random string, e.g. \`$PY -c 'import secrets; print(secrets.token_urlsafe(50))'\`" >&2 ;;
      DATABASE_URL) echo "  DATABASE_URL: the PostgreSQL database, e.g. postgres://eistudio:PASSWORD@127.0.0.1:5432/eistudio" >&2 ;;
      ALLOWED_HOSTS) echo "  ALLOWED_HOSTS: the host names the site answers to, comma-separated, e.g. eistudio.example.org" >&2 ;;
    esac
  done
  exit 2
fi
if [ -n "${DEBUG:-}" ] && [ "$DEBUG" != "0" ] && [ "${DEBUG,,}" != "false" ]; then
  echo "make serve: DEBUG must be off in production (unset it or set DEBUG=0); \`make run\` is the development server." >&2
  exit 2
fi
export DEBUG=0
PORT=${PORT:-8000}
BIND=${BIND:-127.0.0.1:$PORT}
WEB_CONCURRENCY=${WEB_CONCURRENCY:-$(( $(nproc 2>/dev/null || echo 1) * 2 + 1 ))}

# Migrations as the role that owns the tables when MIGRATE_DATABASE_URL names it (docs/deploy.md, *The database
# roles*): the web process then connects as DATABASE_URL's role, which owns nothing, and never sees the owner's URL.
MIGRATE_URL=${MIGRATE_DATABASE_URL:-$DATABASE_URL}
unset MIGRATE_DATABASE_URL
DATABASE_URL=$MIGRATE_URL "$PY" manage.py migrate --noinput
DATABASE_URL=$MIGRATE_URL "$PY" manage.py createcachetable
unset MIGRATE_URL
"$PY" manage.py collectstatic --noinput -v 0
"$PY" manage.py check --deploy --fail-level WARNING

echo "EI Studio (production) on http://$BIND/ with $WEB_CONCURRENCY gunicorn workers"
exec "$PY" -m gunicorn config.wsgi:application \
  --config python:config.gunicorn \
  --bind "$BIND" \
  --workers "$WEB_CONCURRENCY" \
  --timeout "${WEB_TIMEOUT:-120}" \
  --graceful-timeout 30 \
  --max-requests 2000 --max-requests-jitter 200 \
  --access-logfile - \
  --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}" \
  --no-control-socket
