"""Rows on disk: JSONL reading (BOM, gzip, a folder) and writing (escaped lone surrogates)."""

from __future__ import annotations

import pytest
import shop

import whileai as wai

# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_rows_files_with_a_bom_gzip_or_a_folder(tmp_path):
    bom = tmp_path / "bom.jsonl"
    bom.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "a", "reward": 0}\n', encoding="utf-8-sig")
    assert wai.pass_at(bom).n_rows == 2
    import gzip

    gz = tmp_path / "rows.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write('{"task_id": "a", "reward": 1}\n')
    with pytest.raises(ValueError, match="gzip-compressed; decompress it first"):
        wai.pass_at(gz)
    with pytest.raises(IsADirectoryError, match="is a directory; pass the JSONL file inside it"):
        wai.pass_at(tmp_path)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"task_id": "a", "reward": 1}\n{"task_id": "\xe9", "reward": 1}\n')
    with pytest.raises(ValueError, match=r"latin.jsonl:2: not UTF-8 text"):
        wai.pass_at(latin)


def test_lone_surrogates_are_saved_escaped_and_read_back_exactly(tmp_path):
    data = wai.simulate(lambda m: "bad \udcff byte.", tools=[shop.get_order], repeats=1, budget=2)
    path = data.save(tmp_path / "rows.jsonl")
    back = wai.pass_at(path)  # the file reads back (as strict UTF-8 JSONL)
    assert back.n_rows == 0 and back.n_skipped == 2
    from whileai_core.rows import read_jsonl

    assert read_jsonl(path)[0]["final_text"] == "bad \udcff byte."
    rep = wai.export(data.grade(lambda r: 1), tmp_path / "train.jsonl")
    assert rep["n_written"] == 2
