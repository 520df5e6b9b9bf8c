"""The client's pandas and numpy paths against a live graphsieve-server:
SamplingRateClient.rates_frame, IngestionFilter.decide_frame and the
to_numpy() columns answer what the list calls answer for the same rows,
batched or not, with the input's index and columns kept; a float id column
or a missing column is refused by name. Needs Debian's python3-pandas.
"""
import csv
import unittest

import numpy as np
import pandas as pd

from graphsieve_client import IngestionFilter, SamplingRateClient
from live_server import LiveServer


class PythonFrameTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = LiveServer().start()
        with open(cls.server.log) as f:
            rows = list(csv.DictReader(f))[:997]
        # The log's own impressions (labels 0/1), an unknown user, a text id, and a
        # shuffled index that must survive.
        cls.frame = pd.DataFrame({
            "user_id": [int(r["user_id"]) for r in rows] + [999999999],
            "item_id": [int(r["item_id"]) for r in rows] + [1],
            "label": [int(r["label"]) for r in rows] + [0],
            "instance_key": list(range(5000, 5000 + len(rows))) + [77],
            "feature": np.arange(len(rows) + 1, dtype=np.float64) / 10,
        }, index=np.random.default_rng(4).permutation(len(rows) + 1) + 100)
        cls.client = SamplingRateClient(cls.server.target)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def expected_decisions(self):
        f = self.frame
        return IngestionFilter(self.client).decide(
            f.user_id.tolist(), f.item_id.tolist(), f.label.tolist(), f.instance_key.tolist())

    def test_decide_frame_adds_the_decisions_of_decide_in_row_order(self):
        d = self.expected_decisions()
        for batch_rows in (100000, 128, 1):
            out = IngestionFilter(self.client).decide_frame(self.frame, batch_rows=batch_rows)
            self.assertEqual(list(out.columns), list(self.frame.columns) +
                             ["rate", "source", "keep", "log_odds_offset"])
            self.assertTrue(out.index.equals(self.frame.index))
            pd.testing.assert_frame_equal(out[self.frame.columns], self.frame)
            self.assertEqual(out.rate.dtype, np.float32)
            self.assertEqual(out.log_odds_offset.dtype, np.float32)
            self.assertEqual(out.keep.dtype, bool)
            self.assertEqual(out.rate.tolist(), d.rates)
            self.assertEqual(out.keep.tolist(), d.keep)
            self.assertEqual(out.log_odds_offset.tolist(), d.log_odds_offsets)
            self.assertEqual(out.source.tolist(), d.sources)
            self.assertEqual(out.attrs["snapshot_versions"], d.snapshot_versions)
        self.assertIn("DEFAULT", d.sources)
        self.assertTrue(all(d.keep[i] for i in range(len(d)) if self.frame.label.iloc[i] == 1))
        self.assertIn(False, d.keep)

    def test_decide_frame_reads_named_columns_and_text_ids(self):
        renamed = self.frame.rename(columns={"user_id": "u", "item_id": "i", "label": "clicked",
                                             "instance_key": "event"})
        renamed["u"] = renamed["u"].astype(str)  # decimal text reads as the integer
        out = IngestionFilter(self.client).decide_frame(
            renamed, user_column="u", item_column="i", label_column="clicked",
            instance_key_column="event")
        self.assertEqual(out.keep.tolist(), self.expected_decisions().keep)

    def test_rates_frame_and_to_numpy_answer_what_get_rates_answers(self):
        batch = self.client.get_rates(self.frame.user_id.to_numpy(),
                                      self.frame.item_id.to_numpy(dtype=np.uint64))
        listed = self.client.get_rates(self.frame.user_id.tolist(), self.frame.item_id.tolist())
        self.assertEqual(batch.rates, listed.rates)
        out = self.client.rates_frame(self.frame)
        self.assertEqual(out.rate.tolist(), listed.rates)
        self.assertEqual(out.source.tolist(), listed.sources)
        self.assertNotIn("keep", out.columns)
        arrays = self.expected_decisions().to_numpy()
        self.assertEqual(arrays["rate"].dtype, np.float32)
        self.assertEqual(arrays["keep"].dtype, bool)
        self.assertEqual(arrays["rate"].tolist(), listed.rates)

    def test_an_empty_frame_gets_empty_columns(self):
        out = IngestionFilter(self.client).decide_frame(self.frame.iloc[:0])
        self.assertEqual(len(out), 0)
        self.assertIn("log_odds_offset", out.columns)
        # rates_frame adds the same columns to an empty frame as to any other.
        empty = self.client.rates_frame(self.frame.iloc[:0])
        full = self.client.rates_frame(self.frame)
        self.assertEqual(len(empty), 0)
        self.assertEqual(list(empty.columns), list(full.columns))
        self.assertNotIn("keep", empty.columns)
        self.assertNotIn("log_odds_offset", empty.columns)

    def test_bad_columns_are_named(self):
        with self.assertRaisesRegex(ValueError, "no column 'instance_key'"):
            IngestionFilter(self.client).decide_frame(self.frame.drop(columns="instance_key"))
        holes = self.frame.astype({"item_id": float})
        holes.loc[holes.index[3], "item_id"] = np.nan
        with self.assertRaisesRegex(ValueError, "column 'item_id' holds floats .*1 missing"):
            IngestionFilter(self.client).decide_frame(holes)
        bad_label = self.frame.astype({"label": str})
        bad_label.loc[bad_label.index[2], "label"] = "yes"
        with self.assertRaisesRegex(ValueError, "label 'yes' at index 2"):
            IngestionFilter(self.client).decide_frame(bad_label)


if __name__ == "__main__":
    unittest.main()
