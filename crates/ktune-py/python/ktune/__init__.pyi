from typing import Any, Dict, List

from ktune._ktune import KtuneError as KtuneError
from ktune._ktune import SearchSpace as SearchSpace
from ktune._ktune import Study as _Study
from ktune._ktune import simulate as simulate

class ResultList(List[Dict[str, Any]]):
    def to_pandas(self) -> Any:
        """A pandas DataFrame: the parameters, then value, status and reason."""

class Study(_Study):
    @property
    def results(self) -> ResultList: ...
