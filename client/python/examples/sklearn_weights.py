#!/usr/bin/python3
"""The weighting alternative: a logistic regression in scikit-learn, trained on
the impressions graphsieve keeps with sample_weight = 1 / rate on the kept
negatives and 1 on the positives, and no offset (docs/TRAINING.md).

    training on kept rows:  fit(X, y, sample_weight = 1 if y else 1 / rate)
    prediction:             predict_proba(X)

Each kept negative stands for the 1 / rate negatives of its pair that a full
log would hold, so the weighted kept rows estimate the full log's likelihood:
the fit targets the full-data model even when the model is misspecified, at a
higher variance than the offset (a few kept negatives carry large weights).
The features are one-hot users and items (a GLM with a bias per user and per
item). The training log goes through the ingestion filter of graphsieve-server
(--server; a snapshot built from --train), the test log is scored as is. The
report compares, on the test log, the model trained on every training
impression (full data), the weighted model on the kept rows, and the same
model on the kept rows without weights (the mistake).

Needs python3-sklearn, python3-pandas and the graphsieve_client package.
"""
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from training_common import filter_log, parser, read_log, report, run_main, scores


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    p = parser(__doc__)
    p.add_argument("--C", type=float, default=1.0,
                   help="inverse L2 strength (scikit-learn's C; absolute, not per row)")
    p.add_argument("--max-iter", type=int, default=1000, help="solver iterations at most")
    options = p.parse_args(argv)

    train_log = read_log(options.train, options.instance_key_column)
    test = read_log(options.test, options.instance_key_column)
    kept = filter_log(options.server, train_log)
    columns = ["user_id", "item_id"]
    encoder = OneHotEncoder(handle_unknown="ignore").fit(train_log[columns])
    test_x, test_y = encoder.transform(test[columns]), test["label"].to_numpy()

    def fit(rows: pd.DataFrame, weights: Optional[np.ndarray]) -> np.ndarray:
        model = LogisticRegression(C=options.C, max_iter=options.max_iter, solver="lbfgs")
        model.fit(encoder.transform(rows[columns]), rows["label"].to_numpy(),
                  sample_weight=weights)
        probabilities: np.ndarray = model.predict_proba(test_x)[:, 1]
        return probabilities

    labels = kept["label"].to_numpy()
    weights = np.where(labels == 1, 1.0, 1.0 / kept["rate"].to_numpy(dtype=np.float64))
    models = {
        "full data": scores(test_y, fit(train_log, None)),
        "kept rows, weights 1/rate": scores(test_y, fit(kept, weights)),
        "kept rows, no weights (mistake)": scores(test_y, fit(kept, None)),
    }
    return report("sklearn_weights", len(train_log), kept, test, models, options.json)


if __name__ == "__main__":
    run_main(main)
