#!/usr/bin/python3
"""Gradient-boosted trees in XGBoost, trained on the impressions graphsieve
keeps, calibrated by the log-odds offset as base_margin (docs/TRAINING.md).

    training on kept rows:  DMatrix(..., base_margin = -log_odds_offset)
    prediction:             DMatrix(...) with no base_margin

XGBoost adds base_margin to the trees' sum, so the trees learn the full-data
logit g and the kept rows' logit g - log rate is what the loss sees. The
features are the user and the item as categorical columns. The training log
goes through the ingestion filter of graphsieve-server (--server; a snapshot
built from --train), the test log is scored as is. The report compares, on the
test log, the model trained on every training impression (full data), the same
model on the kept rows with the offset, and the classic mistakes: the offset
dropped in training, and the offset used at prediction as well.

Needs python3-xgboost, python3-pandas and the graphsieve_client package.
"""
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd
import xgboost

from training_common import (filter_log, parser, prediction_mistakes, read_log, report, run_main,
                             scores, sigmoid, test_offsets)


def features(frame: pd.DataFrame, categories: Dict[str, pd.Index]) -> pd.DataFrame:
    """user_id and item_id as pandas categoricals over the training log's ids
    (an id the training log lacks becomes missing)."""
    return pd.DataFrame({c: pd.Categorical(frame[c], categories=categories[c])
                         for c in ("user_id", "item_id")})


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    p = parser(__doc__)
    p.add_argument("--rounds", type=int, default=100, help="boosting rounds")
    p.add_argument("--max-depth", type=int, default=4, help="tree depth")
    p.add_argument("--eta", type=float, default=0.3, help="learning rate")
    p.add_argument("--min-child-weight", type=float, default=10.0,
                   help="least hessian sum in a leaf")
    p.add_argument("--threads", type=int, default=1, help="XGBoost threads")
    options = p.parse_args(argv)

    train_log = read_log(options.train, options.instance_key_column)
    test = read_log(options.test, options.instance_key_column)
    kept = filter_log(options.server, train_log)
    categories = {c: pd.Index(pd.unique(train_log[c])) for c in ("user_id", "item_id")}
    params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": options.max_depth,
              "eta": options.eta, "max_cat_to_onehot": 1, "min_child_weight": options.min_child_weight,
              "nthread": options.threads,
              "seed": options.seed, "base_score": 0.5}  # margin 0 where no base_margin is set
    test_matrix = xgboost.DMatrix(features(test, categories), enable_categorical=True)

    def fit(rows: pd.DataFrame, offsets: Optional[np.ndarray]) -> np.ndarray:
        margin = -offsets if offsets is not None else np.zeros(len(rows))
        matrix = xgboost.DMatrix(features(rows, categories), label=rows["label"].to_numpy(),
                                 base_margin=margin, enable_categorical=True)
        booster = xgboost.train(params, matrix, num_boost_round=options.rounds)
        return booster.predict(test_matrix, output_margin=True).astype(np.float64)

    test_y = test["label"].to_numpy()
    full = fit(train_log, None)
    with_offset = fit(kept, kept["log_odds_offset"].to_numpy(dtype=np.float64))
    without_offset = fit(kept, None)
    models = {
        "full data": scores(test_y, sigmoid(full)),
        "kept rows, offset in training": scores(test_y, sigmoid(with_offset)),
        "kept rows, no offset (mistake)": scores(test_y, sigmoid(without_offset)),
    }
    models.update(prediction_mistakes(test_y, with_offset, test_offsets(options.server, test)))
    return report("xgboost_offset", len(train_log), kept, test, models, options.json)


if __name__ == "__main__":
    run_main(main)
