"""gunicorn's configuration for `make serve` (``scripts/serve.sh`` passes ``--config python:config.gunicorn``).

gunicorn writes ``Server: gunicorn`` on every answer and has no setting to leave it out; naming the server and
its version only helps someone matching it against known flaws, so the answers here carry no ``Server`` header.
The other options stay on the command line of ``scripts/serve.sh``, where the environment sets them.
"""

from gunicorn.http import wsgi

_default_headers = wsgi.Response.default_headers


def _default_headers_without_server(self: wsgi.Response) -> list[str]:
    return [line for line in _default_headers(self) if not line.lower().startswith("server:")]


wsgi.Response.default_headers = _default_headers_without_server
