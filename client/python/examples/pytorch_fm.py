#!/usr/bin/python3
"""A factorisation machine in PyTorch, trained on the impressions graphsieve
keeps, calibrated by the log-odds offset (docs/TRAINING.md).

    logit g(u, i) = w0 + b_u + b_i + <v_u, v_i>
    training on kept rows:  loss = BCE(g - log_odds_offset, label)
    prediction:             p = sigmoid(g)          (no offset)

The training log goes through the ingestion filter of graphsieve-server
(--server; a snapshot built from --train), the test log is scored as is. The
report compares, on the test log: the model trained on every training
impression (full data), the same model on the kept rows with the offset, and
the classic mistakes: the offset dropped in training, and the offset used at
prediction as well (as in training, or subtracted once more).

Needs python3-torch, python3-pandas and the graphsieve_client package.
"""
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from training_common import (IdIndex, filter_log, finite, parser, prediction_mistakes, read_log,
                             report, run_main, scores, sigmoid, test_offsets)


class FactorisationMachine(torch.nn.Module):
    """Biases and dim-dimensional factors per user and item; index 0 is the
    unknown id (zero and never trained: it appears only in test logs)."""

    def __init__(self, users: int, items: int, dim: int) -> None:
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.user_bias = torch.nn.Embedding(users, 1, padding_idx=0)
        self.item_bias = torch.nn.Embedding(items, 1, padding_idx=0)
        self.user_factors = torch.nn.Embedding(users, dim, padding_idx=0)
        self.item_factors = torch.nn.Embedding(items, dim, padding_idx=0)
        for table in (self.user_bias, self.item_bias):
            torch.nn.init.zeros_(table.weight)
        for table in (self.user_factors, self.item_factors):
            torch.nn.init.normal_(table.weight, std=0.01)
            with torch.no_grad():
                table.weight[0].zero_()

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return (self.bias + self.user_bias(users).squeeze(-1) + self.item_bias(items).squeeze(-1) +
                (self.user_factors(users) * self.item_factors(items)).sum(-1))


def train(users: np.ndarray, items: np.ndarray, labels: np.ndarray,
          offsets: Optional[np.ndarray], shape: Dict[str, int], options: Any) -> FactorisationMachine:
    """Full-batch L-BFGS (at most --iterations steps) on
    sum_rows BCE(g - offset, label) + l2 * |biases and factors|^2, a penalised
    likelihood, from the constant model that fits the rows' click rate.
    `offsets` (log rate per row) is subtracted from the logit in the loss, and
    only there."""
    torch.manual_seed(options.seed)
    model = FactorisationMachine(shape["users"], shape["items"], options.dim)
    u, i = torch.as_tensor(users), torch.as_tensor(items)
    y = torch.as_tensor(labels, dtype=torch.float64)
    ell = torch.as_tensor(offsets if offsets is not None else np.zeros(len(labels)),
                          dtype=torch.float64)
    model.double()
    with torch.no_grad():  # start at the calibrated constant model
        rate = float(y.mean())
        model.bias.fill_(float(np.log(rate / (1 - rate)) + ell.mean()))
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=options.iterations,
                                  tolerance_grad=1e-9, tolerance_change=1e-12,
                                  history_size=20, line_search_fn="strong_wolfe")
    penalised = [model.user_bias.weight, model.item_bias.weight, model.user_factors.weight,
                 model.item_factors.weight]

    def objective() -> torch.Tensor:
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            model(u, i) - ell, y, reduction="sum")
        loss = (loss + options.l2 * sum(w.square().sum() for w in penalised)) / len(y)
        loss.backward()
        return loss

    loss = optimizer.step(objective)
    finite([float(loss)], "the training loss")
    return model


def predict(model: FactorisationMachine, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """g(u, i), the full-data logit."""
    with torch.no_grad():
        return model(torch.as_tensor(users), torch.as_tensor(items)).numpy()


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    p = parser(__doc__)
    p.add_argument("--dim", type=int, default=8, help="factor dimension")
    p.add_argument("--iterations", type=int, default=60, help="L-BFGS iterations at most")
    p.add_argument("--l2", type=float, default=10.0,
                   help="L2 weight on the biases and factors (absolute, not per row)")
    options = p.parse_args(argv)
    torch.set_num_threads(1)  # deterministic and frugal; the model is small

    train_log = read_log(options.train, options.instance_key_column)
    test = read_log(options.test, options.instance_key_column)
    kept = filter_log(options.server, train_log)
    user_index, item_index = IdIndex(train_log["user_id"]), IdIndex(train_log["item_id"])
    shape = {"users": len(user_index), "items": len(item_index)}
    test_u, test_i = user_index(test["user_id"]), item_index(test["item_id"])
    test_y = test["label"].to_numpy()

    def fit(rows: Any, offsets: Optional[np.ndarray]) -> np.ndarray:
        model = train(user_index(rows["user_id"]), item_index(rows["item_id"]),
                      rows["label"].to_numpy(), offsets, shape, options)
        return predict(model, test_u, test_i)

    full = fit(train_log, None)
    with_offset = fit(kept, kept["log_odds_offset"].to_numpy())
    without_offset = fit(kept, None)
    models = {
        "full data": scores(test_y, sigmoid(full)),
        "kept rows, offset in training": scores(test_y, sigmoid(with_offset)),
        "kept rows, no offset (mistake)": scores(test_y, sigmoid(without_offset)),
    }
    models.update(prediction_mistakes(test_y, with_offset, test_offsets(options.server, test)))
    return report("pytorch_fm", len(train_log), kept, test, models, options.json)


if __name__ == "__main__":
    run_main(main)
