import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from evaluation import ratings
from evaluation.verdict_files import VerdictFile, VerdictFileError, read_verdict_file

BRADLEY_TERRY = "bradley-terry"
TRUESKILL = "trueskill"


class Command(BaseCommand):
    help = (
        "Rank the models of a pairwise verdict file (the label table of calibration imports, or llmfao's crowd or "
        "judge comparisons) by Bradley-Terry maximum likelihood or TrueSkill, with intervals; --compare OTHER "
        "also prints Spearman's rho, Kendall's tau-b and Pearson's r on ranks between the two rankings."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--method", choices=(BRADLEY_TERRY, TRUESKILL), default=BRADLEY_TERRY)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.add_argument("--compare", type=Path, metavar="OTHER_PATH", help="rank this file too and correlate")
        parser.add_argument("--resamples", type=int, default=ratings.DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--confidence", type=float, default=0.95)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--virtual-draws", type=float, default=0.0, help="Bradley-Terry: draws of each model against a virtual "
            "opponent of strength 0, for finite strengths when a model never wins (default 0: maximum likelihood)",
        )  # fmt: skip

    def handle(self, *args: object, **options: object) -> None:
        if options["resamples"] < 0:
            raise CommandError("--resamples cannot be negative")
        if not 0 < options["confidence"] < 1:
            raise CommandError("--confidence must be between 0 and 1")
        if options["seed"] < 0:
            raise CommandError("--seed must be zero or more")
        if options["virtual_draws"] < 0 or not math.isfinite(options["virtual_draws"]):
            raise CommandError("--virtual-draws must be a number, zero or more")
        main = self._read(options["path"])
        result = self._rank(main, options, n_resamples=options["resamples"])
        comparison = None
        if options["compare"] is not None:
            other = self._read(options["compare"])
            # The other file is only correlated, so its point estimates are enough.
            other_result = self._rank(other, options, n_resamples=0)
            comparison = (other, ratings.rank_correlations(result["scores"], other_result["scores"]))
        if options["json"]:
            self._write_json(main, result, comparison)
        else:
            self._write_text(main, result, comparison, options)

    def _read(self, path: Path) -> VerdictFile:
        try:
            return read_verdict_file(path)
        except VerdictFileError as exc:
            raise CommandError(str(exc)) from exc

    def _rank(self, source: VerdictFile, options: dict, *, n_resamples: int) -> dict:
        """Return the rows to print (rank, model, score, interval, rank interval, verdicts) and the scores."""
        if options["method"] == BRADLEY_TERRY:
            result = ratings.bradley_terry(
                source.verdicts,
                virtual_draws=options["virtual_draws"],
                n_resamples=n_resamples,
                seed=options["seed"],
                confidence=options["confidence"],
            )
            rows = [
                {
                    "rank": r.rank,
                    "model": r.model,
                    "score": r.elo,
                    "low": r.elo_low,
                    "high": r.elo_high,
                    "rank_low": r.rank_low,
                    "rank_high": r.rank_high,
                    "strength": r.strength,
                    "wins": r.wins,
                    "verdicts": r.n_verdicts,
                }
                for r in result.ratings
            ]
            return {"rows": rows, "scores": result.scores(), "result": result.as_dict()}
        try:
            result = ratings.rate_verdicts(source.verdicts, seed=options["seed"])
        except ValueError as exc:
            raise CommandError(f"{source.path}: {exc}") from exc
        mus = {r.model: r.mu for r in result.ratings}
        ranks = ratings.competition_ranks(mus)
        rows = [
            {
                "rank": ranks[r.model],
                "model": r.model,
                "score": r.display,
                "low": r.display_low,
                "high": r.display_high,
                "mu": r.mu,
                "sigma": r.sigma,
                "verdicts": r.n_verdicts,
            }
            for r in result.ratings
        ]
        return {"rows": rows, "scores": mus, "result": result.as_dict()}

    def _write_json(self, source: VerdictFile, result: dict, comparison: tuple | None) -> None:
        body = {
            "path": source.path,
            "layout": source.layout,
            "n_verdicts": len(source.verdicts),
            "ratings": result["rows"],
            "method": result["result"],
        }
        body["method"].pop("ratings", None)
        if comparison is not None:
            other, correlations = comparison
            body["compare"] = {
                "path": other.path,
                "layout": other.layout,
                "n_models": correlations.n_models,
                "spearman": correlations.spearman,
                "kendall_tau_b": correlations.kendall_tau_b,
                "pearson_on_ranks": correlations.pearson_on_ranks,
                "undefined_reason": correlations.undefined_reason,
            }
        self.stdout.write(json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False))

    def _write_text(self, source: VerdictFile, result: dict, comparison: tuple | None, options: dict) -> None:
        method = result["result"]
        self.stdout.write(
            _("%(path)s: %(verdicts)d verdicts (%(layout)s layout), %(models)d models")
            % {
                "path": source.path,
                "verdicts": len(source.verdicts),
                "layout": source.layout,
                "models": len(source.models()),
            }
        )
        if options["method"] == BRADLEY_TERRY:
            self._bradley_terry_notes(method)
        else:
            self.stdout.write(
                _(
                    "TrueSkill (mu 25, sigma 25/3, beta 25/6, tau 0), margin mapping %(mapping)s, %(passes)d seeded "
                    "shuffled passes. Scores on the Elo-like display scale; intervals mu ± 1.96 sigma."
                )
                % {"mapping": method["margin_mapping"], "passes": method["n_passes"]}
            )
        self.stdout.write("")
        bradley_terry = options["method"] == BRADLEY_TERRY
        self._table(result["rows"], intervals=not bradley_terry or bool(method["n_resamples"]), ranks=bradley_terry)
        if method.get("rank_stability") is not None:
            self.stdout.write("")
            self.stdout.write(
                _("Rank stability (mean Kendall's tau-b between bootstrap and reported rankings): %(value)s")
                % {"value": f"{method['rank_stability']:.3f}"}
            )
        if comparison is not None:
            self._comparison_text(*comparison)

    def _bradley_terry_notes(self, method: dict) -> None:
        """Print how the Bradley-Terry scores and their intervals were computed, and why they are undefined if so."""
        self.stdout.write(
            _(
                "Bradley-Terry maximum likelihood; a tie counts as half a win for each side. "
                "Scores on the Elo scale (1000 + 400/ln 10 × strength)."
            )
        )
        if method["virtual_draws"]:
            self.stdout.write(
                _("Each model also drew %(draws)s games against a virtual opponent of strength 0.")
                % {"draws": f"{method['virtual_draws']:g}"}
            )
        if method["n_resamples"] and not method["undefined_reason"]:
            self.stdout.write(
                _(
                    "Intervals: %(confidence)s percentile bootstrap over verdicts, %(resamples)d resamples, "
                    "seed %(seed)d."
                )
                % {
                    "confidence": f"{method['confidence']:.0%}",
                    "resamples": method["n_resamples"],
                    "seed": method["seed"],
                }
            )
        if method["n_resamples_without_mle"]:
            self.stdout.write(
                _(
                    "%(count)d resamples had no maximum-likelihood strengths and were taken in the limit; "
                    "∞ marks an unbounded interval."
                )
                % {"count": method["n_resamples_without_mle"]}
            )
        if method["undefined_reason"]:
            self.stdout.write(
                self.style.WARNING(
                    _("The strengths are undefined: %(reason)s.") % {"reason": method["undefined_reason"]}
                )
            )

    def _comparison_text(self, other: VerdictFile, correlations: object) -> None:
        """Print how the ranking agrees with the one of ``other``'s verdicts."""
        self.stdout.write("")
        self.stdout.write(
            _("Compared with %(path)s (%(models)d models in both):")
            % {"path": other.path, "models": correlations.n_models}
        )
        if correlations.undefined_reason:
            self.stdout.write(
                _("The rankings cannot be compared: %(reason)s.") % {"reason": correlations.undefined_reason}
            )
            return
        self.stdout.write(_("Spearman's rho: %(value)s") % {"value": f"{correlations.spearman:.6f}"})
        self.stdout.write(_("Kendall's tau-b: %(value)s") % {"value": f"{correlations.kendall_tau_b:.6f}"})
        self.stdout.write(_("Pearson's r on ranks: %(value)s") % {"value": f"{correlations.pearson_on_ranks:.6f}"})

    def _table(self, rows: list[dict], *, intervals: bool, ranks: bool) -> None:
        """Print one line per model; an interval bound that is unbounded shows as an infinity."""
        width = max([len(_("model"))] + [len(row["model"]) for row in rows])
        rank, model, score = _("rank"), _("model"), _("score")
        interval, rank_interval, verdicts = _("interval"), _("ranks"), _("verdicts")
        header = f"{rank:>4}  {model:<{width}}  {score:>7}"
        if intervals:
            header += f"  {interval:<18}"
            if ranks:
                header += f"  {rank_interval:<7}"
        self.stdout.write(header + f"  {verdicts:>8}")
        for row in rows:
            rated = row["score"] is not None
            line = f"{row['rank'] if rated else '—':>4}  {row['model']:<{width}}  "
            line += f"{row['score']:>7.1f}" if rated else f"{'—':>7}"
            if intervals:
                low = "−∞" if row["low"] is None else f"{row['low']:.1f}"
                high = "∞" if row["high"] is None else f"{row['high']:.1f}"
                line += f"  {f'[{low}, {high}]' if rated else '':<18}"
                if ranks:
                    line += f"  {f'{row["rank_low"]}–{row["rank_high"]}' if rated else '':<7}"
            self.stdout.write(line + f"  {row['verdicts']:>8}")
