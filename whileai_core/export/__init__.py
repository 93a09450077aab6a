"""Trainer-ready JSONL from rows: the writer (``writer.export``, ``wai.export``, ``RowList.export``) and the export
formats and TRL's SFT shapes it writes (``formats``). It reads only the ground floor (and ``hub`` for
``push_to=``), so ``RowList`` on the ground floor can export itself without reaching up into ``train``."""
