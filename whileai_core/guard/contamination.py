"""Decontamination: drop training rows that share long n-grams with an eval set.

Source: the n-gram rule follows Llama 2 (Touvron et al. 2023, A.6) with Llama 3's 8-grams.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from whileai_core.arguments import fraction, integer
from whileai_core.defaults import (
    DECONTAM_CALIBRATION_QUANTILE,
    DECONTAM_EXAMPLES,
    DECONTAM_MAX_NGRAM,
    DECONTAM_NGRAM,
    DECONTAM_OVERLAP,
    DECONTAM_SIMILARITY,
    TRACE_EVIDENCE_CHARS,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.messages import Row
from whileai_core.rows import REFERENCE_FIELDS, ReportMapping, as_rows

__all__ = ["DecontaminationReport", "decontaminate"]


# --------------------------------------------------------------------------------------------------
# decontaminate
# --------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
#: bytes.translate table: every byte that is not [a-z0-9] becomes a space
_SEPARATE = bytes(c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256))
_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)  # golden-ratio odd multiplier (Knuth); any odd 64-bit constant works


def _words(text: str) -> list[str]:
    """Lowercased ``[a-z0-9]+`` words: case, punctuation and whitespace do not matter."""
    return _TOKEN.findall(text.lower())


def _field_text(row: Mapping[str, Any], name: str) -> str | None:
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # a message list: the contents joined
        parts = [str(m["content"]) for m in value if isinstance(m, Mapping) and isinstance(m.get("content"), str)]
        if parts:
            return "\n".join(parts)
    return json.dumps(value, sort_keys=True, default=str)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser (Steele et al. 2014): spreads small word ids over all 64 bits."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class _Corpus:
    """Texts as one concatenated array of word ids, with each text's n-gram hashes."""

    def __init__(self, texts: Sequence[str | None], n: int) -> None:
        words: list[bytes] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            if text:
                # == _TOKEN.findall(text.lower()), but bytes.translate + split is several times faster
                w = text.lower().encode("ascii", "replace").translate(_SEPARATE).split()
                lengths[i] = len(w)
                words.extend(w)
        # str hashes are consistent within one process, which is all one call needs (equal words, equal ids)
        ids = np.fromiter(map(hash, words), dtype=np.int64, count=len(words)).view(np.uint64)
        self.n = n
        self.lengths = lengths
        self.offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        self.total = int(self.offsets[-1])
        mixed = _mix64(ids)
        self.mixed = mixed
        n_starts = max(0, self.total - n + 1)
        h = np.zeros(n_starts, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(n):  # n passes over the array (n-gram positions), all rows at once
                h = h * _HASH_MULT + mixed[j:j + n_starts]
        text_of = np.repeat(np.arange(len(texts)), lengths)
        valid = np.zeros(n_starts, dtype=bool)
        if n_starts:
            valid = text_of[:n_starts] == text_of[n - 1:n - 1 + n_starts]
        self.starts = np.flatnonzero(valid)
        self.hashes = h[valid]
        self.text_of_start = text_of[:n_starts][valid] if n_starts else np.zeros(0, dtype=np.int64)
        # whole-text hashes for the exact rule (an order-sensitive fold of the mixed ids)
        self.exact = self._whole_hashes(mixed, lengths)

    @staticmethod
    def _whole_hashes(mixed: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        out = np.zeros(len(lengths), dtype=np.uint64)
        if not len(mixed):
            return out
        pos = np.arange(len(mixed), dtype=np.uint64)
        with np.errstate(over="ignore"):
            vals = _mix64(mixed ^ _mix64(pos - np.repeat(np.r_[0, np.cumsum(lengths)[:-1]], lengths).astype(np.uint64)))
        nonempty = lengths > 0
        starts = np.r_[0, np.cumsum(lengths)[:-1]][nonempty]
        with np.errstate(over="ignore"):
            out[nonempty] = np.add.reduceat(vals, starts) + lengths[nonempty].astype(np.uint64)
        return out

    def coverage(self, hit: np.ndarray) -> np.ndarray:
        """Per text: the share of its words inside at least one n-gram with ``hit`` True."""
        diff = np.zeros(self.total + 1, dtype=np.int64)
        s = self.starts[hit]
        np.add.at(diff, s, 1)
        np.add.at(diff, s + self.n, -1)
        covered = (np.cumsum(diff[:-1]) > 0).astype(np.int64)
        out = np.zeros(len(self.lengths))
        nonempty = self.lengths > 0
        if covered.size:
            sums = np.add.reduceat(covered, self.offsets[:-1][nonempty]) if nonempty.any() else np.zeros(0)
            out[nonempty] = sums / self.lengths[nonempty]
        return out


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``values in sorted_set`` elementwise: a bitmap on the low hash bits rules most values out in one gather,
    and only the candidates are confirmed by binary search."""
    if not len(sorted_set) or not len(values):
        return np.zeros(len(values), dtype=bool)
    bits = int(min(26, max(16, math.ceil(math.log2(len(sorted_set) * 8)))))
    mask = np.uint64((1 << bits) - 1)
    bitmap = np.zeros(1 << bits, dtype=bool)
    bitmap[(sorted_set & mask).astype(np.int64)] = True
    out = bitmap[(values & mask).astype(np.int64)]
    cand = np.flatnonzero(out)
    if len(cand):
        v = values[cand]
        pos = np.minimum(np.searchsorted(sorted_set, v), len(sorted_set) - 1)
        out[cand] = sorted_set[pos] == v
    return out


def _eval_sources(against: Any) -> list[Any]:
    import os

    if isinstance(against, (str, os.PathLike)):
        return [against]
    if isinstance(against, Mapping):
        return [[against]]
    items = against if isinstance(against, (list, tuple)) else list(as_rows(against, name="against"))
    if items and all(isinstance(x, (list, tuple, os.PathLike)) or hasattr(x, "rows") for x in items) and not all(
        isinstance(x, Mapping) for x in items
    ):
        return list(items)
    return [items]


# a label is a class or a 0/1 verdict, not answer text: matched whole, "1" would flag every row that is "1"
_ANSWER_TEXT_FIELDS = tuple(f for f in REFERENCE_FIELDS if f != "label")


def _eval_texts(against: Any) -> tuple[list[str], list[str | None], int]:
    """(texts, task id of each text, n eval rows). Eval texts: each eval row's prompt plus its answer."""
    texts: list[str] = []
    ids: list[str | None] = []
    n_rows = 0
    for src in _eval_sources(against):
        items = src if isinstance(src, (list, tuple)) and all(isinstance(x, str) for x in src) else None
        if items is not None:
            texts.extend(items)
            ids.extend([None] * len(items))
            n_rows += len(items)
            continue
        for row in as_rows(src, name="against"):
            n_rows += 1
            tid = row.get("task_id") or row.get("scenario_id")
            candidates = [_field_text(row, "prompt")] + [_field_text(row, f) for f in _ANSWER_TEXT_FIELDS]
            priv = row.get("privileged")
            if isinstance(priv, Mapping) and priv.get("reference") is not None:
                candidates.append(_field_text(priv, "reference"))
            for text in candidates:
                if text:
                    texts.append(text)
                    ids.append(str(tid) if tid not in (None, "") else None)
    return texts, ids, n_rows


@dataclass
class DecontaminationReport(ReportMapping):
    """Which training rows overlap an eval set. Unpacks as ``clean_rows, report = decontaminate(...)``."""

    SDK_KEYS: ClassVar[dict[str, Any]] = {"contamination_rate": "contamination_rate"}  # a property, also a key

    n: int
    n_kept: int
    n_contaminated: int
    n_same_task: int
    n_exact: int
    n_near: int
    n_eval_rows: int
    n_eval_texts: int
    n_eval_dirty: int
    ngram: int
    overlap: float
    fields: list[str]
    contaminated: list[int]
    examples: list[dict[str, Any]]
    rules_skipped: dict[str, str]
    notes: list[str]
    clean: list[dict[str, Any]] = field(repr=False, default_factory=list)
    coverage: list[float] = field(repr=False, default_factory=list)
    n_semantic: int = 0
    similarity: float | None = None
    calibration: float | None = None

    @property
    def contamination_rate(self) -> float:
        return self.n_contaminated / self.n if self.n else 0.0

    def __iter__(self):
        yield self.clean
        yield self

    def __str__(self) -> str:
        return (f"decontaminate: dropped {self.n_contaminated} of {self.n} rows ({self.contamination_rate:.1%}; "
                f"same task {self.n_same_task}, exact {self.n_exact}, {self.ngram}-gram overlap >= "
                f"{self.overlap:.0%} {self.n_near}"
                + (f", semantic cosine >= {self.similarity:.2f} {self.n_semantic}" if self.similarity is not None else "")
                + f") against {self.n_eval_texts} eval texts; "
                f"{self.n_eval_dirty} eval texts are >= {self.overlap:.0%} covered by training n-grams")

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n, "n_kept": self.n_kept, "n_contaminated": self.n_contaminated,
            "contamination_rate": self.contamination_rate, "n_same_task": self.n_same_task,
            "n_exact": self.n_exact, "n_near": self.n_near, "n_eval_rows": self.n_eval_rows,
            "n_eval_texts": self.n_eval_texts, "n_eval_dirty": self.n_eval_dirty, "ngram": self.ngram,
            "overlap": self.overlap, "fields": list(self.fields), "contaminated": list(self.contaminated),
            "examples": [dict(e) for e in self.examples], "rules_skipped": dict(self.rules_skipped),
            "notes": list(self.notes), "n_semantic": self.n_semantic, "similarity": self.similarity,
            "calibration": self.calibration,
        }


def _check_fields(fields: Any, data: Sequence[Row]) -> list[str]:
    field_list = [fields] if isinstance(fields, str) else list(fields)
    if not field_list or not all(isinstance(f, str) and f for f in field_list):
        raise InvalidArgument(f"fields= must be a row field name or a list of names, e.g. ('prompt',); got {fields!r}")
    absent = [f for f in field_list if data and not any(f in row for row in data)]
    if absent:
        present = sorted({k for row in data[:50] for k in row})[:12]
        raise InvalidArgument(f"fields={absent} appear in no row, so nothing would be checked; rows carry {present}")
    return field_list


def _example(i: int, fname: str, exact: bool, coverage: float, hit: np.ndarray, tc: _Corpus, ev: _Corpus,
             texts: Sequence[str | None], eval_texts: Sequence[str]) -> dict[str, Any]:
    """One contaminated row as evidence: the field, the coverage, the shared n-gram (or "exact"), the eval text."""
    d: dict[str, Any] = {"index": i, "field": fname, "coverage": round(coverage, 4)}
    if exact:
        d["match"] = "exact"
        j = int(np.flatnonzero(ev.exact == tc.exact[i])[0])
    else:
        first = np.flatnonzero(hit & (tc.text_of_start == i))[0]
        local = int(tc.starts[first]) - int(tc.offsets[i])
        d["match"] = " ".join(_words(texts[i] or "")[local:local + tc.n])
        j = int(ev.text_of_start[np.flatnonzero(ev.hashes == tc.hashes[first])[0]])
    d["eval_text"] = eval_texts[j][:TRACE_EVIDENCE_CHARS]
    return d


def _same_task(data: Sequence[Row], eval_ids: list[str | None], eval_texts: list[str], reason: list[str | None],
               detail: dict[int, dict[str, Any]], rules_skipped: dict[str, str]) -> None:
    """Rule 1: a training row whose task id is an eval row's id."""
    ids_eval = {i for i in eval_ids if i}
    row_ids = [row.get("task_id") or row.get("scenario_id") for row in data]
    if not ids_eval or not any(row_ids):
        rules_skipped["same_task"] = "the eval rows or the training rows carry no task_id/scenario_id"
        return
    for i, tid in enumerate(row_ids):
        if tid not in (None, "") and str(tid) in ids_eval:
            reason[i] = "same_task"
            detail[i] = {"index": i, "field": "task_id", "match": "same_task", "coverage": 1.0,
                         "eval_text": eval_texts[eval_ids.index(str(tid))][:TRACE_EVIDENCE_CHARS]}


def _embed_function(embedder: Any) -> Callable[[list[str]], Any] | None:
    if embedder is None:
        return None
    fn = getattr(embedder, "embed", None) if not callable(embedder) else embedder
    if fn is None or not callable(fn):
        raise InvalidArgumentType(f"embedder= must be callable, embedder(texts) -> vectors, or have .embed(texts); "
                                  f"got {type(embedder).__name__}")
    return fn


def _unit_vectors(embed: Callable[[list[str]], Any], texts: list[str], what: str) -> np.ndarray:
    vecs = np.asarray(embed(list(texts)), dtype=float)
    if vecs.ndim != 2 or vecs.shape[0] != len(texts):
        raise InvalidArgument(f"embedder returned {vecs.shape[0] if vecs.ndim else 0} vectors for {len(texts)} {what} "
                              "texts; it must return one vector per text (a 2-D array)")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)


def _semantic(data: Sequence[Row], field_list: list[str], embed: Callable[[list[str]], Any], eval_texts: list[str],
              eval_ids: list[str | None], reason: list[str | None], detail: dict[int, dict[str, Any]], *,
              similarity: float, quantile: float, notes: list[str], rules_skipped: dict[str, str]) -> float | None:
    """Rule 4: rows the n-gram rules left clean whose embedding sits within ``similarity`` cosine of an eval
    text of another task. Returns the calibration cosine between distinct eval tasks (or None)."""
    import warnings as _warnings

    if not eval_texts:
        _warnings.warn("decontaminate(embedder=): the eval set gave no texts, so the semantic rule is skipped",
                       UserWarning, stacklevel=3)
        rules_skipped["semantic"] = "the eval set gave no texts"
        return None
    ev = _unit_vectors(embed, eval_texts, "eval")
    sims_eval = ev @ ev.T
    ids = np.array([i or f"\x00{j}" for j, i in enumerate(eval_ids)], dtype=object)
    other = ids[:, None] != ids[None, :]
    calibration = float(np.quantile(sims_eval[other], quantile)) if other.any() else None
    if calibration is not None and similarity < calibration:
        notes.append(f"similarity={similarity:.2f} is below the {quantile:.0%} cosine between distinct eval tasks "
                     f"({calibration:.2f}): paraphrase flags at this cut include rows that are merely on-topic")
    todo = [i for i, r in enumerate(reason) if r is None]
    for fname in field_list:
        idx = [i for i in todo if reason[i] is None and _field_text(data[i], fname)]
        if not idx:
            continue
        vecs = _unit_vectors(embed, [_field_text(data[i], fname) or "" for i in idx], "row")
        sims = vecs @ ev.T
        row_ids = [str(data[i].get("task_id") or data[i].get("scenario_id") or "") for i in idx]
        same = np.array([[bool(rid) and rid == (e or "") for e in eval_ids] for rid in row_ids], dtype=bool)
        sims = np.where(same, -np.inf, sims)
        best, at = sims.max(axis=1), sims.argmax(axis=1)
        for pos in np.flatnonzero(best >= similarity):
            i = idx[int(pos)]
            reason[i] = "semantic"
            detail[i] = {"index": i, "field": fname, "match": "semantic", "similarity": round(float(best[pos]), 4),
                         "eval_text": eval_texts[int(at[pos])][:TRACE_EVIDENCE_CHARS]}
    return calibration


def _ngram_rules(data: Sequence[Row], field_list: list[str], ev: _Corpus, eval_texts: list[str],
                 reason: list[str | None], detail: dict[int, dict[str, Any]], *, n: int, overlap: float,
                 examples: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rules 2 and 3 (exact text, n-gram overlap) on each field; returns the best coverage per row and the eval
    n-grams each field shares."""
    eval_hashes = np.sort(ev.hashes)
    eval_exact = np.sort(ev.exact[ev.lengths > 0])
    n_rows = len(data)
    best_cov = np.zeros(n_rows)
    train_union: list[np.ndarray] = []
    for fname in field_list:
        texts = [_field_text(row, fname) for row in data]
        tc = _Corpus(texts, n)
        hit = _member(tc.hashes, eval_hashes)
        cov = tc.coverage(hit)
        best_cov = np.maximum(best_cov, cov)
        exact = _member(tc.exact, eval_exact) & (tc.lengths > 0)
        near = (cov >= overlap) & (tc.lengths >= n)
        if overlap == 0:
            near = np.zeros(n_rows, dtype=bool)
            near[np.unique(tc.text_of_start[hit])] = True
        train_union.append(tc.hashes[hit])  # the eval n-grams this field shares (membership is symmetric)
        for hit_index in np.flatnonzero(exact | near):
            i = int(hit_index)
            if reason[i] is not None:
                continue
            reason[i] = "exact" if exact[i] else "near"
            if len(detail) < examples:
                detail[i] = _example(i, fname, bool(exact[i]), float(cov[i]), hit, tc, ev, texts, eval_texts)
    return best_cov, train_union


def decontaminate(
    rows: Any,
    against: Any,
    *,
    n: int = DECONTAM_NGRAM,
    overlap: float = DECONTAM_OVERLAP,
    fields: str | Sequence[str] = ("prompt",),
    examples: int = DECONTAM_EXAMPLES,
    embedder: Any = None,
    similarity: float = DECONTAM_SIMILARITY,
    max_n: int = DECONTAM_MAX_NGRAM,
    calibration_quantile: float = DECONTAM_CALIBRATION_QUANTILE,
) -> DecontaminationReport:
    """Drop training rows that copy an eval set: same task id, exact text, or n-gram overlap (Llama 2 A.6).

    Text is lowercased and split into ``[a-z0-9]+`` words. A row's field is contaminated when at least
    ``overlap`` of its words lie inside word ``n``-grams that also occur in an eval text (``overlap=0``: any
    shared n-gram). Eval texts are each eval row's prompt plus its answer/reference, never its reply;
    ``fields`` names the training-row fields checked against them.
    ``against`` is a row list, a JSONL path, a list of strings, or a list of such sources. N-grams are hashed
    to 64 bits and matched with numpy, so 100k rows take seconds. ``n`` is at most ``max_n`` (default
    ``defaults.DECONTAM_MAX_NGRAM`` = 256).

    Paraphrases are caught only with ``embedder``: ``embedder(texts) -> vectors`` (one vector per text; an
    object with ``.embed(texts)`` works too), your own embedding model. Each row still clean after the n-gram
    rules is flagged ``semantic`` when its best cosine against an eval text of another (or no) task is at least
    ``similarity`` (default ``defaults.DECONTAM_SIMILARITY`` = 0.85). The report's ``calibration`` is the
    ``calibration_quantile`` (0.99) cosine between distinct eval tasks, with a note when ``similarity`` sits
    below it (distinct eval tasks already look alike at that cosine).
    Returns a report that unpacks as ``clean_rows, report``.

    Args:
        rows: the training rows (row dicts, a JSONL path, or an object with ``.rows``).
        against: the eval set: a row list, a JSONL path, a list of strings, or a list of such sources.
        n: the word n-gram length (default ``defaults.DECONTAM_NGRAM`` = 8; Llama 3 and PaLM use 8-grams).
        overlap: the share of a field's words inside shared n-grams that marks it contaminated; 0 means any
            shared n-gram (default ``defaults.DECONTAM_OVERLAP`` = 0.8; Llama 2 A.6 "dirty" >= 80%).
        fields: the training-row field(s) checked (default ``("prompt",)``); each must appear in some row.
        examples: contaminated rows described in ``report.examples`` (default ``defaults.DECONTAM_EXAMPLES``
            = 20).
        embedder: ``embedder(texts) -> vectors`` or an object with ``.embed(texts)``: turns on the paraphrase
            rule (default None: n-gram rules only, and a note says paraphrases are not caught).
        similarity: the cosine at or above which an embedded row is a paraphrase (default
            ``defaults.DECONTAM_SIMILARITY`` = 0.85, the whileai SDK's).
        max_n: the largest ``n`` accepted (default ``defaults.DECONTAM_MAX_NGRAM`` = 256).
        calibration_quantile: the quantile of cosine between distinct eval tasks reported as
            ``report.calibration`` (default ``defaults.DECONTAM_CALIBRATION_QUANTILE`` = 0.99).

    Returns:
        DecontaminationReport: counts per rule (``n_same_task``, ``n_exact``, ``n_near``, ``n_semantic``),
        ``contaminated`` (row indices), ``examples``, ``coverage``, ``n_eval_dirty``, ``notes``, and ``clean``
        (a RowList of the rows kept, carrying the source's ``system_prompt`` and ``tools``); it unpacks as
        ``clean_rows, report`` and prints itself.

    Raises:
        InvalidArgument: ``n`` outside [1, max_n], ``max_n`` < 1, ``examples`` < 0,
            ``overlap``/``similarity``/``calibration_quantile`` outside [0, 1], ``fields`` that is not a name or
            list of names or that no row carries, an embedder that returns a vector count unlike the text
            count.
        InvalidArgumentType: an ``embedder`` that is neither callable nor has ``.embed``; ``rows`` that are
            not rows.

    Example:
        ```python
        train = [{"prompt": "What is the capital of France? Answer in one word please"},
                 {"prompt": "Add 2 and 3"}]
        evals = [{"prompt": "What is the capital of France? Answer in one word please", "answer": "Paris"}]
        clean, report = wai.decontaminate(train, evals)
        print(report)   # decontaminate: dropped 1 of 2 rows (50.0%; same task 0, exact 1, ...) ...
        ```
    """
    data = as_rows(rows, name="rows")
    max_n = integer("max_n", max_n, minimum=1)
    n = integer("n", n, minimum=1)
    if n > max_n:
        raise InvalidArgument(f"n={n} is the n-gram length in words and must be <= max_n={max_n}; Llama 3 and "
                              "PaLM use 8 (the default), GPT-3 13: pass n=8, or raise max_n= for longer n-grams")
    similarity = fraction("similarity", similarity, closed=True)
    calibration_quantile = fraction("calibration_quantile", calibration_quantile, closed=True)
    embed = _embed_function(embedder)
    overlap = fraction("overlap", overlap, closed=True)
    examples = integer("examples", examples, minimum=0)
    field_list = _check_fields(fields, data)
    eval_texts, eval_ids, n_eval_rows = _eval_texts(against)
    notes = [] if embed else [(f"paraphrases are not caught: {n}-gram overlap finds copies, not rewordings; pass "
                               "embedder= to catch them")]
    rules_skipped: dict[str, str] = {}
    if not eval_texts:
        notes.append("the eval set gave no texts; nothing can be matched")

    n_rows = len(data)
    reason: list[str | None] = [None] * n_rows
    detail: dict[int, dict[str, Any]] = {}
    _same_task(data, eval_ids, eval_texts, reason, detail, rules_skipped)
    ev = _Corpus(eval_texts, n)
    best_cov, train_union = _ngram_rules(data, field_list, ev, eval_texts, reason, detail, n=n, overlap=overlap,
                                         examples=examples)
    calibration = None
    if embed is not None:
        calibration = _semantic(data, field_list, embed, eval_texts, eval_ids, reason, detail,
                                similarity=similarity, quantile=calibration_quantile, notes=notes,
                                rules_skipped=rules_skipped)
    # the eval-side view: eval texts mostly covered by n-grams found in training rows
    if any(len(u) for u in train_union) and len(ev.hashes):
        all_train = np.sort(np.concatenate(train_union))
        ev_cov = ev.coverage(_member(ev.hashes, all_train))
        n_eval_dirty = int(np.count_nonzero((ev_cov >= overlap) & (ev.lengths >= n)))
    else:
        n_eval_dirty = 0

    contaminated = [i for i, r in enumerate(reason) if r is not None]
    bad = set(contaminated)
    clean_rows = [row for i, row in enumerate(data) if i not in bad]
    from whileai_core.rowlist import RowList

    clean = RowList(clean_rows)
    for attr in ("system_prompt", "tools"):
        value = getattr(rows, attr, None)
        if value is not None and not callable(value):
            setattr(clean, attr, value)
    return DecontaminationReport(
        n=n_rows, n_kept=len(clean), n_contaminated=len(contaminated),
        n_same_task=reason.count("same_task"), n_exact=reason.count("exact"), n_near=reason.count("near"),
        n_eval_rows=n_eval_rows, n_eval_texts=len(eval_texts), n_eval_dirty=n_eval_dirty, ngram=n,
        overlap=overlap, fields=field_list, contaminated=contaminated,
        examples=[detail[i] for i in contaminated if i in detail][:examples], rules_skipped=rules_skipped,
        notes=notes, clean=clean, coverage=[float(c) for c in best_cov], n_semantic=reason.count("semantic"),
        similarity=similarity if embed else None, calibration=calibration,
    )


