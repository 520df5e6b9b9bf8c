"""What the three training examples share: reading a log, sending it through
graphsieve's ingestion filter, and measuring calibration and AUC.

Not part of the graphsieve_client package (docs/TRAINING.md): the examples
need numpy and pandas (python3-numpy, python3-pandas) besides the client, and
each its own framework.

A log is a CSV with user_id, item_id and label (0/1) columns, as
graphsieve-gen writes and graphsieve-build reads; ids are read as text, so
numeric and string ids both work. The instance key of an impression (what
makes its keep decision stable across reruns) is a column given by
--instance-key-column, or else its row number in the file.
"""
import argparse
import json
import math
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from graphsieve_client import IngestionFilter, SamplingRateClient, ServerError


def parser(description: str) -> argparse.ArgumentParser:
    """The command line every example shares."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True,
                   help="graphsieve-server host:port (a snapshot built from --train)")
    p.add_argument("--train", required=True, help="training log (CSV: user_id,item_id,label)")
    p.add_argument("--test", required=True, help="test log, same columns; never filtered")
    p.add_argument("--instance-key-column", default="",
                   help="column with a stable key per impression (default: the row number)")
    p.add_argument("--seed", type=int, default=1, help="seed of the model's randomness")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def read_log(path: str, instance_key_column: str = "") -> pd.DataFrame:
    """The log at `path` with ids as text and labels as 0/1 ints, plus an
    instance_key column (the named column's values, or the row number).
    Raises ValueError naming the file and the missing column or bad label."""
    frame = pd.read_csv(path, dtype={"user_id": str, "item_id": str, "label": str})
    for column in ["user_id", "item_id", "label"] + ([instance_key_column]
                                                     if instance_key_column else []):
        if column not in frame.columns:
            raise ValueError(f"{path}: no column '{column}' (columns: "
                             f"{', '.join(map(str, frame.columns))})")
    labels = frame["label"].str.strip()
    bad = ~labels.isin(["0", "1"])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"{path}: data row {row + 1}: label {frame['label'].iloc[row]!r}, "
                         "expected 0 or 1")
    frame["label"] = (labels == "1").astype(np.int64)
    if instance_key_column:
        frame["instance_key"] = frame[instance_key_column].astype(str)
    else:
        frame["instance_key"] = np.arange(len(frame), dtype=np.int64)
    return frame


def filter_log(server: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The kept rows of `frame` with their rate and log_odds_offset (log rate),
    decided by graphsieve-server at `server` through IngestionFilter."""
    with SamplingRateClient(server) as client:
        decided = IngestionFilter(client).decide_frame(frame)
    return decided[decided["keep"]].reset_index(drop=True)


def test_offsets(server: str, frame: pd.DataFrame) -> np.ndarray:
    """log(rate) of the test pairs, from the server: only to measure what a
    model does when the offset is (wrongly) applied at prediction too."""
    with SamplingRateClient(server) as client:
        rates = client.rates_frame(frame)["rate"].to_numpy(dtype=np.float64)
    return np.log(rates)


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney; ties count one half)."""
    labels = np.asarray(labels)
    ranks = pd.Series(np.asarray(scores, dtype=np.float64)).rank(method="average").to_numpy()
    positives = int(labels.sum())
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("AUC needs positive and negative labels in the test log")
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) /
                 (positives * negatives))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def scores(labels: np.ndarray, probabilities: np.ndarray) -> Dict[str, float]:
    """Mean predicted CTR, its ratio to the observed CTR, and AUC."""
    observed = float(np.mean(labels))
    mean = float(np.mean(probabilities))
    return {"mean_predicted_ctr": mean, "ratio_to_observed": mean / observed,
            "auc": auc(labels, probabilities)}


def prediction_mistakes(labels: np.ndarray, logits: np.ndarray,
                        offsets: np.ndarray) -> Dict[str, Dict[str, float]]:
    """Scores of a model trained with the offset (logits g on the test rows)
    when the test pairs' offsets (log rate) are applied at prediction too:
    as in training (g - log rate: the kept rows' click rate, as if the offset
    had been dropped) or as a second correction (g + log rate)."""
    return {"offset at prediction, g - offset (mistake)": scores(labels, sigmoid(logits - offsets)),
            "offset at prediction, g + offset (mistake)": scores(labels, sigmoid(logits + offsets))}


class IdIndex:
    """Dense indices 1..n for the ids of the training log; 0 for an id it did
    not contain (a model keeps row 0 for unknown users or items)."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.categories = pd.Index(pd.unique(pd.Series(ids)))

    def __len__(self) -> int:
        return len(self.categories) + 1

    def __call__(self, ids: Sequence[str]) -> np.ndarray:
        return self.categories.get_indexer(pd.Series(ids)).astype(np.int64) + 1


def report(title: str, train_rows: int, kept: pd.DataFrame, test: pd.DataFrame,
           models: Dict[str, Dict[str, float]], as_json: bool) -> Dict[str, Any]:
    """Prints and returns the comparison of the models on the test log."""
    observed = float(test["label"].mean())
    result: Dict[str, Any] = {
        "example": title, "train_rows": train_rows, "kept_rows": len(kept),
        "kept_negatives_mean_rate": float(kept.loc[kept["label"] == 0, "rate"].mean()),
        "test_rows": len(test), "test_positives": int(test["label"].sum()),
        "observed_ctr": observed, "models": models}
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return result
    print(f"{title}: {train_rows} training rows, {len(kept)} kept; test {len(test)} rows, "
          f"observed CTR {observed:.5f}")
    print(f"{'model':<44} {'mean predicted CTR':>19} {'/ observed':>11} {'AUC':>8}")
    for name, s in models.items():
        print(f"{name:<44} {s['mean_predicted_ctr']:>19.5f} {s['ratio_to_observed']:>11.4f} "
              f"{s['auc']:>8.4f}")
    return result


def finite(values: List[float], what: str) -> None:
    """Raises RuntimeError when training diverged (a NaN or infinite value)."""
    if not all(math.isfinite(v) for v in values):
        raise RuntimeError(f"{what} is not finite: training diverged")


def run_main(main: Any, argv: Optional[List[str]] = None) -> None:
    """Runs an example's main() as a program: errors as one line and exit 2
    (a bad file or column, an unreachable or failing server, a diverged fit)."""
    import sys
    try:
        main(argv)
    except (ValueError, OSError, RuntimeError, ServerError) as e:
        print(f"{sys.argv[0]}: {e}", file=sys.stderr)
        sys.exit(2)
