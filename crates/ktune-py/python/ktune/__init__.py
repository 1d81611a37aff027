"""ktune: auto-tuning of GPU and HPC code from Python.

``SearchSpace`` builds the valid configurations of Kernel Tuner-style ``tune_params`` and
``restrictions``; ``Study`` is an ask/tell tuning study (or ``Study.optimize(fn)``) driven by
ktune's strategies (Bayesian optimisation by default), recording every measurement in an
SQLite file when given ``storage="sqlite:///path.db"``.
"""

from ktune._ktune import KtuneError, SearchSpace, Study

__all__ = ["KtuneError", "SearchSpace", "Study"]
