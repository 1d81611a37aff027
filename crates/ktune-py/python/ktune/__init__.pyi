import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ktune._ktune import KtuneError as KtuneError
from ktune._ktune import SearchSpace as SearchSpace
from ktune._ktune import __version__ as __version__
from ktune._ktune import Study as Study
from ktune._ktune import cuda_available as cuda_available
from ktune._ktune import opencl_available as opencl_available
from ktune._ktune import report as report
from ktune._ktune import select as select
from ktune._ktune import simulate as simulate

class ResultList(List[Dict[str, Any]]):
    def to_pandas(self) -> Any:
        """A pandas DataFrame: the parameters, then value, status and reason."""
    def _repr_html_(self) -> str:
        """Jupyter's view: the first 50 results as a table."""


class ErrorConfig(str):
    """The ``__error__`` value of a result that could not be measured."""

class InvalidConfig(ErrorConfig): ...
class CompilationFailedConfig(ErrorConfig): ...
class RuntimeFailedConfig(ErrorConfig): ...

def tune_kernel(
    kernel_name: str,
    kernel_source: Any,
    problem_size: Union[int, str, Sequence[Union[int, str]]],
    arguments: List[Any],
    tune_params: Dict[str, Sequence[Any]],
    grid_div_x: Optional[List[str]] = None,
    grid_div_y: Optional[List[str]] = None,
    grid_div_z: Optional[List[str]] = None,
    restrictions: Optional[List[str]] = None,
    answer: Optional[List[Any]] = None,
    atol: float = 1e-6,
    verify: Optional[bool] = None,
    verbose: bool = False,
    lang: Optional[str] = None,
    device: int = 0,
    platform: int = 0,
    smem_args: Optional[Dict[str, Any]] = None,
    cmem_args: Optional[Dict[str, Any]] = None,
    texmem_args: None = None,
    compiler: None = None,
    compiler_options: Optional[List[str]] = None,
    defines: None = None,
    log: None = None,
    iterations: int = 7,
    block_size_names: Optional[List[str]] = None,
    quiet: bool = False,
    strategy: Optional[str] = None,
    strategy_options: Optional[Dict[str, Any]] = None,
    cache: Optional[str] = None,
    metrics: Optional[Dict[str, Union[str, Callable[[Dict[str, Any]], float]]]] = None,
    simulation_mode: None = None,
    parallel: None = None,
    observers: None = None,
    objective: Optional[str] = None,
    objective_higher_is_better: Optional[bool] = None,
    objectives: None = None,
    seed: Optional[int] = None,
    prior: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], None] = None,
) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Tunes a CUDA kernel with Kernel Tuner's arguments; returns ``(results, env)``.
    ``prior`` (ktune only): earlier tuning to start from (Kernel Tuner caches, ktune studies,
    T4 files)."""
