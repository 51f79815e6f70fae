"""The simulator's Files and Batches API (OpenAI's shape) and the replies every simulator route answers with.

``llm.simulator.Simulator`` takes the Batches API from ``BatchAPI``: files uploaded with purpose "batch", batches
created from them, advanced by the clock (completion delay, partial failures, expiry as configured), listed by
metadata, and their output and error files.
"""

import hashlib
import json
import time
from dataclasses import dataclass

from llm.simulator import simulation


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict | None = None


def json_reply(status: int, data: object, headers: dict | None = None) -> Reply:
    return Reply(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), headers=headers)


def error_reply(status: int, message: str, kind: str, code: str | None = None, headers: dict | None = None) -> Reply:
    return json_reply(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)


class BatchAPI:
    """The Files and Batches routes of the simulator (mixed into ``Simulator``, whose state they use)."""

    def batch_api(self, method: str, path: str, query: dict, headers: dict, body: bytes) -> Reply:
        """Serve the Files and Batches endpoints (a path under ``/v1``)."""
        parts = [p for p in path.split("/") if p][1:]  # drop the "v1"
        reply = None
        if parts[:1] == ["files"]:
            reply = self._files_route(method, parts, headers, body)
        elif parts[:1] == ["batches"]:
            reply = self._batches_route(method, parts, query, body)
        return reply or error_reply(404, f"Unknown path {path}.", "invalid_request_error")

    def _files_route(self, method: str, parts: list[str], headers: dict, body: bytes) -> Reply | None:
        """Serve ``/v1/files`` and a file's card and content; None for a route it does not know."""
        if parts == ["files"] and method == "POST":
            return self._file_create(headers, body)
        if parts == ["files"] and method == "GET":
            cards = [self._file_card(file_id) for file_id in sorted(self.files, reverse=True)[:100]]
            return json_reply(200, {"object": "list", "data": cards, "has_more": len(self.files) > 100})
        if len(parts) in (2, 3) and method == "GET":
            stored = self.files.get(parts[1])
            if stored is None:
                return error_reply(404, f"No such File object: {parts[1]}", "invalid_request_error")
            if len(parts) == 3 and parts[2] == "content":
                return Reply(200, stored["content"], content_type="application/octet-stream")
            return json_reply(200, self._file_card(parts[1]))
        return None

    def _batches_route(self, method: str, parts: list[str], query: dict, body: bytes) -> Reply | None:
        """Serve ``/v1/batches``, a batch's card and its cancellation; None for a route it does not know."""
        if parts == ["batches"] and method == "POST":
            return self._batch_create(body)
        if parts == ["batches"] and method == "GET":
            return self._batch_list(query)
        cancel = len(parts) == 3 and parts[2] == "cancel" and method == "POST"
        if not (len(parts) == 2 and method == "GET") and not cancel:
            return None
        batch = self.batches.get(parts[1])
        if batch is None:
            return error_reply(404, f"No such batch: {parts[1]}", "invalid_request_error")
        if cancel and batch["status"] == "in_progress":
            batch["status"] = "cancelled"
            batch["cancelled_at"] = int(time.time())
        elif not cancel:
            self._batch_advance(batch)
        return json_reply(200, self._batch_card(batch))

    def _file_store(self, content: bytes, purpose: str, filename: str) -> str:
        file_id = f"file-sim-{len(self.files) + 1:06d}-{hashlib.sha256(content).hexdigest()[:8]}"
        self.files[file_id] = {
            "content": content,
            "purpose": purpose,
            "filename": filename,
            "created": int(time.time()),
        }
        return file_id

    def _file_card(self, file_id: str) -> dict:
        stored = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(stored["content"]),
            "created_at": stored["created"],
            "filename": stored["filename"],
            "purpose": stored["purpose"],
            "status": "processed",
        }

    def _file_create(self, headers: dict, body: bytes) -> Reply:
        fields = multipart_fields(headers.get("content-type", ""), body)
        if fields is None or "file" not in fields:
            return error_reply(400, "Send multipart/form-data with a 'file' and a 'purpose'.", "invalid_request_error")
        purpose = fields.get("purpose", (b"", ""))[0].decode()
        if purpose != "batch":
            return error_reply(400, "The simulator only takes files with purpose 'batch'.", "invalid_request_error")
        content, filename = fields["file"]
        return json_reply(200, self._file_card(self._file_store(content, purpose, filename or "upload.jsonl")))

    def _batch_create(self, body: bytes) -> Reply:
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            return error_reply(400, "We could not parse the JSON body of your request.", "invalid_request_error")
        if not isinstance(data, dict) or data.get("input_file_id") not in self.files:
            return error_reply(400, "input_file_id must name an uploaded file.", "invalid_request_error")
        if data.get("endpoint") not in ("/v1/chat/completions", "/v1/completions"):
            message = "endpoint must be /v1/chat/completions or /v1/completions."
            return error_reply(400, message, "invalid_request_error")
        lines = []
        for number, line in enumerate(self.files[data["input_file_id"]]["content"].decode().splitlines(), 1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError:
                return error_reply(400, f"Line {number} of the input file is not JSON.", "invalid_request_error")
            if not isinstance(request, dict) or not request.get("custom_id") or request.get("url") != data["endpoint"]:
                return error_reply(
                    400, f"Line {number} needs a custom_id and the batch's url.", "invalid_request_error"
                )
            lines.append(request)
        now = int(time.time())
        batch_id = f"batch_sim_{len(self.batches) + 1:06d}"
        expires = simulation.rng_for("expire", self.config.seed, batch_id, 0).random() < self.config.batch_expire_rate
        self.batches[batch_id] = {
            "id": batch_id,
            "endpoint": data["endpoint"],
            "input_file_id": data["input_file_id"],
            "completion_window": data.get("completion_window", "24h"),
            "metadata": data.get("metadata") or {},
            "status": "in_progress",
            "created_at": now,
            "in_progress_at": now,
            "due": time.monotonic() + self.config.batch_delay_ms / 1000,
            "expires": expires,
            "lines": lines,
            "output_file_id": None,
            "error_file_id": None,
            "completed": 0,
            "failed": 0,
        }
        return json_reply(200, self._batch_card(self.batches[batch_id]))

    def _batch_list(self, query: dict) -> Reply:
        try:
            limit = max(1, min(int(query.get("limit", ["20"])[0]), 100))
        except ValueError:
            return error_reply(400, "limit must be an integer.", "invalid_request_error")
        ids = sorted(self.batches, reverse=True)
        after = query.get("after", [None])[0]
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        page = ids[:limit]
        for batch_id in page:
            self._batch_advance(self.batches[batch_id])
        return json_reply(
            200,
            {
                "object": "list",
                "data": [self._batch_card(self.batches[b]) for b in page],
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
                "has_more": len(ids) > limit,
            },
        )

    def _batch_card(self, batch: dict) -> dict:
        card = {k: v for k, v in batch.items() if k not in ("lines", "due", "expires", "completed", "failed")}
        card["object"] = "batch"
        card["errors"] = None
        card["expires_at"] = batch["created_at"] + 86400
        card["request_counts"] = {
            "total": len(batch["lines"]),
            "completed": batch["completed"],
            "failed": batch["failed"],
        }
        return card

    def _batch_advance(self, batch: dict) -> None:
        """Answer a batch whose time has come: write its output and error files."""
        if batch["status"] != "in_progress" or time.monotonic() < batch["due"]:
            return
        answered = len(batch["lines"]) // 2 if batch["expires"] else len(batch["lines"])
        outputs, errors = [], []
        for index, line in enumerate(batch["lines"]):
            custom_id = str(line["custom_id"])
            request_id = "batch_req_" + hashlib.sha256(f"{batch['id']}:{custom_id}".encode()).hexdigest()[:20]
            if index >= answered:
                errors.append(
                    {
                        "id": request_id,
                        "custom_id": custom_id,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
                continue
            status, payload = self._batch_answer(custom_id, line)
            entry = {"id": request_id, "custom_id": custom_id, "response": {"status_code": status, "body": payload}}
            entry["response"]["request_id"] = request_id
            entry["error"] = None
            (outputs if status == 200 else errors).append(entry)
        now = int(time.time())
        batch["completed"], batch["failed"] = len(outputs), len(errors)
        if outputs:
            content = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outputs).encode()
            batch["output_file_id"] = self._file_store(content, "batch_output", f"{batch['id']}_output.jsonl")
        if errors:
            content = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in errors).encode()
            batch["error_file_id"] = self._file_store(content, "batch_output", f"{batch['id']}_error.jsonl")
        if batch["expires"]:
            batch["status"], batch["expired_at"] = "expired", now
        else:
            batch["status"], batch["completed_at"] = "completed", now
        batch["finalizing_at"] = now

    def _batch_answer(self, custom_id: str, line: dict) -> tuple[int, dict]:
        """Answer one request of a batch (billed under its custom_id, replayed if that key was answered)."""
        self.batch_requests += 1
        stored = self.stored.get(custom_id)
        if stored is not None:
            self.replayed += 1
            return stored.status, json.loads(stored.body)
        data = line.get("body")
        style = "chat" if str(line.get("url", "")).endswith("/chat/completions") else "completions"
        model = data.get("model") if isinstance(data, dict) else None
        if not isinstance(model, str) or simulation.role_for(model) is None:
            return 404, {"error": {"message": f"The model `{model}` does not exist.", "code": "model_not_found"}}
        problem = self._validate(style, data)
        if problem:
            return 400, {"error": {"message": problem, "type": "invalid_request_error"}}
        attempt = self.seen[custom_id]
        self.seen[custom_id] += 1
        fault = simulation.rng_for("batch", self.config.seed, custom_id, attempt)
        if fault.random() < self.config.batch_error_rate:
            return 500, {"error": {"message": "The server had an error (simulated).", "type": "server_error"}}
        hints = {"answer": str(line.get("sim_answer") or "")}
        payload = self._chat(data, hints) if style == "chat" else self._completions(data)
        if fault.random() < self.config.garbage_rate:
            self.garbled += 1
            simulation.garble_choices(payload, simulation.rng_for("garble", self.config.seed, custom_id, attempt))
        self.billed[custom_id] += 1
        self.prompt_tokens += payload["usage"]["prompt_tokens"]
        self.completion_tokens += payload["usage"]["completion_tokens"]
        self.stored[custom_id] = json_reply(200, payload)
        return 200, payload


def multipart_fields(content_type: str, body: bytes) -> dict[str, tuple[bytes, str]] | None:
    """Return {name: (content, filename)} of a multipart/form-data body, or None if it is not one."""
    if not content_type.lower().startswith("multipart/form-data"):
        return None
    boundary = ""
    for param in content_type.split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        return None
    fields: dict[str, tuple[bytes, str]] = {}
    for part in body.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, content = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        disposition = ""
        for line in head.decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                disposition = line
        params = {}
        for item in disposition.split(";")[1:]:
            key, _, value = item.strip().partition("=")
            params[key.lower()] = value.strip('"')
        if "name" in params:
            fields[params["name"]] = (content.removesuffix(b"\r\n"), params.get("filename", ""))
    return fields
