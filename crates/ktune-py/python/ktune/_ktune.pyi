"""Type stubs of ktune's compiled core."""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ktune import ResultList

__version__: str
"""The package's version (the wheel's)."""

Value = Union[int, float, bool, str]
Config = Dict[str, Value]

class KtuneError(Exception):
    """A storage that cannot be opened or written, or a study of another problem."""

class SearchSpace:
    """The configurations of ``tune_params`` that satisfy every restriction."""

    def __init__(
        self, tune_params: Dict[str, Sequence[Value]], restrictions: Union[str, Sequence[str], None] = None
    ) -> None: ...
    @property
    def size(self) -> int:
        """The number of valid configurations."""
    @property
    def params(self) -> List[str]:
        """The parameter names, in order."""
    def __len__(self) -> int: ...
    def __contains__(self, config: Config) -> bool: ...
    def __getitem__(self, rank: int) -> Config:
        """The ``rank``-th valid configuration (in a fixed order; negative from the end)."""
    def sample(self, n: int = 1, seed: Optional[int] = None) -> List[Config]:
        """``n`` distinct valid configurations drawn uniformly, reproducible with ``seed``."""
    def neighbours(self, config: Config, kind: str = "hamming") -> List[Config]:
        """Valid neighbours: ``"hamming"``, ``"adjacent"`` or ``"strictly_adjacent"``."""

class Study:
    """An ask/tell tuning study driven by one of ktune's strategies. With a ``storage``
    (``sqlite:///path.db`` or ``postgresql://...``, which takes libpq's ``sslmode``,
    ``sslrootcert``, ``sslcert`` and ``sslkey``) it is shared: every process on the same
    study claims what it measures, so none is measured twice and ``max_evals`` holds for all;
    a claim not told within ``lease`` seconds goes to another process. ``priors`` are earlier
    measurements to start from (ktune studies, Kernel Tuner caches or T4 files, or storage
    URLs with ``#study``), recorded with a stored study so that reopening it uses them again.
    ``device`` (default:
    the CPU model) is what this process measures on; a study refuses other hardware unless
    ``allow_mixed_hardware``. ``seed`` seeds the strategy; in a shared study the first
    process to join uses it as given and each later one a stream of its own derived from it
    and the order it joined in, so processes started with the same seed do not propose
    alike. One study may be used from several threads (its calls take turns); ``optimize``
    lets go of it while ``func`` runs, so ``func`` may read ``results`` and ``best``."""

    def __init__(
        self,
        tune_params: Union[Dict[str, Sequence[Value]], SearchSpace],
        restrictions: Union[str, Sequence[str], None] = None,
        *,
        strategy: str = "auto",
        strategy_options: Optional[Dict[str, Any]] = None,
        objective: str = "time",
        direction: str = "minimize",
        storage: Optional[str] = None,
        study_name: str = "default",
        max_evals: Optional[int] = None,
        time_limit: Optional[float] = None,
        seed: int = 0,
        device: Optional[str] = None,
        allow_mixed_hardware: bool = False,
        lease: float = 600.0,
        priors: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], None] = None,
        objectives: Union[Dict[str, Union[str, bool]], Sequence[str], None] = None,
        goal: Optional[str] = None,
    ) -> None:
        """``objectives`` (instead of ``objective``/``direction``): several objectives, a dict
        of names to ``"minimize"``/``"maximize"`` (or, as Kernel Tuner 1.5 spells it, ``True``
        where higher is better) or a list of names; ``tell`` and ``func`` then give a dict with
        a number for each, or a sequence of one per objective in order. ``goal`` (with
        ``objectives``): seek one configuration by it (``"energy within 5% of time"``,
        ``"weighted time=1, energy=0.5"``) instead of the whole front; a stored study records
        it."""
    def ask(self) -> Optional[Config]:
        """The next configuration to measure, or ``None`` when the study is over."""
    def ask_batch(self, n: int) -> List[Config]:
        """Up to ``n`` configurations to measure at once; empty when the study is over."""
    def tell(
        self,
        config: Config,
        value: Union[float, Dict[str, float], Sequence[float], None] = None,
        *,
        failure: Optional[str] = None,
        reason: str = "",
        seconds: float = 0.0,
    ) -> None:
        """Reports a measured ``value``, or a ``failure`` kind with its ``reason``. A
        configuration is told once, and only one in the search space (else ``ValueError``);
        one that another process or an earlier run recorded keeps that record
        (``RuntimeWarning``)."""
    def optimize(
        self,
        func: Callable[[Config], Union[float, Dict[str, float], Sequence[float]]],
        max_evals: Optional[int] = None,
        time_limit: Optional[float] = None,
    ) -> Optional[Dict[str, Any]]:
        """Tunes ``func``; an exception it raises marks the configuration failed, except
        ``KeyboardInterrupt`` and ``SystemExit``, which stop it (everything finished recorded)
        and are raised again."""
    def report(self, path: Union[str, "os.PathLike[str]"] = "report.html", *, max_points: int = 4000, top: int = 20) -> str:
        """Writes the study's HTML report (as ``ktune report`` does) and returns its path: a
        stored study's every record and facts, or this object's records without a storage."""
    def _repr_html_(self) -> str:
        """Jupyter's view: counts, the best value, the best five configurations."""
    @property
    def best(self) -> Optional[Dict[str, Any]]:
        """``{"config": ..., "value": ...}`` of the best result so far."""
    @property
    def results(self) -> "ResultList":
        """Every result: ``config``, ``value``, ``status`` and ``reason`` (``to_pandas()``);
        with several objectives also ``objectives``, a dict of each one's value."""
    @property
    def pareto_front(self) -> List[Dict[str, Any]]:
        """A study of several objectives: the results no other beats on every objective, by
        the first (``ValueError`` for a study of one)."""
    def pick(self, goal: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """A study of several objectives: the result a goal picks (``"energy within 5% of
        time"``, ``"weighted time=1, energy=0.5"``; default: the study's ``goal``), or ``None``
        when nothing ran."""
    @property
    def goal(self) -> Optional[str]:
        """The goal the study seeks one configuration by, or ``None``."""
    @property
    def objectives(self) -> Dict[str, str]:
        """The objectives and their directions, in order."""
    @staticmethod
    def from_spec(
        path: str,
        *,
        strategy: Optional[str] = None,
        strategy_options: Optional[Dict[str, Any]] = None,
        storage: Optional[str] = None,
        study_name: Optional[str] = None,
        max_evals: Optional[int] = None,
        time_limit: Optional[float] = None,
        seed: int = 0,
        device: Optional[str] = None,
        allow_mixed_hardware: bool = False,
        lease: float = 600.0,
        direction: Optional[str] = None,
        priors: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], None] = None,
    ) -> "Study":
        """A study of the problem a ``ktune.toml`` describes (space, strategy, budget,
        storage, objective, ``[transfer]`` priors), as ``ktune tune`` reads it; keyword
        arguments override it."""
    @property
    def priors(self) -> List[Dict[str, Any]]:
        """The priors the strategy was told (given, or those a stored study recorded):
        ``source``, ``fingerprint``, ``measurements``, ``matched``, ``configurations``."""
    @property
    def objective(self) -> str: ...
    @property
    def stopped(self) -> Optional[str]:
        """Why the study stopped, or why the last ``optimize`` returned on its own
        ``max_evals`` or ``time_limit`` (``"evaluations"``, ``"time"``: the study goes on), or
        ``None``."""
    @property
    def space(self) -> SearchSpace: ...
    def __len__(self) -> int: ...

def study_summaries(storage: str) -> List[Dict[str, Any]]:
    """The studies of a storage (``sqlite:///path.db`` or ``postgresql://...``), oldest
    first: per study ``name``, ``evaluations``, ``failed``, ``best`` (in its direction),
    ``direction``, ``budget``, ``workers`` and ``created`` (seconds since the Unix epoch)."""

def report(
    source: Union[str, "os.PathLike[str]"],
    path: Union[str, "os.PathLike[str]"] = "report.html",
    *,
    study: Optional[str] = None,
    max_points: int = 4000,
    top: int = 20,
) -> str:
    """Writes the HTML report of the study in ``source`` (a database ``ktune tune`` wrote, or
    a storage URL: ``sqlite:///...``, ``postgresql://...``; ``study`` picks one of several) to
    ``path`` and returns the path: one self-contained file that loads nothing."""

def select(
    wisdom: Union[str, "os.PathLike[str]"],
    device: str,
    problem_size: Union[int, Sequence[int]],
    kernel: Optional[str] = None,
) -> Optional[Dict[str, Any]]:
    """The configuration a ``ktune export`` wisdom file gives ``device`` at ``problem_size``."""

def simulate(
    cache_file: str,
    strategy: str = "auto",
    strategy_options: Optional[Dict[str, Any]] = None,
    *,
    seeds: int = 10,
    budget: Optional[int] = None,
    objective: str = "time",
    direction: Optional[str] = None,
    priors: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], None] = None,
) -> Dict[str, Any]:
    """Replays a brute-forced Kernel Tuner cache file: per seed, the objective values in
    evaluation order, the simulated seconds and the performance score (0: random search,
    1: the optimum at once, averaged over the space's n_max evaluations). ``priors``
    (earlier measurements of the same code elsewhere) are told to every run's strategy."""

class Kernel:
    """The CUDA or OpenCL runner behind ``tune_kernel``: checks on construction, ``open()``
    opens the device."""

    def __init__(
        self,
        space: SearchSpace,
        kernel_name: str,
        source: str,
        source_name: str,
        problem_size: List[Union[int, str]],
        arguments: List[Tuple[str, str, bytes, bool]],
        *,
        answers: Optional[List[Optional[bytes]]] = None,
        atol: float = 1e-6,
        constants: Optional[List[Tuple[str, str, bytes]]] = None,
        block_size_names: Optional[List[str]] = None,
        grid_div_x: Optional[List[str]] = None,
        grid_div_y: Optional[List[str]] = None,
        grid_div_z: Optional[List[str]] = None,
        shared_memory: Optional[str] = None,
        compiler_options: Optional[List[str]] = None,
        device: int = 0,
        iterations: int = 7,
        template_args: Optional[List[str]] = None,
        lang: str = "cuda",
        platform: int = 0,
    ) -> None: ...
    def open(self) -> None:
        """Loads the driver (CUDA and NVRTC, or OpenCL), opens the device, uploads the arguments."""
    @property
    def jobs(self) -> int:
        """Configurations compiled in parallel."""
    @property
    def stopped(self) -> Optional[str]:
        """Why the runner stopped for good, or ``None``."""
    def evaluate(self, configs: List[Config]) -> List[Dict[str, Any]]:
        """Measures configurations: ``status``, ``reason``, ``time``, ``times`` and timings (ms)."""
    def environment(self) -> Dict[str, Any]:
        """The device, compiler, ``iterations`` and ``compiler_options``."""

def opencl_available() -> bool:
    """Whether an OpenCL driver with a device is here (``tune_kernel(lang="OpenCL")`` needs one)."""

def cuda_available() -> bool:
    """Whether the CUDA driver library can be loaded here (``tune_kernel`` needs it)."""
