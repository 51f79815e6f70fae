import asyncio
import contextlib
import signal

from django.core.management.base import BaseCommand, CommandParser

from llm.simulator.server import SimulatorConfig, serve


class Command(BaseCommand):
    help = (
        "Run the local OpenAI-compatible simulator (chat and legacy completions) with configurable latency and "
        "injected faults. Model names choose the role: see docs/llm.md."
    )
    # The simulator needs no database and no URLs: skipping the system checks keeps start-up under a second.
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765, help="0 picks a free port (printed on start).")
        parser.add_argument("--latency-ms", type=float, default=300.0)
        parser.add_argument("--jitter-ms", type=float, default=100.0)
        parser.add_argument("--error-rate-429", type=float, default=0.0)
        parser.add_argument("--error-rate-500", type=float, default=0.0)
        parser.add_argument("--timeout-rate", type=float, default=0.0, help="Share of requests never answered.")
        parser.add_argument("--garbage-rate", type=float, default=0.0, help="Share of replies truncated or garbled.")
        parser.add_argument("--retry-after-ms", type=int, default=1000, help="Wait a 429 asks for.")
        parser.add_argument("--hang-seconds", type=float, default=300.0, help="How long a timeout fault hangs.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--batch-delay-ms", type=float, default=1000.0, help="When a batch completes.")
        parser.add_argument("--batch-error-rate", type=float, default=0.0, help="Share of batch requests that fail.")
        parser.add_argument(
            "--batch-expire-rate", type=float, default=0.0, help="Share of batches that expire half answered."
        )

    def handle(self, *args: object, **options: object) -> None:
        config = SimulatorConfig(
            host=options["host"],
            port=options["port"],
            latency_ms=options["latency_ms"],
            jitter_ms=options["jitter_ms"],
            error_rate_429=options["error_rate_429"],
            error_rate_500=options["error_rate_500"],
            timeout_rate=options["timeout_rate"],
            garbage_rate=options["garbage_rate"],
            retry_after_ms=options["retry_after_ms"],
            hang_seconds=options["hang_seconds"],
            seed=options["seed"],
            batch_delay_ms=options["batch_delay_ms"],
            batch_error_rate=options["batch_error_rate"],
            batch_expire_rate=options["batch_expire_rate"],
        )
        asyncio.run(self._serve(config))

    async def _serve(self, config: SimulatorConfig) -> None:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        server = asyncio.create_task(serve(config, ready=ready))
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        host, port = await ready
        self.stdout.write(f"Simulator listening on http://{host}:{port}/v1 (seed {config.seed})")
        self.stdout.flush()
        await stop.wait()
        server.cancel()
        with contextlib.suppress(BrokenPipeError):
            self.stdout.write("Simulator stopped.")
