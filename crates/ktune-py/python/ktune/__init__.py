"""ktune: auto-tuning of GPU and HPC code from Python.

``SearchSpace`` builds the valid configurations of Kernel Tuner-style ``tune_params`` and
``restrictions``; ``Study`` is an ask/tell tuning study (or ``Study.optimize(fn)``) driven by
ktune's strategies (Bayesian optimisation by default), recording every measurement in an
SQLite file when given ``storage="sqlite:///path.db"``; ``tune_kernel`` tunes a CUDA kernel
with Kernel Tuner's arguments (``from ktune import tune_kernel`` in a Kernel Tuner script);
``simulate`` replays a brute-forced Kernel Tuner cache file to compare strategies without a GPU;
``select`` picks the configuration a ``ktune export`` wisdom file gives a device and problem size;
``report`` (and ``Study.report``) writes a study's HTML report.
"""

from ktune import _ktune
from ktune._kernel_tuner import (
    CompilationFailedConfig,
    ErrorConfig,
    InvalidConfig,
    RuntimeFailedConfig,
    tune_kernel,
)
from ktune._ktune import KtuneError, SearchSpace, __version__, cuda_available, opencl_available, report, select, simulate, study_summaries

__all__ = [
    "CompilationFailedConfig",
    "ErrorConfig",
    "InvalidConfig",
    "KtuneError",
    "ResultList",
    "RuntimeFailedConfig",
    "SearchSpace",
    "Study",
    "__version__",
    "cuda_available",
    "opencl_available",
    "report",
    "select",
    "simulate",
    "study_summaries",
    "tune_kernel",
]


class ResultList(list):
    """The results of a study: a list of dicts (``config``, ``value``, ``status``,
    ``reason``), and ``to_pandas()`` for a DataFrame with one column per parameter."""

    def to_pandas(self):
        """A pandas DataFrame: the parameters, then ``value``, ``status`` and ``reason``."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        rows = [{**r["config"], "value": r["value"], "status": r["status"], "reason": r["reason"]} for r in self]
        return pandas.DataFrame(rows)

    def _repr_html_(self, limit=50):
        """Jupyter's view: the first ``limit`` results as a table (all text escaped)."""
        from html import escape

        if not self:
            return "<p>No results yet.</p>"
        names = list(self[0]["config"])
        head = "".join(f"<th>{escape(str(n))}</th>" for n in names + ["value", "status", "reason"])
        body = []
        for r in self[:limit]:
            cells = [r["config"].get(n) for n in names] + [r["value"], r["status"], r["reason"] or ""]
            body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
        more = f"<p>and {len(self) - limit} more</p>" if len(self) > limit else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


Study = _ktune.Study
