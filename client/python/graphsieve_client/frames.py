"""pandas / numpy helpers of SamplingRateClient.rates_frame and
IngestionFilter.decide_frame (imported only by them: pandas stays optional)."""
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    import numpy
    import pandas


def column_values(frame: "pandas.DataFrame", column: str, floats_ok: bool = False) -> List[Any]:
    """The values of one column as a list of Python objects. Raises ValueError
    naming the column when it is missing, or when an id or key column
    (floats_ok False) holds floats: an integer column with missing values
    becomes float in pandas, and ids are integers or text."""
    if column not in frame.columns:
        raise ValueError(f"DataFrame has no column '{column}' (columns: "
                         f"{', '.join(map(str, frame.columns))})")
    series = frame[column]
    if series.dtype.kind == "f" and not floats_ok:
        missing = int(series.isna().sum())
        raise ValueError(f"column '{column}' holds floats ({series.dtype}"
                         f"{f', {missing} missing values' if missing else ''}); "
                         "ids and instance keys are integers or text")
    values: List[Any] = series.tolist()
    return values


def concat_columns(parts: List[Dict[str, "numpy.ndarray"]],
                   empty: Dict[str, "numpy.ndarray"]) -> Dict[str, "numpy.ndarray"]:
    """The per-batch column arrays joined in order (`empty` when there are none)."""
    import numpy as np
    if not parts:
        return empty
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def with_columns(frame: "pandas.DataFrame", columns: Dict[str, "numpy.ndarray"],
                 snapshot_versions: List[str]) -> "pandas.DataFrame":
    """A copy of frame with the columns added (replacing any of the same name)."""
    out = frame.copy()
    for name, values in columns.items():
        out[name] = values
    out.attrs["snapshot_versions"] = list(snapshot_versions)
    return out
